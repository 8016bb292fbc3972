package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/winconform/winconform/reports/rundir"
)

// gate --verify checks a signed statement against the run's directory:
// exit 0 for a verified ship, 2 when it does not verify, saying why.
func TestGateVerify(t *testing.T) {
	run := defaultRun(t)
	if code, out := status(t, "gate", "--report", run, "--policy", "../../policies/linux-only.yaml"); code != exitShip || !strings.Contains(out, rundir.StatementFile) {
		t.Fatalf("gate: exit %d\n%s", code, out)
	}
	kp, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		t.Fatal(err)
	}
	pem, _ := kp.GetPublicKeyPem()
	pub := filepath.Join(t.TempDir(), "cosign.pub")
	payload, err := os.ReadFile(filepath.Join(run, rundir.StatementFile))
	if err != nil {
		t.Fatal(err)
	}
	b, err := sign.Bundle(&sign.DSSEData{Data: payload, PayloadType: "application/vnd.in-toto+json"}, kp, sign.BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := protojson.Marshal(b)
	signed := filepath.Join(run, rundir.SignedStatementFile)
	if err := os.WriteFile(pub, []byte(pem), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(signed, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := status(t, "gate", "--verify", signed, "--report", run, "--key", pub)
	if code != exitShip || !strings.Contains(out, "verified: ") || !strings.Contains(out, ": SHIP (policy linux-only") {
		t.Errorf("a statement signed with the key: exit %d\n%s", code, out)
	}
	if err := os.WriteFile(filepath.Join(run, "extra.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = status(t, "gate", "--verify", signed, "--report", run, "--key", pub)
	if code != exitUnusable || !strings.Contains(out, "extra.txt is not the run's") {
		t.Errorf("its run directory edited: exit %d\n%s", code, out)
	}
	if code, out = status(t, "gate", "--verify", signed, "--key", pub); code != exitUnusable || !strings.Contains(out, "needs --report") {
		t.Errorf("no --report: exit %d\n%s", code, out)
	}
}
