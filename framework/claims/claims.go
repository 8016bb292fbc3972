// Package claims is the harness's catalogue of what the Windows-on-Kubernetes
// documents promise: one entry per claim, under the same IDs as the shared
// catalogue (NET-03, LIM-07, ...), in the harness's own words. Specs name the
// claims they exercise with labels (claim:<ID>); reports read this catalogue
// to say, per claim, what the run showed.
package claims

import (
	"fmt"
	"sort"
	"strings"
)

// Kind says how a claim is checked.
type Kind string

const (
	// Path is a network path to probe.
	Path Kind = "path"
	// Feature is something that must work.
	Feature Kind = "feature"
	// Limit is a documented limitation: the harness asserts the behaviour
	// expected of the server version and reports drift from the documents.
	Limit Kind = "limit"
)

// Claim is one documented behaviour.
type Claim struct {
	ID    string
	Kind  Kind
	Text  string
	Seeds []string // the source documents, by their number in the shared seeds
}

// Area is the part of the ID before the dash (NET, WEB, ...).
func (c Claim) Area() string { return strings.SplitN(c.ID, "-", 2)[0] }

var byID = map[string]Claim{}

func init() {
	for _, c := range catalogue {
		if _, dup := byID[c.ID]; dup {
			panic("claims: duplicate ID " + c.ID)
		}
		byID[c.ID] = c
	}
}

// Get returns the claim with id.
func Get(id string) (Claim, bool) {
	c, ok := byID[id]
	return c, ok
}

// All returns every claim, ordered by area and number.
func All() []Claim {
	out := append([]Claim(nil), catalogue...)
	sort.SliceStable(out, func(i, j int) bool { return Less(out[i].ID, out[j].ID) })
	return out
}

// Less orders IDs by area, then numerically (NET-9 before NET-10).
func Less(a, b string) bool {
	aa, an := split(a)
	ba, bn := split(b)
	if aa != ba {
		return aa < ba
	}
	return an < bn
}

func split(id string) (string, int) {
	area, num, _ := strings.Cut(id, "-")
	var n int
	fmt.Sscanf(num, "%d", &n)
	return area, n
}
