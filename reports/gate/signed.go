package gate

import (
	"crypto"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/winconform/winconform/reports/rundir"
)

// Signer says who must have signed a statement: a public key (PEM), or
// an identity of Sigstore's keyless signing (a certificate's subject and
// its OIDC issuer, under a trusted root: Sigstore's, written by `cosign
// trusted-root create`, or a private deployment's).
type Signer struct {
	// Key is a PEM public key file (cosign.pub). A key's signature needs
	// no transparency log.
	Key string
	// Identity and Issuer are the signing certificate's subject (for a
	// GitHub workflow, its workflow ref URL) and OIDC issuer; TrustedRoot
	// is the trusted root file (JSON) that anchors the certificate, the
	// transparency log and the timestamps.
	Identity, Issuer, TrustedRoot string
}

// Signed is a signed statement verified against a run.
type Signed struct {
	Statement Statement
	// Result is the decision the gate makes again on the run, which the
	// statement states.
	Result Result
	// By says who signed it.
	By string
}

// VerifySigned checks the Sigstore bundle at bundlePath (what `cosign
// attest-blob --statement --bundle` writes): its DSSE envelope signed by
// signer (sigstore-go), its payload a statement of the gate, and that
// statement bound to the run in dir as a view requires (VerifyStatement:
// its subject the run's manifest and record, its decision the gate's
// again from gate.json's inputs).
func VerifySigned(bundlePath string, signer Signer, dir string) (Signed, error) {
	b, err := bundle.LoadJSONFromPath(bundlePath)
	if err != nil {
		return Signed{}, fmt.Errorf("--verify %s: not a Sigstore bundle (%v): pass the file `cosign attest-blob --statement ... --bundle FILE` wrote", bundlePath, err)
	}
	v, pol, by, err := signer.verifier()
	if err != nil {
		return Signed{}, err
	}
	if _, err := v.Verify(b, pol); err != nil {
		return Signed{}, fmt.Errorf("--verify %s: the signature does not verify as %s: %v", bundlePath, by, err)
	}
	env, err := b.Envelope()
	if err != nil {
		return Signed{}, fmt.Errorf("--verify %s: it signs no statement (no DSSE envelope): sign with `cosign attest-blob --statement`", bundlePath)
	}
	payload, err := env.DecodeB64Payload()
	if err != nil {
		return Signed{}, fmt.Errorf("--verify %s: its payload: %v", bundlePath, err)
	}
	st, err := ParseStatement(payload)
	if err != nil {
		return Signed{}, fmt.Errorf("--verify %s: %v", bundlePath, err)
	}
	run, err := rundir.Load(dir)
	if err != nil {
		return Signed{}, fmt.Errorf("--report: %w", err)
	}
	stored, ok, err := Read(dir)
	switch {
	case err != nil:
		return Signed{}, err
	case !ok:
		return Signed{}, fmt.Errorf("%s holds no %s, the inputs the decision was made from: pass the report directory the gate wrote into, whole", dir, JSONFile)
	}
	again, err := VerifyStatement(st, stored, run)
	if err != nil {
		return Signed{}, fmt.Errorf("the signed statement is not this run's decision: %w", err)
	}
	return Signed{Statement: st, Result: again, By: by}, nil
}

// verifier is sigstore-go's verifier and policy for the signer, and who
// that is in words.
func (s Signer) verifier() (*verify.Verifier, verify.PolicyBuilder, string, error) {
	switch {
	case s.Key != "" && (s.Identity != "" || s.Issuer != "" || s.TrustedRoot != ""):
		return nil, verify.PolicyBuilder{}, "", errors.New("--key and --certificate-identity, --certificate-oidc-issuer, --trusted-root: give a public key, or a keyless signer, not both")
	case s.Key != "":
		pem, err := os.ReadFile(s.Key)
		if err != nil {
			return nil, verify.PolicyBuilder{}, "", fmt.Errorf("--key: %w", err)
		}
		pub, err := cryptoutils.UnmarshalPEMToPublicKey(pem)
		if err != nil {
			return nil, verify.PolicyBuilder{}, "", fmt.Errorf("--key %s: not a PEM public key (%v): pass the public half of the signing key (cosign.pub)", s.Key, err)
		}
		sv, err := signature.LoadVerifier(pub, crypto.SHA256)
		if err != nil {
			return nil, verify.PolicyBuilder{}, "", fmt.Errorf("--key %s: %v", s.Key, err)
		}
		key := root.NewExpiringKey(sv, time.Time{}, time.Time{})
		material := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return key, nil })
		v, err := verify.NewVerifier(material, verify.WithNoObserverTimestamps())
		return v, verify.NewPolicy(verify.WithoutArtifactUnsafe(), verify.WithKey()), "the key " + s.Key, err
	case s.Identity == "" || s.Issuer == "" || s.TrustedRoot == "":
		return nil, verify.PolicyBuilder{}, "", errors.New("--verify needs who signed: --key PUB (a key pair), or --certificate-identity, --certificate-oidc-issuer and --trusted-root (keyless: the workflow's identity, e.g. https://github.com/ORG/REPO/.github/workflows/release-gate.yml@refs/heads/main and https://token.actions.githubusercontent.com)")
	}
	tr, err := root.NewTrustedRootFromPath(s.TrustedRoot)
	if err != nil {
		return nil, verify.PolicyBuilder{}, "", fmt.Errorf("--trusted-root %s: %v (write one with `cosign trusted-root create`, or take Sigstore's)", s.TrustedRoot, err)
	}
	id, err := verify.NewShortCertificateIdentity(s.Issuer, "", s.Identity, "")
	if err != nil {
		return nil, verify.PolicyBuilder{}, "", fmt.Errorf("--certificate-identity, --certificate-oidc-issuer: %v", err)
	}
	v, err := verify.NewVerifier(tr, verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
	return v, verify.NewPolicy(verify.WithoutArtifactUnsafe(), verify.WithCertificateIdentity(id)), fmt.Sprintf("%s (issuer %s)", s.Identity, s.Issuer), err
}
