package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Throwaway passwords: the tests check that none of them is ever printed.
const (
	passwordA       = "pA55-w0rd-for-win-a!"
	passwordAdmin   = "adm1n-Secr3t-shared"
	passwordFileB   = "f1le-b0rne-Secret"
	passwordInline  = "inl1ne-Secret-value"
	inventoryName   = "inventory.yaml"
	defaultMachine  = "machines[0]."
	validMachineYML = `machines:
- name: win-a
  address: 192.168.56.20
  user: Administrator
  passwordFrom: {env: WIN_A_PASSWORD}
`
)

// fixture is a directory holding an inventory file, a CA bundle (ca.pem)
// and a password file (secrets/win-b).
type fixture struct {
	t   *testing.T
	dir string
	ca  []byte
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), ca: selfSignedPEM(t)}
	f.write("ca.pem", string(f.ca))
	f.write("secrets/win-b", passwordFileB+"\n")
	return f
}

// path is the absolute path of a file in the fixture.
func (f *fixture) path(name string) string { return filepath.Join(f.dir, filepath.FromSlash(name)) }

// write creates a file in the fixture.
func (f *fixture) write(name, content string) string {
	f.t.Helper()
	p := f.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// load writes the inventory and loads it with env as the environment (a
// nil env has the fixture's usual variables).
func (f *fixture) load(inventory string, env map[string]string) (*Inventory, error) {
	f.t.Helper()
	if env == nil {
		env = map[string]string{"WIN_A_PASSWORD": passwordA, "WINDOWS_ADMIN_PASSWORD": passwordAdmin}
	}
	return Load[Inventory](f.write(inventoryName, inventory), mapEnv(env))
}

// problemsOf returns the problems of err, a *Error, and their lines.
func problemsOf(t *testing.T, err error) (field.ErrorList, []int) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error is %T, want *Error: %v", err, err)
	}
	return e.List, e.Lines
}

// oneProblem checks that err is a *Error of one problem, at field, whose
// detail holds every one of want.
func oneProblem(t *testing.T, err error, field string, want ...string) {
	t.Helper()
	list, _ := problemsOf(t, err)
	if len(list) != 1 || list[0].Field != field {
		t.Fatalf("want one problem at %s, got:\n%v", field, err)
	}
	for _, w := range want {
		if !strings.Contains(Detail(list[0]), w) {
			t.Errorf("the problem lacks %q: %v", w, err)
		}
	}
}

// mapEnv is an environment made of a map.
func mapEnv(env map[string]string) Env {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}

// selfSignedPEM makes a throwaway self-signed CA certificate, in PEM, and
// forgets its key.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "winconform test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
