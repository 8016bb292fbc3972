package kubefile

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/winconform/winconform/internal/userfile"
)

const sample = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.crt}
users:
- name: u
  user: {token: t0ken}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`

// TestRESTIsBuildConfigFromFlags: read through the door, a kubeconfig
// gives the client configuration client-go's own loading from the path
// gives, its relative paths made absolute from the file's directory.
func TestRESTIsBuildConfigFromFlags(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(p, []byte(sample), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("not checked here"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := REST("--kubeconfig", p)
	if err != nil {
		t.Fatal(err)
	}
	want, err := clientcmd.BuildConfigFromFlags("", p)
	if err != nil {
		t.Fatal(err)
	}
	if got.CAFile != filepath.Join(dir, "ca.crt") {
		t.Errorf("CAFile = %q, want it from the file's directory", got.CAFile)
	}
	if got.Host != want.Host || got.CAFile != want.CAFile || got.BearerToken != want.BearerToken {
		t.Errorf("REST = %+v\nBuildConfigFromFlags = %+v", got, want)
	}
	cfg, err := Load("--kubeconfig", p)
	if err != nil {
		t.Fatal(err)
	}
	old, err := clientcmd.LoadFromFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.ResolveLocalPaths(old); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, old) {
		t.Errorf("Load = %+v\nLoadFromFile = %+v", cfg, old)
	}
}

// TestRefused: what is no kubeconfig is an error naming the flag, the path
// and the fix, and a device is never read.
func TestRefused(t *testing.T) {
	dir := t.TempDir()
	notYAML := filepath.Join(dir, "notyaml")
	if err := os.WriteFile(notYAML, []byte("\x00\x01{{{"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		filepath.Join(dir, "none"): "does not exist",
		notYAML:                    "is not a kubeconfig",
		dir:                        "is a directory, not a file",
	}
	if runtime.GOOS != "windows" {
		cases["/dev/zero"] = "is a character device, not a file: pass the path of the kubeconfig"
	}
	for path, want := range cases {
		_, err := REST("--kubeconfig", path)
		var e *userfile.Error
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "--kubeconfig "+path+" ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", path, err, want)
		}
	}
	// An empty file is read, and is a kubeconfig of no cluster.
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := REST("--kubeconfig", empty); err == nil || !clientcmd.IsEmptyConfig(err) {
		t.Errorf("an empty kubeconfig: %v; want client-go's empty configuration", err)
	}
}

// TestClients: the one way from a kubeconfig file to a clientset keeps
// REST's reading (the door's refusals, naming the origin) and bounds each
// request by the timeout asked for.
func TestClients(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(p, []byte(sample), 0o600); err != nil {
		t.Fatal(err)
	}
	ca, _, err := certutil.GenerateSelfSignedCertKey("api.test", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, cs, err := Clients("--kubeconfig", p, 7*time.Second)
	if err != nil || cs == nil || cfg.Timeout != 7*time.Second {
		t.Fatalf("Clients = %+v, %v, %v", cfg, cs, err)
	}
	want, _ := REST("--kubeconfig", p)
	if cfg.Host != want.Host {
		t.Errorf("host %q, want REST's %q", cfg.Host, want.Host)
	}
	if _, _, err := Clients("--kubeconfig", "/dev/zero", time.Second); err == nil || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Errorf("a device: %v, want a refusal naming --kubeconfig", err)
	}
}
