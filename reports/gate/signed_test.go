package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// keyPair is a local key pair: its signer, and its public key's file.
func keyPair(t *testing.T) (*sign.EphemeralKeypair, string) {
	t.Helper()
	kp, err := sign.NewEphemeralKeypair(nil)
	must(t, err)
	pem, err := kp.GetPublicKeyPem()
	must(t, err)
	path := filepath.Join(t.TempDir(), "cosign.pub")
	must(t, os.WriteFile(path, []byte(pem), 0o644))
	return kp, path
}

// signStatement signs dir's statement with kp as `cosign attest-blob
// --statement --bundle` does with a key and no transparency log: a
// Sigstore bundle of a DSSE envelope of in-toto's payload type.
func signStatement(t *testing.T, dir string, kp *sign.EphemeralKeypair) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rundir.StatementFile))
	must(t, err)
	b, err := sign.Bundle(&sign.DSSEData{Data: data, PayloadType: "application/vnd.in-toto+json"}, kp, sign.BundleOptions{})
	must(t, err)
	out, err := protojson.Marshal(b)
	must(t, err)
	path := filepath.Join(t.TempDir(), rundir.SignedStatementFile)
	must(t, os.WriteFile(path, out, 0o644))
	return path
}

// A signed statement verifies against its run with the signer's key; it
// does not with another key, against its run edited, nor against
// another run.
func TestVerifySigned(t *testing.T) {
	kp, pub := keyPair(t)
	_, otherPub := keyPair(t)
	dir, _, _ := gated(t, reporttest.IdealHybrid())
	signed := signStatement(t, dir, kp)

	s, err := VerifySigned(signed, Signer{Key: pub}, dir)
	if err != nil {
		t.Fatalf("the gate's statement signed with the key: %v", err)
	}
	if s.Result.Decision != Ship || s.Statement.Predicate.Decision != Ship || !strings.Contains(s.By, pub) {
		t.Errorf("verified %s, stated %s, by %s", s.Result.Decision, s.Statement.Predicate.Decision, s.By)
	}

	if _, err := VerifySigned(signed, Signer{Key: otherPub}, dir); err == nil || !strings.Contains(err.Error(), "the signature does not verify") {
		t.Errorf("signed by another key: %v", err)
	}

	other, _, _ := gated(t, reporttest.IdealHybrid())
	if _, err := VerifySigned(signed, Signer{Key: pub}, other); err == nil || !strings.Contains(err.Error(), "not on this run") {
		t.Errorf("the statement of another run: %v", err)
	}

	// The run directory edited: a file added, refused by its manifest;
	// the manifest written again, refused by the statement's subject.
	must(t, os.WriteFile(filepath.Join(dir, "artifacts.txt"), []byte("added"), 0o644))
	if _, err := VerifySigned(signed, Signer{Key: pub}, dir); err == nil || !strings.Contains(err.Error(), "artifacts.txt is not the run's") {
		t.Errorf("its run directory edited: %v", err)
	}
	reporttest.Reseal(t, dir)
	if _, err := VerifySigned(signed, Signer{Key: pub}, dir); err == nil || !strings.Contains(err.Error(), "its subject is not this directory's manifest") {
		t.Errorf("its run directory edited and sealed again: %v", err)
	}
}

// What --verify is given wrong is refused, naming the flag.
func TestVerifySignedRefusesBadInput(t *testing.T) {
	kp, pub := keyPair(t)
	dir, _, _ := gated(t, reporttest.IdealHybrid())
	signed := signStatement(t, dir, kp)
	notBundle := filepath.Join(dir, rundir.StatementFile) // the statement, unsigned
	for _, c := range []struct {
		name, bundle string
		signer       Signer
		want         string
	}{
		{"no signer", signed, Signer{}, "--verify needs who signed"},
		{"a key and an identity", signed, Signer{Key: pub, Identity: "x"}, "not both"},
		{"not a key", signed, Signer{Key: notBundle}, "not a PEM public key"},
		{"an unsigned statement", notBundle, Signer{Key: pub}, "not a Sigstore bundle"},
	} {
		if _, err := VerifySigned(c.bundle, c.signer, dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
