package windows

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
)

// The join pins the cluster CA by kubeadm's hash; the CA bundle is read
// with client-go's PEM parser, and the hashes checked against it.
func TestTheCAIsPinnedByItsHash(t *testing.T) {
	bundle, key, err := certutil.GenerateSelfSignedCertKey("api.test", nil, nil) // a serving cert and its CA
	if err != nil {
		t.Fatal(err)
	}
	hashes, err := caHashes(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: bundle}})
	if err != nil || len(hashes) != 2 || !strings.HasPrefix(hashes[0], "sha256:") || len(hashes[0]) != len("sha256:")+64 {
		t.Fatalf("caHashes = %v, %v; want two sha256: hashes", hashes, err)
	}
	if err := verifyCA(bundle, []string{"sha256:00", hashes[1]}); err != nil {
		t.Errorf("a bundle holding the pinned CA: %v", err)
	}
	for _, tc := range []struct {
		name string
		pem  []byte
		pin  string
		want string
	}{
		{"another CA", bundle, "sha256:" + strings.Repeat("0", 64), hashes[0]},
		{"no certificate", []byte("not PEM"), hashes[0], "the cluster CA"},
		{"a private key only", key, hashes[0], "the cluster CA"},
	} {
		err := verifyCA(tc.pem, []string{tc.pin})
		if !errors.Is(err, ErrCACertHash) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrCACertHash naming %q", tc.name, err, tc.want)
		}
	}
	if _, err := caHashes(&rest.Config{}); err == nil || !strings.Contains(err.Error(), "names no CA") {
		t.Errorf("no CA at all: %v", err)
	}
	if _, err := caHashes(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: key}}); err == nil {
		t.Error("a CA that is a private key gave hashes")
	}
}
