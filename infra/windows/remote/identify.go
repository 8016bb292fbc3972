package remote

import (
	"context"
	"encoding/xml"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/winconform/winconform/infra/windows/remote/framing"
)

// The WS-Management identity (DMTF DSP0226 section 11): <wsmid:Identify/>
// in an envelope with an empty header, answered by <wsmid:IdentifyResponse>.
// Windows answers it without credentials when the request carries the HTTP
// header "WSMANIDENTIFY: unauthenticated" (MS-WSMV 3.1.4.1.23), as
// Test-WSMan sends it by default; the answer then names no OS version
// ("OS: 0.0.0 SP: 0.0 Stack: 3.0") and no security profiles. The request is
// the one chef/knife-windows sends (lib/chef/knife/wsman_test.rb).
const (
	nsIdentity      = "http://schemas.dmtf.org/wbem/wsman/identity/1/wsmanidentity.xsd"
	identifyRequest = `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:wsmid="` + nsIdentity + `"><s:Header/><s:Body><wsmid:Identify/></s:Body></s:Envelope>`
	// WSManProtocolVersion is the ProtocolVersion of WS-Management 1.x, what
	// Windows answers.
	WSManProtocolVersion = "http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd"
	// identifyTimeout bounds the wait for the answer once connected.
	identifyTimeout = 30 * time.Second
)

// Identification is a WS-Management service's answer to Identify.
type Identification struct {
	// ProtocolVersion is the WS-Management version's URI
	// (WSManProtocolVersion).
	ProtocolVersion string
	// ProductVendor is "Microsoft Corporation" on Windows.
	ProductVendor string
	// ProductVersion is "OS: 0.0.0 SP: 0.0 Stack: 3.0" on Windows when
	// unauthenticated.
	ProductVersion string
}

type identifyEnvelope struct {
	Body struct {
		Response *struct {
			ProtocolVersion string `xml:"ProtocolVersion"`
			ProductVendor   string `xml:"ProductVendor"`
			ProductVersion  string `xml:"ProductVersion"`
		} `xml:"http://schemas.dmtf.org/wbem/wsman/identity/1/wsmanidentity.xsd IdentifyResponse"`
	} `xml:"http://www.w3.org/2003/05/soap-envelope Body"`
}

// Identify asks the machine's WinRM listener what it is, with the
// unauthenticated wsmid:Identify: no credentials are sent. An answer means
// the WS-Management service itself is up, which a port that accepts
// connections does not (a forwarded port accepts long before the guest's
// service answers). It returns a *Error (step "identify") as RunPS does:
// ErrUnreachable, ErrTLS or ErrTimeout when the listener cannot be reached
// or does not answer in time, ErrRemote when it answers other than as
// WS-Management.
func (w *WinRM) Identify(ctx context.Context) (Identification, error) {
	const op = "identifying the WS-Management service (wsmid:Identify, unauthenticated)"
	tr := basicTransport(w.cfg, tlsConfig(w.cfg))
	tr.ResponseHeaderTimeout = identifyTimeout
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, strings.NewReader(identifyRequest))
	if err != nil {
		return Identification{}, w.wrap("identify", op, err)
	}
	req.Header.Set("Content-Type", framing.SOAPType)
	req.Header.Set("WSMANIDENTIFY", "unauthenticated")
	a, _, err := send(req, &http.Client{Transport: tr})
	if err != nil {
		e := w.classify(ctx, err)
		e.Machine, e.Step, e.Op = w.cfg.Name, "identify", op
		return Identification{}, e
	}
	fail := func(format string, args ...any) (Identification, error) {
		e := w.errorf(ErrRemote, errors.New(snippet(a.body)), format, args...)
		e.Machine, e.Step, e.Op = w.cfg.Name, "identify", op
		return Identification{}, e
	}
	if a.status != http.StatusOK {
		if a.status == http.StatusUnauthorized {
			return fail("%s answered HTTP 401 to the unauthenticated Identify (with WSMANIDENTIFY: unauthenticated, which Windows's WinRM answers without credentials): not a Windows WinRM listener, or one behind a proxy that wants credentials", w.url)
		}
		return fail("%s answered HTTP %d %s to Identify, not a WS-Management answer", w.url, a.status, http.StatusText(a.status))
	}
	var env identifyEnvelope
	if err := xml.Unmarshal(a.body, &env); err != nil || env.Body.Response == nil {
		return fail("%s answered Identify with something else than a wsmid:IdentifyResponse (%s)", w.url, snippet(a.body))
	}
	r := env.Body.Response
	id := Identification{ProtocolVersion: strings.TrimSpace(r.ProtocolVersion), ProductVendor: strings.TrimSpace(r.ProductVendor),
		ProductVersion: strings.TrimSpace(r.ProductVersion)}
	if id.ProtocolVersion == "" {
		return fail("%s answered Identify without a ProtocolVersion", w.url)
	}
	return id, nil
}
