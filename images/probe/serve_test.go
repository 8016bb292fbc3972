package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

func httpGet(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body), resp.Header
}

func httpPost(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/octet-stream", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// serveRequest runs one request from remoteAddr through the server's handler.
func serveRequest(s *server, method, target, remoteAddr string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	req.RemoteAddr = remoteAddr
	rec := httptest.NewRecorder()
	s.handler().ServeHTTP(rec, req)
	return rec
}

func TestJSONCountsPerCaller(t *testing.T) {
	t.Setenv("POD_IP", "10.9.8.7")
	s := newServer("web-1", io.Discard)
	calls := []struct {
		remote    string
		wantCount int
	}{
		{"10.0.0.1:40000", 1},
		{"10.0.0.2:40000", 1},
		{"10.0.0.1:40001", 2}, // same caller, other source port
		{"[fd00::5]:1234", 1},
		{"10.0.0.1:40002", 3},
	}
	var last info
	for _, c := range calls {
		rec := serveRequest(s, "GET", "/json", c.remote)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /json from %s: status %d", c.remote, rec.Code)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q, want application/json", ct)
		}
		last = info{}
		if err := json.Unmarshal(rec.Body.Bytes(), &last); err != nil {
			t.Fatalf("decoding %q: %v", rec.Body, err)
		}
		host, _, _ := net.SplitHostPort(c.remote)
		if last.Caller != host || last.CallerCount != c.wantCount {
			t.Errorf("from %s: caller %q callerCount %d, want %q %d", c.remote, last.Caller, last.CallerCount, host, c.wantCount)
		}
	}
	hostname, _ := os.Hostname()
	if last.Hostname != hostname || last.PodIP != "10.9.8.7" || last.Name != "web-1" {
		t.Errorf("hostname %q podIP %q name %q, want %q 10.9.8.7 web-1", last.Hostname, last.PodIP, last.Name, hostname)
	}
	want := map[string]int{"10.0.0.1": 3, "10.0.0.2": 1, "fd00::5": 1}
	if len(last.Counts) != len(want) {
		t.Errorf("counts = %v, want %v", last.Counts, want)
	}
	for ip, n := range want {
		if last.Counts[ip] != n {
			t.Errorf("counts[%s] = %d, want %d (counts %v)", ip, last.Counts[ip], n, last.Counts)
		}
	}
}

func TestNameDefaultsToHostname(t *testing.T) {
	hostname, _ := os.Hostname()
	if s := newServer("", io.Discard); s.name != hostname {
		t.Errorf("name = %q, want the hostname %q", s.name, hostname)
	}
}

func TestRootPageListsCallers(t *testing.T) {
	t.Setenv("POD_IP", "10.9.8.7")
	s := newServer("", io.Discard)
	serveRequest(s, "GET", "/", "10.0.0.1:1")
	serveRequest(s, "GET", "/json", "10.0.0.2:1")
	rec := serveRequest(s, "GET", "/", "10.0.0.1:2")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	body := rec.Body.String()
	if !strings.HasPrefix(body, "<html><body><H1>winconform probe web server</H1>") {
		t.Errorf("page does not start with the header:\n%s", body)
	}
	if !strings.HasSuffix(body, "</body></html>\n") {
		t.Errorf("page does not end with </body></html>:\n%s", body)
	}
	hostname, _ := os.Hostname()
	if !strings.Contains(body, "<p>hostname "+hostname+"\n") {
		t.Errorf("page lacks the hostname %q:\n%s", hostname, body)
	}
	lines := regexp.MustCompile(`<p>IP (\S+) callerCount (\d+)`).FindAllStringSubmatch(body, -1)
	// Callers sorted by IP: 10.0.0.1 called twice, 10.0.0.2 once.
	if len(lines) != 2 || lines[0][1] != "10.9.8.7" || lines[0][2] != "2" || lines[1][1] != "10.9.8.7" || lines[1][2] != "1" {
		t.Errorf("caller lines = %q, want pod IP 10.9.8.7 with counts 2 then 1; page:\n%s", lines, body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type = %q", ct)
	}
}

func TestUnknownPathAndMethod(t *testing.T) {
	s := newServer("", io.Discard)
	if rec := serveRequest(s, "GET", "/nope", "10.0.0.1:1"); rec.Code != http.StatusNotFound {
		t.Errorf("GET /nope: status %d, want 404", rec.Code)
	}
	if rec := serveRequest(s, "DELETE", "/json", "10.0.0.1:1"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE /json: status %d, want 405", rec.Code)
	}
	// Neither counts as a caller.
	if len(s.counts) != 0 {
		t.Errorf("counts = %v, want none", s.counts)
	}
}

func TestServeHTTPOverLoopback(t *testing.T) {
	ts := startTestServer(t, "probe-a")
	base := "http://" + ts.httpAddr

	code, body, _ := httpGet(t, base+"/healthz")
	if code != http.StatusOK || body != "ok" {
		t.Errorf("/healthz: %d %q, want 200 ok", code, body)
	}
	for want := 1; want <= 3; want++ {
		code, body, _ := httpGet(t, base+"/json")
		var in info
		if err := json.Unmarshal([]byte(body), &in); err != nil || code != http.StatusOK {
			t.Fatalf("/json: %d %q %v", code, body, err)
		}
		if in.Caller != "127.0.0.1" || in.CallerCount != want || in.PodIP != "10.9.8.7" || in.Name != "probe-a" {
			t.Errorf("/json call %d: %+v", want, in)
		}
	}
	// The log shows each request and its status, as kubectl logs will.
	log := ts.log.String()
	for _, want := range []string{
		"> http://" + ts.httpAddr + "/healthz from 127.0.0.1\n< 200\n",
		"> http://" + ts.httpAddr + "/json from 127.0.0.1\n< 200\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	code, _, _ = httpGet(t, base+"/missing")
	if code != http.StatusNotFound {
		t.Errorf("/missing: %d, want 404", code)
	}
	if want := "> http://" + ts.httpAddr + "/missing from 127.0.0.1\n< 404\n"; !strings.Contains(ts.log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, ts.log.String())
	}
}

// TestCallerCountPerSourceIP calls from two loopback source addresses; Linux
// routes all of 127.0.0.0/8 to lo, other systems may not.
func TestCallerCountPerSourceIP(t *testing.T) {
	ts := startTestServer(t, "")
	getFrom := func(src string) info {
		t.Helper()
		client := &http.Client{Transport: &http.Transport{
			DialContext:       (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}).DialContext,
			DisableKeepAlives: true,
		}}
		resp, err := client.Get("http://" + ts.httpAddr + "/json")
		if err != nil {
			if src != "127.0.0.1" {
				t.Skipf("cannot call from %s: %v", src, err)
			}
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var in info
		if err := json.NewDecoder(resp.Body).Decode(&in); err != nil {
			t.Fatal(err)
		}
		return in
	}
	if in := getFrom("127.0.0.1"); in.CallerCount != 1 {
		t.Errorf("first call from 127.0.0.1: callerCount %d", in.CallerCount)
	}
	if in := getFrom("127.0.0.2"); in.Caller != "127.0.0.2" || in.CallerCount != 1 {
		t.Errorf("first call from 127.0.0.2: caller %q callerCount %d", in.Caller, in.CallerCount)
	}
	in := getFrom("127.0.0.1")
	if in.CallerCount != 2 || in.Counts["127.0.0.1"] != 2 || in.Counts["127.0.0.2"] != 1 {
		t.Errorf("second call from 127.0.0.1: callerCount %d counts %v", in.CallerCount, in.Counts)
	}
}

func TestEnvEndpoint(t *testing.T) {
	ts := startTestServer(t, "")
	t.Setenv("WINCONFORM_PROBE_TEST", "from env = yes")
	code, body, _ := httpGet(t, "http://"+ts.httpAddr+"/env?name=WINCONFORM_PROBE_TEST")
	if code != http.StatusOK || body != "from env = yes" {
		t.Errorf("set var: %d %q", code, body)
	}
	t.Setenv("WINCONFORM_PROBE_EMPTY", "")
	code, body, _ = httpGet(t, "http://"+ts.httpAddr+"/env?name=WINCONFORM_PROBE_EMPTY")
	if code != http.StatusOK || body != "" {
		t.Errorf("empty var: %d %q, want 200 and an empty body", code, body)
	}
	code, _, _ = httpGet(t, "http://"+ts.httpAddr+"/env?name=WINCONFORM_PROBE_UNSET_VARIABLE")
	if code != http.StatusNotFound {
		t.Errorf("unset var: %d, want 404", code)
	}
	code, _, _ = httpGet(t, "http://"+ts.httpAddr+"/env")
	if code != http.StatusBadRequest {
		t.Errorf("no name: %d, want 400", code)
	}
}

func TestFileEndpoint(t *testing.T) {
	ts := startTestServer(t, "")
	dir := t.TempDir()
	fileURL := func(p string) string { return "http://" + ts.httpAddr + "/file?path=" + p }

	existing := filepath.Join(dir, "config.txt")
	if err := os.WriteFile(existing, []byte("key=value\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body, _ := httpGet(t, fileURL(existing)); code != http.StatusOK || body != "key=value\n" {
		t.Errorf("GET existing: %d %q", code, body)
	}
	if code, _, _ := httpGet(t, fileURL(filepath.Join(dir, "absent"))); code != http.StatusNotFound {
		t.Errorf("GET absent: %d, want 404", code)
	}
	if code, _, _ := httpGet(t, fileURL(dir)); code != http.StatusBadRequest {
		t.Errorf("GET directory: %d, want 400", code)
	}

	written := filepath.Join(dir, "written.txt")
	if code, body := httpPost(t, fileURL(written), "hello volume"); code != http.StatusOK {
		t.Errorf("POST: %d %q", code, body)
	}
	if b, err := os.ReadFile(written); err != nil || string(b) != "hello volume" {
		t.Errorf("after POST the file holds %q (%v)", b, err)
	}
	if code, body, _ := httpGet(t, fileURL(written)); code != http.StatusOK || body != "hello volume" {
		t.Errorf("GET after POST: %d %q", code, body)
	}

	// A path below a regular file cannot be written, whoever we are.
	underFile := filepath.Join(existing, "child.txt")
	code, body := httpPost(t, fileURL(underFile), "x")
	if code != http.StatusForbidden {
		t.Errorf("POST below a regular file: %d %q, want 403", code, body)
	}
	if !strings.Contains(body, underFile) {
		t.Errorf("POST below a regular file: body %q does not carry the OS error about %s", body, underFile)
	}
}

func TestFileWriteInReadOnlyDirectory(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("directory permissions do not stop root or Windows users")
	}
	ts := startTestServer(t, "")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	code, body := httpPost(t, "http://"+ts.httpAddr+"/file?path="+filepath.Join(dir, "f"), "x")
	if code != http.StatusForbidden || !strings.Contains(body, "permission denied") {
		t.Errorf("POST in a read-only directory: %d %q, want 403 with permission denied", code, body)
	}
}

func TestTCPEcho(t *testing.T) {
	ts := startTestServer(t, "")
	c, err := net.DialTimeout("tcp", ts.tcpAddr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	payload := strings.Repeat("echo me ", 10000) // several segments
	go func() {
		io.WriteString(c, payload)
		c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != payload {
		t.Errorf("echoed %d bytes, want the %d sent", len(got), len(payload))
	}
}

func TestUDPEcho(t *testing.T) {
	ts := startTestServer(t, "")
	c, err := net.Dial("udp", ts.udpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	for _, msg := range []string{"one", "two"} {
		if _, err := io.WriteString(c, msg); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 100)
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if string(buf[:n]) != msg {
			t.Errorf("echoed %q, want %q", buf[:n], msg)
		}
	}
}

// TestStopClosesEchoConnections checks that stop does not wait for idle
// TCP echo clients.
func TestStopClosesEchoConnections(t *testing.T) {
	tcpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	run := newServer("", io.Discard).start(listeners{tcp: tcpLn})
	c, err := net.Dial("tcp", tcpLn.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A round trip proves the server has accepted the connection.
	c.SetDeadline(time.Now().Add(2 * time.Second))
	io.WriteString(c, "x")
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error)
	go func() { stopped <- run.stop(t.Context()) }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Errorf("stop: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("stop hangs on an open echo connection")
	}
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read after stop: %v, want EOF", err)
	}
}

func TestPodIPFromEnvironment(t *testing.T) {
	t.Setenv("POD_IP", "192.0.2.77")
	if got := podIP(); got != "192.0.2.77" {
		t.Errorf("podIP() = %q", got)
	}
	t.Setenv("POD_IP", "")
	got := podIP()
	if got == "" {
		t.Skip("no non-loopback IPv4 interface here")
	}
	ip := net.ParseIP(got)
	if ip == nil || ip.To4() == nil || ip.IsLoopback() {
		t.Errorf("podIP() = %q, want a non-loopback IPv4 address", got)
	}
}
