package wsmantest_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestHTTPLevelAnswers(t *testing.T) {
	srv := newBasic(t)
	do := func(method, path, contentType, user, password, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, strings.TrimSuffix(srv.URL(), "/wsman")+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	soapCT := "application/soap+xml;charset=UTF-8"

	resp := do(http.MethodPost, "/wsman", soapCT, srv.User(), "not the password", "<x/>")
	if resp.StatusCode != http.StatusUnauthorized || resp.ContentLength != 0 || !slices.Contains(resp.Header.Values("WWW-Authenticate"), `Basic realm="WSMAN"`) {
		t.Errorf("wrong password: %d, length %d, %v", resp.StatusCode, resp.ContentLength, resp.Header)
	}
	if resp := do(http.MethodPost, "/wsman", soapCT, "", "", "<x/>"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no credentials: %d", resp.StatusCode)
	}
	if resp := do(http.MethodGet, "/wsman", "", srv.User(), srv.Password(), ""); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	if resp := do(http.MethodPost, "/other", soapCT, srv.User(), srv.Password(), ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("other path: %d", resp.StatusCode)
	}
	if resp := do(http.MethodPost, "/wsman", "text/xml", srv.User(), srv.Password(), "<x/>"); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/xml: %d", resp.StatusCode)
	}
	if resp := do(http.MethodPost, "/wsman", soapCT, srv.User(), srv.Password(), "not xml"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("garbage: %d", resp.StatusCode)
	}
	unknown := `<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:a="http://schemas.xmlsoap.org/ws/2004/08/addressing" xmlns:w="http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd"><env:Header><a:Action>http://example.com/Frobnicate</a:Action><w:ResourceURI>http://schemas.microsoft.com/wbem/wsman/1/windows/shell/cmd</w:ResourceURI></env:Header><env:Body/></env:Envelope>`
	req, _ := http.NewRequest(http.MethodPost, srv.URL(), strings.NewReader(unknown))
	req.Header.Set("Content-Type", soapCT)
	req.SetBasicAuth(srv.User(), srv.Password())
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "a:ActionNotSupported") {
		t.Errorf("unknown action: %d %s", r.StatusCode, body)
	}
	if n := len(srv.Requests()); n != 5 { // the GET and the other path are not WS-Management requests
		t.Errorf("%d requests recorded, want 5", n)
	}
}
