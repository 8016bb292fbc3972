// Package labels makes the Ginkgo labels every spec carries, and checks them.
//
//	suite:<area>    the package under suites/ the spec belongs to
//	claim:<ID>      each claim of the catalogue (framework/claims) it exercises
//	os:linux|windows  the OS whose nodes it runs on
//	needs:<what>    what it needs beyond a cluster (windows-node, inventory, ...)
//	twin            a Linux twin of a claim about Windows: the same code on
//	                Linux nodes, which checks the machinery and shows nothing
//	                about Windows
//
// The os:, needs: and twin labels of a claim are derived from its catalogue
// entry (For, ForClaim), not retyped per spec; Check finds a spec whose
// labels contradict its claims' entries.
//
// `make e2e SUITE=x` filters on suite:x, `FOCUS=NET-03` on claim:NET-03.
package labels

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/winconform/winconform/framework/claims"
)

// Label prefixes.
const (
	SuitePrefix = "suite:"
	ClaimPrefix = "claim:"
	OSPrefix    = "os:"
	NeedsPrefix = "needs:"
	// TwinLabel marks a Linux twin of a claim about Windows.
	TwinLabel = "twin"
	// UncataloguedLabel marks a spec of paths no claim names (the network
	// matrix's control cells): it carries no claim: label, yet fails the
	// run when such a path regresses.
	UncataloguedLabel = "uncatalogued"
	// APIOnlyLabel marks a spec that asks the API server only about
	// Windows pods, without a Windows node.
	APIOnlyLabel = "api-only"
)

// OS names used in os: labels (and kubernetes.io/os).
const (
	Linux   = string(corev1.Linux)
	Windows = string(corev1.Windows)
)

var (
	mu    sync.Mutex
	areas = map[string]bool{}
)

// Suite labels a spec container with its area and registers the area, so
// the suite binary knows every SUITE it can run.
func Suite(area string) ginkgo.Labels {
	mu.Lock()
	defer mu.Unlock()
	areas[area] = true
	return ginkgo.Label(SuitePrefix + area)
}

// Areas lists the registered areas.
func Areas() []string {
	mu.Lock()
	defer mu.Unlock()
	out := make([]string, 0, len(areas))
	for a := range areas {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// OS labels a spec with the OS it runs on.
func OS(os string) ginkgo.Labels { return ginkgo.Label(OSPrefix + os) }

// For labels a spec (or a table entry) that exercises claim id on nodes of
// os: the claim, the OS, what the claim needs there, and the twin label when
// the claim is not about os (a Linux twin of a Windows claim).
func For(id string, os corev1.OSName) ginkgo.Labels {
	c := claims.MustGet(id)
	l := []string{ClaimPrefix + id, OSPrefix + string(os)}
	for _, n := range c.Needs(os) {
		l = append(l, NeedsPrefix+n)
	}
	if !c.About(os) {
		l = append(l, TwinLabel)
	}
	return ginkgo.Label(l...)
}

// ForSimulated labels a spec of claim id that runs against Windows nodes
// the harness may simulate (kwok) where the cluster has none: For(id,
// windows) with the need of a Windows node met by kwok. On simulated nodes
// the spec supports a claim above the scheduler's level; it never shows it.
func ForSimulated(id string) ginkgo.Labels {
	var l []string
	for _, v := range For(id, corev1.Windows) {
		if v == NeedsPrefix+claims.NeedWindowsNode {
			v = NeedsPrefix + claims.NeedKwok
		}
		if !slices.Contains(l, v) {
			l = append(l, v)
		}
	}
	return ginkgo.Label(l...)
}

// APIOnly labels a spec of claim id that asks the API server only (what it
// accepts, refuses or stores about a Windows pod) and needs no Windows
// node: it supports a claim above the api level; it never shows it.
func APIOnly(id string) ginkgo.Labels {
	return ginkgo.Label(ClaimPrefix+id, OSPrefix+Windows, APIOnlyLabel)
}

// ForClaim labels a spec that exercises claim id on every OS it is about
// (a path between a Windows and a Linux pod, say).
func ForClaim(id string) ginkgo.Labels {
	c := claims.MustGet(id)
	l := []string{ClaimPrefix + id}
	for _, os := range c.OSes {
		l = append(l, OSPrefix+string(os))
	}
	for _, os := range c.OSes {
		for _, n := range c.Needs(os) {
			if !slices.Contains(l, NeedsPrefix+n) {
				l = append(l, NeedsPrefix+n)
			}
		}
	}
	return ginkgo.Label(l...)
}

// Claims returns the claim IDs among labels.
func Claims(labels []string) []string {
	return withPrefix(labels, ClaimPrefix)
}

// Values returns the values of the labels with prefix.
func Values(labels []string, prefix string) []string {
	return withPrefix(labels, prefix)
}

func withPrefix(labels []string, prefix string) []string {
	var out []string
	for _, l := range labels {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			out = append(out, v)
		}
	}
	return out
}

// Check lists what is wrong with one spec's labels: a missing suite, claim
// or os label, an unknown claim ID, or an unknown OS.
func Check(labels []string) []string {
	var problems []string
	if len(withPrefix(labels, SuitePrefix)) != 1 {
		problems = append(problems, "needs exactly one suite: label")
	}
	ids := withPrefix(labels, ClaimPrefix)
	uncatalogued := slices.Contains(labels, UncataloguedLabel)
	switch {
	case len(ids) == 0 && !uncatalogued:
		problems = append(problems, "has no claim: label")
	case len(ids) > 0 && uncatalogued:
		problems = append(problems, "uncatalogued, yet names claims")
	}
	for _, id := range ids {
		if _, ok := claims.Get(id); !ok {
			problems = append(problems, fmt.Sprintf("claim:%s is not in the catalogue", id))
		}
	}
	oses := withPrefix(labels, OSPrefix)
	if len(oses) == 0 {
		problems = append(problems, "has no os: label")
	}
	for _, os := range oses {
		if os != Linux && os != Windows {
			problems = append(problems, fmt.Sprintf("os:%s is neither linux nor windows", os))
		}
	}
	for _, id := range ids {
		if c, ok := claims.Get(id); ok {
			problems = append(problems, contradictions(c, labels)...)
		}
	}
	return problems
}

// contradictions lists where a spec's labels contradict claim c's catalogue
// entry: an OS the claim is not about (but for a Linux twin), a twin of a
// claim about Linux, a needs: label that does not fit, or a need missing
// for the spec's OSes.
func contradictions(c claims.Claim, labels []string) []string {
	var out []string
	oses := withPrefix(labels, OSPrefix)
	needs := withPrefix(labels, NeedsPrefix)
	twin := slices.Contains(labels, TwinLabel)
	for _, os := range oses {
		if os != Linux && os != Windows {
			continue
		}
		if !c.About(corev1.OSName(os)) && !(twin && os == Linux) {
			out = append(out, fmt.Sprintf("os:%s contradicts claim %s, which is about %v (a Linux twin carries the twin label)", os, c.ID, c.OSes))
		}
	}
	if twin && (c.About(corev1.Linux) || !slices.Equal(oses, []string{Linux})) {
		out = append(out, fmt.Sprintf("twin: a twin runs on Linux only, for a claim about Windows only, and %s is about %v", c.ID, c.OSes))
	}
	for _, n := range needs {
		if !slices.Contains(claims.Needs, n) {
			out = append(out, fmt.Sprintf("needs:%s is not a known need (%v)", n, claims.Needs))
		}
	}
	if slices.Contains(needs, claims.NeedWindowsNode) && !slices.Contains(oses, Windows) {
		out = append(out, "needs:windows-node on a spec that does not run on Windows (no os:windows)")
	}
	if slices.Contains(oses, Windows) && !slices.Contains(labels, APIOnlyLabel) {
		// A spec for a claim that needs a Windows node may run on
		// simulated nodes where there is none (it then supports the
		// claim, and says so); any other need must be there.
		for _, n := range c.Needs(corev1.Windows) {
			switch {
			case slices.Contains(needs, n):
			case n == claims.NeedWindowsNode && slices.Contains(needs, claims.NeedKwok):
			case n == claims.NeedKwok && slices.Contains(needs, claims.NeedWindowsNode):
			default:
				out = append(out, fmt.Sprintf("lacks needs:%s, which claim %s needs on Windows (level %s)", n, c.ID, c.Level))
			}
		}
	}
	for _, n := range c.Also {
		if !slices.Contains(needs, n) {
			out = append(out, fmt.Sprintf("lacks needs:%s, which claim %s always needs", n, c.ID))
		}
	}
	return out
}

// Filter turns the suite, claim and free label filters of a run into one
// Ginkgo label filter; an unknown suite is an error that lists the known ones.
func Filter(suite, claim, extra string) (string, error) {
	var parts []string
	if suite != "" {
		known := Areas()
		found := false
		for _, a := range known {
			found = found || a == suite
		}
		if !found {
			return "", fmt.Errorf("unknown SUITE %q: the suites are %s", suite, strings.Join(known, ", "))
		}
		parts = append(parts, SuitePrefix+suite)
	}
	if claim != "" {
		var ids []string
		for _, id := range strings.Split(claim, ",") {
			id = strings.ToUpper(strings.TrimSpace(id))
			if _, ok := claims.Get(id); !ok {
				return "", fmt.Errorf("unknown claim %q in CLAIM: claims look like NET-03 (see `make list`)", id)
			}
			ids = append(ids, ClaimPrefix+id)
		}
		parts = append(parts, "("+strings.Join(ids, " || ")+")")
	}
	if extra != "" {
		parts = append(parts, "("+extra+")")
	}
	return strings.Join(parts, " && "), nil
}
