package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

// maxFileUpload bounds the body of POST /file.
const maxFileUpload = 16 << 20

// info is the body of GET /json. The connect command decodes it too, to
// report which server answered.
type info struct {
	Hostname    string         `json:"hostname"`
	PodIP       string         `json:"podIP"`
	Caller      string         `json:"caller"`
	CallerCount int            `json:"callerCount"`
	Counts      map[string]int `json:"counts"`
	Name        string         `json:"name"`
}

// handler routes the probe's HTTP endpoints and logs every request.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.handleRoot)
	mux.HandleFunc("GET /json", s.handleJSON)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /env", handleEnv)
	mux.HandleFunc("GET /file", handleReadFile)
	mux.HandleFunc("POST /file", handleWriteFile)
	mux.HandleFunc("POST /exit", s.handleExit)
	return s.logRequests(mux)
}

// handleRoot answers like the Windows web server of the Kubernetes docs: one
// "<p>IP <pod IP> callerCount <n>" line per caller seen so far.
func (s *server) handleRoot(w http.ResponseWriter, r *http.Request) {
	_, counts := s.countCaller(callerIP(r))
	var b strings.Builder
	b.WriteString("<html><body><H1>winconform probe web server</H1>\n")
	fmt.Fprintf(&b, "<p>hostname %s\n", html.EscapeString(s.hostname))
	callers := make([]string, 0, len(counts))
	for ip := range counts {
		callers = append(callers, ip)
	}
	slices.Sort(callers)
	for _, ip := range callers {
		fmt.Fprintf(&b, "<p>IP %s callerCount %d\n", html.EscapeString(s.podIP), counts[ip])
	}
	b.WriteString("</body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, b.String())
}

func (s *server) handleJSON(w http.ResponseWriter, r *http.Request) {
	caller := callerIP(r)
	n, counts := s.countCaller(caller)
	body, err := json.Marshal(info{
		Hostname:    s.hostname,
		PodIP:       s.podIP,
		Caller:      caller,
		CallerCount: n,
		Counts:      counts,
		Name:        s.name,
	})
	if err != nil {
		writeText(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(body, '\n'))
}

// handleEnv answers the value of the environment variable ?name=, 404 when
// it is unset.
func handleEnv(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if name == "" {
		writeText(w, http.StatusBadRequest, "missing ?name=")
		return
	}
	v, ok := os.LookupEnv(name)
	if !ok {
		writeText(w, http.StatusNotFound, name+" is not set")
		return
	}
	writeText(w, http.StatusOK, v)
}

// handleReadFile answers the content of the file ?path=: 404 when it does not
// exist, 403 when it may not be read, 400 for a directory.
func handleReadFile(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Query().Get("path")
	if path == "" {
		writeText(w, http.StatusBadRequest, "missing ?path=")
		return
	}
	f, err := os.Open(path)
	if err != nil {
		writeText(w, fileErrorStatus(err), err.Error())
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		writeText(w, fileErrorStatus(err), err.Error())
		return
	}
	if st.IsDir() {
		writeText(w, http.StatusBadRequest, path+" is a directory")
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	io.Copy(w, f)
}

func fileErrorStatus(err error) int {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound
	case errors.Is(err, fs.ErrPermission):
		return http.StatusForbidden
	default:
		return http.StatusInternalServerError
	}
}

// handleWriteFile writes the request body to the file ?path=, answering 403
// with the OS error text when that fails (e.g. on a read-only mount).
func handleWriteFile(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Query().Get("path")
	if path == "" {
		writeText(w, http.StatusBadRequest, "missing ?path=")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFileUpload))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeText(w, http.StatusRequestEntityTooLarge, err.Error())
			return
		}
		writeText(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		writeText(w, http.StatusForbidden, err.Error())
		return
	}
	writeText(w, http.StatusOK, "ok")
}

func writeText(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, text)
}

// callerIP is the host part of the request's remote address.
func callerIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// logRequests writes "> <url> from <caller>" and "< <status>" to the log for
// every request, as the documented Windows web server does on its console.
func (s *server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		s.logf("> http://%s%s from %s\n< %d\n", r.Host, r.URL.RequestURI(), callerIP(r), rec.status)
	})
}

// statusRecorder remembers the status code a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// exitCode is the status the server ends with on POST /exit, so that a test
// can tell a restart it caused from a crash.
const exitCode = 3

// handleExit answers, then ends the process with exitCode: the kubelet
// restarts the container, which lets a test check what survives a restart.
func (s *server) handleExit(w http.ResponseWriter, _ *http.Request) {
	writeText(w, http.StatusOK, "exiting")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	go func() {
		time.Sleep(100 * time.Millisecond) // let the answer reach the client
		s.exit(exitCode)
	}()
}
