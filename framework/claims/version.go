package claims

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// Version names this catalogue: a hash of every claim as the harness reads
// it (ID, kind, level, OSes, needs, parts, limitation). A run records the
// version it was recorded under; the gate refuses to decide a run of
// another catalogue, whose claims it would read with other levels and
// other needs.
func Version() string {
	versionOnce.Do(func() {
		data, err := json.Marshal(All())
		if err != nil {
			panic("claims: the catalogue does not encode: " + err.Error())
		}
		sum := sha256.Sum256(data)
		catalogueVersion = "sha256:" + hex.EncodeToString(sum[:])[:16]
	})
	return catalogueVersion
}

var (
	versionOnce      sync.Once
	catalogueVersion string
)

// IDs lists the catalogue's claim IDs, in All's order.
func IDs() []string {
	out := make([]string, 0, len(catalogue))
	for _, c := range All() {
		out = append(out, c.ID)
	}
	return out
}

// WindowsNodes is how many real Windows nodes a cluster needs for c to be
// shown on Windows: two for a path with a part between Windows peers on
// different nodes, else one.
func (c Claim) WindowsNodes() int {
	for _, p := range c.Parts {
		if p.Where == OtherNode && p.From.OS == corev1.Windows && p.To.OS == corev1.Windows {
			return 2
		}
	}
	return 1
}
