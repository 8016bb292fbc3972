// Package labels makes the Ginkgo labels every spec carries, and checks them.
//
//	suite:<area>    the package under suites/ the spec belongs to
//	claim:<ID>      each claim of the catalogue (framework/claims) it exercises
//	os:linux|windows  the OS whose nodes it runs on
//	needs:<what>    what it needs beyond a cluster (windows-node, inventory, ...)
//
// `make e2e SUITE=x` filters on suite:x, `FOCUS=NET-03` on claim:NET-03.
package labels

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"

	"github.com/winconform/winconform/framework/claims"
)

// Label prefixes.
const (
	SuitePrefix = "suite:"
	ClaimPrefix = "claim:"
	OSPrefix    = "os:"
	NeedsPrefix = "needs:"
)

// OS names used in os: labels (and kubernetes.io/os).
const (
	Linux   = "linux"
	Windows = "windows"
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

// Claim labels a spec with the claims it exercises.
func Claim(ids ...string) ginkgo.Labels {
	l := make([]string, len(ids))
	for i, id := range ids {
		l[i] = ClaimPrefix + id
	}
	return ginkgo.Label(l...)
}

// OS labels a spec with the OS it runs on.
func OS(os string) ginkgo.Labels { return ginkgo.Label(OSPrefix + os) }

// Needs labels a spec with something it needs beyond a cluster.
func Needs(what string) ginkgo.Labels { return ginkgo.Label(NeedsPrefix + what) }

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
	if len(ids) == 0 {
		problems = append(problems, "has no claim: label")
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
	return problems
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
				return "", fmt.Errorf("unknown claim %q in FOCUS: claims look like NET-03 (see `make list`)", id)
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
