// Package nodelogs reads a node's service logs (the kubelet's, the
// container runtime's) through the API server's node proxy: the node log
// query, /api/v1/nodes/NAME/proxy/logs/?query=SERVICE, GA and on by default
// in the kubelet from Kubernetes 1.36 (a beta feature gate before), served
// where the kubelet's configuration sets enableSystemLogHandler and
// enableSystemLogQuery. It needs no shell on the node and no WinRM.
//
// What the kubelet does with a query decides how it is read
// (k8s.io/kubernetes v1.37.2, pkg/kubelet/kubelet_server_journal.go and
// pkg/kubelet/kubelet.go):
//
//   - a service with a native logger (journald on Linux, the event log on
//     Windows) is read by the node between sinceTime and untilTime;
//   - a service that logs to a file under /var/log (C:\var\log on Windows,
//     where kube-log-runner writes the kubelet's log) is served whole, and a
//     query that gives options for it gets only the line "options present
//     and query resolved to log files": Fetch asks again without options,
//     and keeps the lines of the window itself, by their klog or logrus
//     timestamps;
//   - with enableSystemLogQuery off the kubelet serves /var/log's files
//     instead (a directory listing), with enableSystemLogHandler off it
//     answers 405; without nodes/proxy the API server answers 403. Each is
//     an *Unserved error saying what to set.
//
// Every read is bounded: Query.MaxBytes caps what is written (the stream is
// closed there), and the context bounds the time (the kubelet gives each
// query 30 s of its own).
package nodelogs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// DefaultMaxBytes is the cap of one service's log in a bundle.
const DefaultMaxBytes = 4 << 20

// Query asks a node for one service's log in a window.
type Query struct {
	// Service is the service's name: kubelet, containerd.
	Service string
	// Since and Until bound the window (both set).
	Since, Until time.Time
	// MaxBytes caps what is written (DefaultMaxBytes when 0).
	MaxBytes int64
}

// Result says how a log was read.
type Result struct {
	// FileBacked says the node served the service's log file whole and
	// the window was cut here.
	FileBacked bool
	// Bytes is how much was written; Truncated, that the cap stopped it.
	Bytes     int64
	Truncated bool
}

// Unserved is a node that does not serve the query: why, and what to set.
type Unserved struct {
	Node, Why, Fix string
}

func (e *Unserved) Error() string {
	return fmt.Sprintf("node %s serves no log query: %s; %s", e.Node, e.Why, e.Fix)
}

// The kubelet's answers Fetch recognises (kubelet_server_journal.go).
const (
	fileWithOptions = "options present and query resolved to log files"
	notFound        = "log not found for "
	noJournal       = "error: journal output not available"
)

// fixQuery is what a node needs to serve log queries.
const fixQuery = "set enableSystemLogHandler: true and enableSystemLogQuery: true in its KubeletConfiguration (and featureGates NodeLogQuery: true before Kubernetes 1.36)"

// Fetch writes node's log of q.Service in q's window to w, through rc (the
// core/v1 REST client of a clientset).
func Fetch(ctx context.Context, rc rest.Interface, node string, q Query, w io.Writer) (Result, error) {
	if q.MaxBytes <= 0 {
		q.MaxBytes = DefaultMaxBytes
	}
	if c, ok := rc.(*rest.RESTClient); rc == nil || ok && c == nil {
		return Result{}, fmt.Errorf("node %s: no REST client to ask its kubelet", node)
	}
	body, err := open(ctx, rc, node, url.Values{
		"query":     {q.Service},
		"sinceTime": {q.Since.UTC().Format(time.RFC3339)},
		"untilTime": {q.Until.UTC().Format(time.RFC3339)},
	})
	if err != nil {
		return Result{}, err
	}
	br := bufio.NewReaderSize(body, 4096)
	head, _ := br.Peek(512)
	switch answer := string(bytes.TrimSpace(head)); {
	case strings.HasPrefix(answer, fileWithOptions):
		body.Close()
		body, err = open(ctx, rc, node, url.Values{"query": {q.Service}})
		if err != nil {
			return Result{FileBacked: true}, err
		}
		defer body.Close()
		res, err := cut(body, w, q)
		res.FileBacked = true
		return res, err
	case strings.HasPrefix(strings.ToLower(answer), "<!doctype html") || strings.HasPrefix(answer, "<pre>"):
		body.Close()
		return Result{}, &Unserved{Node: node, Why: "its kubelet serves the files of its log directory but no queries (enableSystemLogQuery off)", Fix: fixQuery}
	case len(head) < 512 && (strings.HasPrefix(answer, notFound) || strings.HasPrefix(answer, noJournal)):
		body.Close()
		return Result{}, fmt.Errorf("node %s has no log of %s: %s", node, q.Service, answer)
	}
	defer body.Close()
	return capped(br, w, q.MaxBytes)
}

// open asks node's kubelet for its logs with query.
func open(ctx context.Context, rc rest.Interface, node string, query url.Values) (io.ReadCloser, error) {
	uri := "/api/v1/nodes/" + url.PathEscape(node) + "/proxy/logs/?" + query.Encode()
	body, err := rc.Get().RequestURI(uri).Stream(ctx)
	if err == nil {
		return body, nil
	}
	switch {
	case apierrors.IsForbidden(err):
		return nil, &Unserved{Node: node, Why: "the run's identity may not get nodes/proxy", Fix: "grant it get on the resource nodes/proxy (a ClusterRole rule), or run with an identity that has it"}
	case apierrors.IsMethodNotSupported(err) || strings.Contains(err.Error(), "logs endpoint is disabled"):
		return nil, &Unserved{Node: node, Why: "its kubelet's log endpoint is off (enableSystemLogHandler false)", Fix: fixQuery}
	}
	return nil, fmt.Errorf("node %s: log query: %w", node, err)
}

// capped copies r to w up to max bytes.
func capped(r io.Reader, w io.Writer, max int64) (Result, error) {
	n, err := io.Copy(w, io.LimitReader(r, max))
	res := Result{Bytes: n}
	if err != nil {
		return res, err
	}
	if n == max {
		var one [1]byte
		if k, _ := r.Read(one[:]); k > 0 {
			res.Truncated = true
		}
	}
	return res, nil
}

// cut copies the lines of r within q's window to w, up to q.MaxBytes: a
// line takes its time from its klog or logrus header; a line without one
// (a continuation) goes with the line before it. It stops at the first
// line after the window: a log file is written in time order.
func cut(r io.Reader, w io.Writer, q Query) (Result, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var res Result
	keep := false
	for sc.Scan() {
		line := sc.Bytes()
		if t, ok := LineTime(string(line), q.Until); ok {
			if t.After(q.Until) {
				return res, nil
			}
			keep = !t.Before(q.Since)
		}
		if !keep {
			continue
		}
		if res.Bytes+int64(len(line))+1 > q.MaxBytes {
			res.Truncated = true
			return res, nil
		}
		n, err := fmt.Fprintf(w, "%s\n", line)
		res.Bytes += int64(n)
		if err != nil {
			return res, err
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return res, err
	}
	return res, nil
}

var (
	// klog's header: Lmmdd hh:mm:ss.uuuuuu (k8s.io/klog/v2, formatHeader).
	klogHeader = regexp.MustCompile(`^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6}) `)
	// logrus's text format: time="RFC3339Nano" (containerd's default).
	logrusTime = regexp.MustCompile(`^time="([^"]+)"`)
)

// LineTime is the time a log line's header gives, if it has one. klog's
// header has no year and is in the node's local time (UTC on the nodes
// the harness makes): the year is near's, or the one before when the
// date would be more than a day after near.
func LineTime(line string, near time.Time) (time.Time, bool) {
	if m := logrusTime.FindStringSubmatch(line); m != nil {
		t, err := time.Parse(time.RFC3339Nano, m[1])
		return t, err == nil
	}
	m := klogHeader.FindStringSubmatch(line)
	if m == nil {
		return time.Time{}, false
	}
	var v [6]int
	for i := range v {
		fmt.Sscanf(m[i+1], "%d", &v[i])
	}
	if v[0] < 1 || v[0] > 12 || v[1] < 1 || v[1] > 31 {
		return time.Time{}, false
	}
	near = near.UTC()
	t := time.Date(near.Year(), time.Month(v[0]), v[1], v[2], v[3], v[4], v[5]*1000, time.UTC)
	if t.After(near.Add(24 * time.Hour)) {
		t = t.AddDate(-1, 0, 0)
	}
	return t, true
}
