//go:build !windows

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// withResolvConf points the probe at a resolv.conf with content for the test.
func withResolvConf(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	old := resolvConfPath
	resolvConfPath = p
	t.Cleanup(func() { resolvConfPath = old })
	return p
}

func TestParseResolvConf(t *testing.T) {
	tests := []struct {
		name, in        string
		servers, search []string
	}{
		{"kubelet's", "search ns1.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n",
			[]string{"10.96.0.10"}, []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local"}},
		{"comments and blanks", "# generated\n\n; old style\nnameserver 10.0.0.1 # primary\nnameserver\tfd00::a\n  nameserver 10.0.0.3\n",
			[]string{"10.0.0.1", "fd00::a", "10.0.0.3"}, nil},
		{"last search wins", "search a.example b.example\nsearch c.example\nnameserver 1.1.1.1\n", []string{"1.1.1.1"}, []string{"c.example"}},
		{"domain after search", "search a.example b.example\ndomain d.example extra\n", nil, []string{"d.example"}},
		{"search after domain", "domain d.example\nsearch s.example\n", nil, []string{"s.example"}},
		{"no newline at the end", "nameserver 9.9.9.9", []string{"9.9.9.9"}, nil},
		{"keyword alone", "nameserver\nsearch\n", nil, nil},
		{"empty", "", nil, nil},
	}
	for _, tt := range tests {
		servers, search, err := parseResolvConf(strings.NewReader(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(servers, tt.servers) || !reflect.DeepEqual(search, tt.search) {
			t.Errorf("%s: servers %q search %q, want %q %q", tt.name, servers, search, tt.servers, tt.search)
		}
	}
}

func TestDNSConfigCLI(t *testing.T) {
	path := withResolvConf(t, "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n")
	code, stdout, stderr := runCLI(t, "", "dnsconfig")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	if strings.Count(stdout, "\n") != 1 || !strings.HasSuffix(stdout, "}\n") {
		t.Errorf("stdout %q, want one JSON line", stdout)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"servers": []any{"10.96.0.10"},
		"search":  []any{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"},
		"source":  path,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("printed %v, want %v", got, want)
	}
}

func TestDNSConfigDefaultPath(t *testing.T) {
	if resolvConfPath != "/etc/resolv.conf" {
		t.Errorf("resolvConfPath = %q, want /etc/resolv.conf", resolvConfPath)
	}
}

func TestDNSConfigEmptyListsAreArrays(t *testing.T) {
	withResolvConf(t, "# nothing configured\n")
	code, stdout, _ := runCLI(t, "", "dnsconfig")
	if code != exitOK || !strings.Contains(stdout, `"servers":[]`) || !strings.Contains(stdout, `"search":[]`) {
		t.Errorf("exit %d stdout %q, want empty arrays, not null", code, stdout)
	}
}

func TestDNSConfigErrors(t *testing.T) {
	path := withResolvConf(t, "")
	os.Remove(path)
	code, stdout, stderr := runCLI(t, "", "dnsconfig")
	if code != exitFailure || stdout != "" || !strings.Contains(stderr, path) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("missing file: exit %d stdout %q stderr %q, want exit 1 and one line naming %s", code, stdout, stderr, path)
	}
	code, stdout, stderr = runCLI(t, "", "dnsconfig", "extra")
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, `unexpected argument "extra"`) {
		t.Errorf("extra argument: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "", "dnsconfig", "--help")
	if code != exitOK || !strings.Contains(stdout, "probe dnsconfig") {
		t.Errorf("--help: exit %d stdout %q", code, stdout)
	}
}
