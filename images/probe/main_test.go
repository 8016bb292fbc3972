package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runCLI runs the command line in-process and returns its exit status,
// stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string // in the one line on stderr
	}{
		{nil, "missing subcommand"},
		{[]string{"explode"}, `unknown subcommand "explode"`},
		{[]string{"connect", "--bogus", "tcp://10.0.0.1:80"}, "flag provided but not defined: -bogus"},
		{[]string{"connect", "tcp://10.0.0.1:80", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"connect"}, "no targets given"},
		{[]string{"connect", "--timeout", "soon", "tcp://10.0.0.1:80"}, `invalid value "soon" for flag -timeout`},
		{[]string{"connect", "--timeout", "0s", "tcp://10.0.0.1:80"}, "--timeout 0s"},
		{[]string{"connect", "--parallel", "0", "tcp://10.0.0.1:80"}, "--parallel 0"},
		{[]string{"connect", "--attempts", "0", "tcp://10.0.0.1:80"}, "--attempts 0"},
		{[]string{"connect", "-", "tcp://10.0.0.1:80"}, "must be the only target"},
		{[]string{"serve", "--http-port", "70000"}, "--http-port 70000"},
		{[]string{"serve", "--http-port", "0", "--tcp-port", "0", "--udp-port", "0"}, "nothing to serve"},
		{[]string{"serve", "--colour"}, "flag provided but not defined: -colour"},
		{[]string{"serve", "extra"}, `unexpected argument "extra"`},
		{[]string{"version", "--long"}, `unexpected argument "--long"`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(t, "", tt.args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d", tt.args, code, exitUsage)
		}
		if stdout != "" {
			t.Errorf("%q: wrote %q to stdout", tt.args, stdout)
		}
		if !strings.Contains(stderr, tt.wantErr) || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "probe") {
			t.Errorf("%q: stderr %q, want one line naming %q", tt.args, stderr, tt.wantErr)
		}
	}
}

func TestBadStdinIsUsageError(t *testing.T) {
	code, stdout, stderr := runCLI(t, `{"not": "an array"}`, "connect", "-")
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "JSON array") {
		t.Errorf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"connect", "-h"}, {"serve", "--help"}} {
		code, stdout, stderr := runCLI(t, "", args...)
		if code != exitOK || !strings.Contains(stdout, "probe connect [--timeout 5s]") || stderr != "" {
			t.Errorf("%q: exit %d stdout %q stderr %q", args, code, stdout, stderr)
		}
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runCLI(t, "", "version")
	if code != exitOK || stdout != version+"\n" || version != "dev" {
		t.Errorf("exit %d stdout %q (version %q)", code, stdout, version)
	}
}

func TestParseConnectArgs(t *testing.T) {
	opts, targets, err := parseConnectArgs([]string{
		"tcp://a:1", "--timeout=750ms", "udp://b:2", "-parallel", "3", "--attempts", "2", "--", "--not-a-flag",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.timeout != 750*time.Millisecond || opts.parallel != 3 || opts.attempts != 2 || opts.retryDelay != defaultRetryDelay {
		t.Errorf("options %+v", opts)
	}
	if want := []string{"tcp://a:1", "udp://b:2", "--not-a-flag"}; strings.Join(targets, " ") != strings.Join(want, " ") {
		t.Errorf("targets %q, want %q", targets, want)
	}

	opts, targets, err = parseConnectArgs([]string{"dns://x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.timeout != 5*time.Second || opts.parallel != 8 || opts.attempts != 1 || len(targets) != 1 {
		t.Errorf("defaults: %+v %q", opts, targets)
	}
}

// TestConnectCLI runs "probe connect -" end to end against an in-process
// server, reading the targets from stdin.
func TestConnectCLI(t *testing.T) {
	ts := startTestServer(t, "cli")
	targets := []string{
		"http://" + ts.httpAddr + "/json",
		"not-a-target",
		"tcp://" + closedPort(t, "tcp"),
		"tcp://" + ts.tcpAddr,
	}
	in, _ := json.Marshal(targets)
	code, stdout, stderr := runCLI(t, string(in), "connect", "--parallel", "4", "--timeout", "2s", "-")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != len(targets) {
		t.Fatalf("%d lines for %d targets:\n%s", len(lines), len(targets), stdout)
	}
	wantClasses := []string{"", classInvalidTarget, classRefused, ""}
	for i, line := range lines {
		var fields map[string]any
		if err := json.Unmarshal([]byte(line), &fields); err != nil {
			t.Fatalf("line %d %q: %v", i, line, err)
		}
		for _, key := range []string{"index", "target", "ok", "latencyMs", "errorClass", "error", "attempts", "detail"} {
			if _, ok := fields[key]; !ok {
				t.Errorf("line %d lacks %q: %s", i, key, line)
			}
		}
		if fields["index"] != float64(i) || fields["target"] != targets[i] || fields["errorClass"] != wantClasses[i] ||
			fields["ok"] != (wantClasses[i] == "") {
			t.Errorf("line %d: %s", i, line)
		}
	}
	if !strings.Contains(lines[0], `"podIP":"10.9.8.7"`) || !strings.Contains(lines[0], `"name":"cli"`) {
		t.Errorf("the /json line lacks the server's identity: %s", lines[0])
	}
}

func TestConnectCLIArgsAndEmptyStdin(t *testing.T) {
	code, stdout, _ := runCLI(t, "[]", "connect", "-")
	if code != exitOK || stdout != "" {
		t.Errorf("empty array: exit %d stdout %q", code, stdout)
	}
	code, stdout, _ = runCLI(t, "", "connect", "bogus", "--attempts", "2", "tcp://")
	if code != exitOK || strings.Count(stdout, "\n") != 2 ||
		!strings.Contains(stdout, `{"index":0,"target":"bogus","ok":false,"latencyMs":0,"errorClass":"invalid-target"`) ||
		!strings.Contains(stdout, `"attempts":0,"detail":{}}`) {
		t.Errorf("exit %d stdout %q", code, stdout)
	}
}

// TestServeCLI runs "probe serve" until its context ends.
func TestServeCLI(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdout := &syncBuffer{}
	var stderr bytes.Buffer
	exited := make(chan int)
	go func() {
		exited <- run(ctx, []string{"serve", "--http-port", port, "--tcp-port", "0", "--udp-port", "0", "--name", "cli"}, nil, stdout, &stderr)
	}()

	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get("http://127.0.0.1:" + port + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case code := <-exited:
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never answered: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(stdout.String(), "serving as cli") || !strings.Contains(stdout.String(), "http=") || !strings.Contains(stdout.String(), ":"+port) {
		t.Errorf("startup line missing: %q", stdout.String())
	}
	cancel()
	select {
	case code := <-exited:
		if code != exitOK {
			t.Errorf("exit %d, stderr %q", code, stderr.String())
		}
	case <-time.After(3 * time.Second):
		t.Fatal("serve did not exit after its context ended")
	}
	if !strings.Contains(stdout.String(), "/healthz from 127.0.0.1\n< 200\n") {
		t.Errorf("request not logged: %q", stdout.String())
	}
}
