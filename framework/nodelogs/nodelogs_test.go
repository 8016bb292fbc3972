package nodelogs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// kubelet stands in for the node log query as a kubelet of
// k8s.io/kubernetes v1.37.2 answers it through the API server's node proxy:
//
//   - "journal": a native logger; the node keeps the lines between
//     sinceTime and untilTime (kubelet_server_journal_linux.go passes them
//     to journalctl, _windows.go to Get-WinEvent);
//   - "file": a service logging to a file under /var/log: with any option
//     the answer is the line copyForBoot writes, without options the whole
//     file (heuristicsCopyFileLog);
//   - "listing": enableSystemLogQuery off: http.FileServer of /var/log
//     (kubelet.go, logServer), a directory listing for /logs/;
//   - "disabled": enableSystemLogHandler off: 405 "logs endpoint is
//     disabled." (server.go, InstallSystemLogHandler);
//   - "forbidden": the API server refuses nodes/proxy (403, a Status).
type kubelet struct {
	mode  string
	lines []string
	// hang makes the answer never end.
	hang bool
	// asked records the queries.
	asked []string
}

func (k *kubelet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/proxy/logs/") {
		http.Error(w, "no such path "+r.URL.Path, http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	k.asked = append(k.asked, q.Encode())
	switch k.mode {
	case "forbidden":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nodes \"n1\" is forbidden: User \"u\" cannot get resource \"nodes/proxy\"","reason":"Forbidden","code":403}`)
	case "disabled":
		http.Error(w, "logs endpoint is disabled.", http.StatusMethodNotAllowed)
	case "listing":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html>\n<meta name=\"viewport\" content=\"width=device-width\">\n<pre>\n<a href=\"pods/\">pods/</a>\n</pre>\n")
	case "file":
		if q.Has("sinceTime") || q.Has("untilTime") || q.Has("tailLines") || q.Has("pattern") {
			fmt.Fprintf(w, "\noptions present and query resolved to log files for [%s]\ntry without specifying options\n", q.Get("query"))
			return
		}
		for _, l := range k.lines {
			fmt.Fprintln(w, l)
		}
	case "journal":
		since, _ := time.Parse(time.RFC3339, q.Get("sinceTime"))
		until, _ := time.Parse(time.RFC3339, q.Get("untilTime"))
		for _, l := range k.lines {
			if t, ok := LineTime(l, until); ok && (t.Before(since) || t.After(until)) {
				continue
			}
			fmt.Fprintln(w, l)
		}
	}
	if k.hang {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

func client(t *testing.T, k *kubelet) rest.Interface {
	t.Helper()
	srv := httptest.NewServer(k)
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs.CoreV1().RESTClient()
}

// A day of a kubelet's klog lines, one a minute from 08:00, with a
// continuation line after each.
func klogLines() []string {
	var out []string
	for m := 0; m < 60; m++ {
		out = append(out, fmt.Sprintf("I1129 08:%02d:00.000000    1234 kubelet.go:1] line %d", m, m), "  continued "+fmt.Sprint(m))
	}
	return out
}

var (
	since = time.Date(2026, 11, 29, 8, 10, 0, 0, time.UTC)
	until = time.Date(2026, 11, 29, 8, 12, 30, 0, time.UTC)
)

func TestAFileBackedLogIsFetchedWholeAndCutByTime(t *testing.T) {
	k := &kubelet{mode: "file", lines: klogLines()}
	var out bytes.Buffer
	res, err := Fetch(context.Background(), client(t, k), "win-1", Query{Service: "kubelet", Since: since, Until: until}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !res.FileBacked || res.Truncated {
		t.Errorf("result %+v, want file-backed, whole", res)
	}
	want := "I1129 08:10:00.000000    1234 kubelet.go:1] line 10\n  continued 10\nI1129 08:11:00.000000    1234 kubelet.go:1] line 11\n  continued 11\nI1129 08:12:00.000000    1234 kubelet.go:1] line 12\n  continued 12\n"
	if out.String() != want {
		t.Errorf("the window:\n%s\nwant:\n%s", out.String(), want)
	}
	if len(k.asked) != 2 || strings.Contains(k.asked[1], "sinceTime") {
		t.Errorf("queries %q: want one with the window, then one without options", k.asked)
	}
}

func TestAJournalLogIsCutByTheNode(t *testing.T) {
	k := &kubelet{mode: "journal", lines: klogLines()}
	var out bytes.Buffer
	res, err := Fetch(context.Background(), client(t, k), "linux-1", Query{Service: "containerd", Since: since, Until: until}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if res.FileBacked || !strings.Contains(out.String(), "line 11") || strings.Contains(out.String(), "line 13") {
		t.Errorf("result %+v:\n%s", res, out.String())
	}
	if len(k.asked) != 1 || !strings.Contains(k.asked[0], "sinceTime=2026-11-29T08%3A10%3A00Z") || !strings.Contains(k.asked[0], "query=containerd") {
		t.Errorf("queries %q", k.asked)
	}
}

func TestTheCapStopsTheStream(t *testing.T) {
	for _, mode := range []string{"journal", "file"} {
		k := &kubelet{mode: mode, lines: klogLines()}
		var out bytes.Buffer
		res, err := Fetch(context.Background(), client(t, k), "n1", Query{Service: "kubelet", Since: since, Until: until, MaxBytes: 100}, &out)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || out.Len() > 100 || res.Bytes != int64(out.Len()) {
			t.Errorf("%s: result %+v, %d bytes written, want truncated at 100", mode, res, out.Len())
		}
	}
}

func TestANodeThatServesNoQueryIsSaidWithTheFix(t *testing.T) {
	for mode, want := range map[string]string{
		"listing":   "enableSystemLogQuery",
		"disabled":  "enableSystemLogHandler",
		"forbidden": "nodes/proxy",
	} {
		var out bytes.Buffer
		_, err := Fetch(context.Background(), client(t, &kubelet{mode: mode}), "n1", Query{Service: "kubelet", Since: since, Until: until}, &out)
		var un *Unserved
		if !errors.As(err, &un) || !strings.Contains(err.Error(), want) || un.Fix == "" || un.Node != "n1" {
			t.Errorf("%s: %v, want an Unserved naming %s with the fix", mode, err, want)
		}
		if out.Len() > 0 {
			t.Errorf("%s: wrote %q", mode, out.String())
		}
	}
}

func TestAHangingNodeIsBoundedByTheContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	var out bytes.Buffer
	_, _ = Fetch(ctx, client(t, &kubelet{mode: "journal", lines: klogLines(), hang: true}), "n1", Query{Service: "kubelet", Since: since, Until: until}, &out)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Fetch took %s past its context's 500ms", d)
	}
}

func TestLineTime(t *testing.T) {
	near := time.Date(2027, 1, 1, 0, 5, 0, 0, time.UTC)
	for line, want := range map[string]time.Time{
		"I0101 00:04:59.500000 1 x.go:1] a":                                         time.Date(2027, 1, 1, 0, 4, 59, 500000000, time.UTC),
		"E1231 23:59:59.000001 1 x.go:1] last year's":                               time.Date(2026, 12, 31, 23, 59, 59, 1000, time.UTC),
		`time="2026-11-29T08:11:00.123456789Z" level=info msg="containerd started"`: time.Date(2026, 11, 29, 8, 11, 0, 123456789, time.UTC),
	} {
		got, ok := LineTime(line, near)
		if !ok || !got.Equal(want) {
			t.Errorf("LineTime(%q) = %s, %v, want %s", line, got, ok, want)
		}
	}
	for _, line := range []string{"", "  continued", "I1399 00:00:00.000000 bad month", "X1129 08:00:00.000000 not klog"} {
		if _, ok := LineTime(line, near); ok {
			t.Errorf("LineTime(%q) found a time", line)
		}
	}
}
