package wsmantest

import (
	"encoding/xml"
	"net/http"
	"strings"
)

// The WS-Management identity (DMTF DSP0226 section 11, "Metadata and
// Discovery"): a client asks <wsmid:Identify/> in an envelope with an empty
// header (no action, no addressing) and the service answers
// <wsmid:IdentifyResponse> with its protocol version, vendor and product
// version.
//
// What Windows does, and the server models:
//
//   - MS-WSMV 3.1.4.1.23: the service supports Identify when the request is
//     authenticated, and when it is unauthenticated and carries the HTTP
//     header "WSMANIDENTIFY: unauthenticated"; wsmid:SecurityProfiles MUST
//     NOT be returned to an unauthenticated request. Without the header, an
//     unauthenticated request is refused (401) as any other.
//   - What an unauthenticated Identify answers on Windows: ProtocolVersion
//     http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd, ProductVendor
//     "Microsoft Corporation", ProductVersion "OS: 0.0.0 SP: 0.0 Stack: 3.0"
//     (the OS version hidden): PowerShell/PowerShell
//     test/powershell/Modules/Microsoft.WSMan.Management/TestWSMan.Tests.ps1
//     checks exactly these on Windows for Test-WSMan, whose default is the
//     unauthenticated Identify; chef/knife-windows
//     spec/unit/knife/wsman_test_spec.rb holds the whole body as Windows
//     Server 2012 R2 sends it (an empty s:Header, the wsmid prefix, no
//     SecurityProfiles).
//   - How clients ask: chef/knife-windows lib/chef/knife/wsman_test.rb posts
//     <s:Envelope ...><s:Header/><s:Body><wsmid:Identify/></s:Body></s:Envelope>
//     with "WSMANIDENTIFY: unauthenticated" and Content-Type
//     "application/soap+xml; charset=UTF-8", and takes a 200 with a
//     wsmid:ProtocolVersion as a WS-Management endpoint.
//
// The authenticated Identify (which names the OS version and the security
// profiles) is not modelled: the harness does not send it.

const (
	nsIdentity = "http://schemas.dmtf.org/wbem/wsman/identity/1/wsmanidentity.xsd"

	// ActionIdentify is how Requests records an Identify, which has no
	// action URI.
	ActionIdentify Action = "Identify"

	// IdentifyProductVersion is what Windows answers an unauthenticated
	// Identify for its product version: the OS version zeroed.
	IdentifyProductVersion = "OS: 0.0.0 SP: 0.0 Stack: 3.0"
)

// identifyResponse is the answer to an unauthenticated Identify.
const identifyResponse = `<s:Envelope xmlns:s="` + nsSOAP + `"><s:Header/><s:Body>` +
	`<wsmid:IdentifyResponse xmlns:wsmid="` + nsIdentity + `">` +
	`<wsmid:ProtocolVersion>` + nsWSMan + `</wsmid:ProtocolVersion>` +
	`<wsmid:ProductVendor>Microsoft Corporation</wsmid:ProductVendor>` +
	`<wsmid:ProductVersion>` + IdentifyProductVersion + `</wsmid:ProductVersion>` +
	`</wsmid:IdentifyResponse></s:Body></s:Envelope>`

// identify answers an unauthenticated Identify (no Authorization, the
// WSMANIDENTIFY header, a SOAP envelope whose body is wsmid:Identify) and
// reports whether it did; any other request goes on to authentication.
func (s *Server) identify(w http.ResponseWriter, r *http.Request, data []byte) bool {
	if r.Header.Get("Authorization") != "" ||
		!strings.EqualFold(strings.TrimSpace(r.Header.Get("WSMANIDENTIFY")), "unauthenticated") ||
		!isSOAP(r.Header.Get("Content-Type")) {
		return false
	}
	// Identify has no wsa:Action: parseEnvelope, which wants one, is not
	// for it.
	var env envelope
	if err := xml.Unmarshal(data, &env); err != nil || env.Body.Identify == nil {
		return false
	}
	rec := s.record(&env, authOutcome{}, false)
	s.mu.Lock()
	rec.Action, rec.ActionURI = ActionIdentify, ""
	s.mu.Unlock()
	w.Header().Set("Content-Type", soapContentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(identifyResponse))
	s.finish(rec, outcome{}, http.StatusOK, len(identifyResponse))
	return true
}
