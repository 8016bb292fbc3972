package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/winconform/winconform/internal/redact"
)

// TestCredentialInURLRefused: a password inside a URL, in any string field
// of any file, is refused at load naming the field and the fix, and the
// message never holds the password.
func TestCredentialInURLRefused(t *testing.T) {
	const pw = "s3cretPassw0rd"
	for _, c := range []struct{ name, endpoint string }{
		{"libvirt over ssh", "qemu+ssh://root:" + pw + "@kvm.lab/system"},
		{"vSphere URL", "https://admin:" + pw + "@vcenter.lab/sdk"},
		{"no scheme", "admin:" + pw + "@vcenter.lab"},
		{"query", "qemu+ssh://root@kvm.lab/system?password=" + pw},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := "provider: libvirt\nconnection:\n  endpoint: \"" + c.endpoint + "\"\n"
			_, err := Parse[Machines]("vms.yaml", []byte(doc), func(string) (string, bool) { return "", false })
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, "connection.endpoint: holds a password inside a URL") || !strings.Contains(msg, "{env: VARIABLE} or {file: PATH}") {
				t.Errorf("%s", msg)
			}
			if strings.Contains(msg, pw) {
				t.Errorf("the message holds the password: %s", msg)
			}
		})
	}
	for _, ok := range []string{"qemu+ssh://root@kvm.lab/system?keyfile=/k", "qemu:///system", "registry:5000/img@sha256:abc", "https://example.com/containerd.zip"} {
		if credentialInURL(ok) {
			t.Errorf("%q taken for a URL with a credential", ok)
		}
	}
}

// TestLoadedSecretRedacted: a secret loaded from a variable is registered
// with the process's redaction, so an error that quotes it says Mask.
func TestLoadedSecretRedacted(t *testing.T) {
	const pw = "loaded-Secret-9f3a"
	doc := "provider: hyperv\nconnection:\n  endpoint: hv01.lab\n  user: admin\n  credentials:\n    password: {env: HV_PW}\n"
	_, _ = Parse[Machines]("vms.yaml", []byte(doc), func(k string) (string, bool) { return pw, k == "HV_PW" })
	if got := redact.String("dial: auth " + pw + " refused"); strings.Contains(got, pw) || !strings.Contains(got, redact.Mask) {
		t.Errorf("%q", got)
	}
}

// TestSecretFromAFileRedacted: a secret read from a file (mode 0600) is
// registered with the process's redaction as one from a variable is.
func TestSecretFromAFileRedacted(t *testing.T) {
	const pw = "file-Secret-77c1e0"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := "provider: hyperv\nconnection:\n  endpoint: hv01.lab\n  user: admin\n  credentials:\n    password: {file: pw}\n"
	if err := os.WriteFile(filepath.Join(dir, "vms.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _ = Load[Machines](filepath.Join(dir, "vms.yaml"), nil) // the file's other problems do not matter here
	if got := redact.String("winrm: " + pw + " refused"); strings.Contains(got, pw) {
		t.Errorf("%q", got)
	}
}
