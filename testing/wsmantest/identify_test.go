package wsmantest_test

import (
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/winconform/winconform/testing/wsmantest"
)

// knifeIdentify is the request chef/knife-windows sends to tell whether a
// WS-Management endpoint listens (lib/chef/knife/wsman_test.rb,
// post_identity_request): an empty header, the wsmid prefix, no action.
const knifeIdentify = `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:wsmid="http://schemas.dmtf.org/wbem/wsman/identity/1/wsmanidentity.xsd"><s:Header/><s:Body><wsmid:Identify/></s:Body></s:Envelope>`

type identifyAnswer struct {
	Body struct {
		Response *struct {
			ProtocolVersion  string    `xml:"ProtocolVersion"`
			ProductVendor    string    `xml:"ProductVendor"`
			ProductVersion   string    `xml:"ProductVersion"`
			SecurityProfiles *struct{} `xml:"SecurityProfiles"`
		} `xml:"http://schemas.dmtf.org/wbem/wsman/identity/1/wsmanidentity.xsd IdentifyResponse"`
	} `xml:"http://www.w3.org/2003/05/soap-envelope Body"`
}

// The unauthenticated Identify, as Windows answers it: MS-WSMV 3.1.4.1.23
// (supported unauthenticated with "WSMANIDENTIFY: unauthenticated", and
// then without wsmid:SecurityProfiles); the values PowerShell's own tests
// check on Windows for Test-WSMan (PowerShell/PowerShell
// test/powershell/Modules/Microsoft.WSMan.Management/TestWSMan.Tests.ps1)
// and the body chef/knife-windows records from Windows Server 2012 R2
// (spec/unit/knife/wsman_test_spec.rb). Without the header the request is
// refused as any unauthenticated one.
func TestUnauthenticatedIdentify(t *testing.T) {
	for _, tls := range []bool{false, true} {
		var opts []wsmantest.Option
		if tls {
			opts = append(opts, wsmantest.WithTLS())
		}
		srv := wsmantest.New(t, opts...)
		client := &http.Client{}
		if tls {
			client = httpsClient(t, srv)
		}
		post := func(header bool, body string) (*http.Response, string) {
			t.Helper()
			req, _ := http.NewRequest(http.MethodPost, srv.URL(), strings.NewReader(body))
			req.Header.Set("Content-Type", "application/soap+xml; charset=UTF-8")
			if header {
				req.Header.Set("WSMANIDENTIFY", "unauthenticated")
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			return resp, string(data)
		}

		resp, body := post(true, knifeIdentify)
		var a identifyAnswer
		if err := xml.Unmarshal([]byte(body), &a); err != nil || resp.StatusCode != http.StatusOK || a.Body.Response == nil {
			t.Fatalf("https=%v: Identify: %d %q (%v), want 200 and an IdentifyResponse", tls, resp.StatusCode, body, err)
		}
		r := a.Body.Response
		if r.ProtocolVersion != "http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd" || r.ProductVendor != "Microsoft Corporation" ||
			r.ProductVersion != "OS: 0.0.0 SP: 0.0 Stack: 3.0" || r.SecurityProfiles != nil {
			t.Errorf("https=%v: IdentifyResponse %+v", tls, r)
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/soap+xml") {
			t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
		}

		if resp, _ := post(false, knifeIdentify); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("https=%v: Identify without WSMANIDENTIFY: %d, want 401", tls, resp.StatusCode)
		}
		// The header lets Identify through, nothing else.
		create := `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:a="http://schemas.xmlsoap.org/ws/2004/08/addressing"><s:Header><a:Action>http://schemas.xmlsoap.org/ws/2004/09/transfer/Create</a:Action></s:Header><s:Body/></s:Envelope>`
		if resp, _ := post(true, create); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("https=%v: a Create with WSMANIDENTIFY: %d, want 401", tls, resp.StatusCode)
		}
		if n := srv.Count(wsmantest.ActionIdentify); n != 1 {
			t.Errorf("https=%v: %d Identify requests recorded, want 1", tls, n)
		}
	}
}
