package gate

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/testing/reporttest"
)

// A required claim shown by a spec that passed only on its retry is judged
// by flakes.tolerated: its flake item blocks beyond the tolerance and shows
// the first failure; the claim's own item says a flaky spec showed it. A
// spec that failed on every attempt is a failure, whatever the tolerance.
func TestFlakyRequiredClaim(t *testing.T) {
	r := reporttest.Linux()
	r.Set("NET-08", reporttest.Spec{Name: "flaky pod to pod", Attempts: 2, FirstFailure: "dial tcp 10.0.0.8:80: connect: connection refused\nafter 3 tries",
		Evidence: []reporttest.Ev{reporttest.OnLinux()}})
	run := load(t, r)
	res := decide(t, loadPolicy(t, requires("NET-08")), run, nil)
	fl := item(t, res, KindFlake, "spec [synthetic] flaky pod to pod")
	if !res.Blocked() || fl.Decision != Block || !strings.Contains(fl.Reason, "tolerates 0") {
		t.Errorf("a flake, none tolerated: blocked %v, %+v", res.Blocked(), fl)
	}
	if want := "passed on attempt 2; attempt 1 failed at suites/networking/retry.go:42: dial tcp 10.0.0.8:80: connect: connection refused"; fl.Got != want {
		t.Errorf("the flake item got %q, want %q", fl.Got, want)
	}
	if req := item(t, res, KindRequired, "NET-08"); req.Decision != Pass || !strings.Contains(req.Reason, "1 of its specs passed only on a retry ([synthetic] flaky pod to pod: passed on attempt 2; attempt 1 failed at suites/networking/retry.go:42: dial tcp 10.0.0.8:80: connect: connection refused): flakes.tolerated decides") {
		t.Errorf("the required claim's item: %+v", req)
	}
	res = decide(t, loadPolicy(t, requires("NET-08")+"flakes:\n  tolerated: 1\n"), run, nil)
	if res.Blocked() || item(t, res, KindFlake, "spec [synthetic] flaky pod to pod").Decision != Report {
		t.Errorf("one flake tolerated still blocks: %v", res.Reasons)
	}
	// Failed on both attempts: a failure, no flake.
	r.Set("NET-08", reporttest.Spec{Name: "failing pod to pod", Attempts: 2, State: types.SpecStateFailed, Message: "connection refused",
		Evidence: []reporttest.Ev{reporttest.OnLinux()}})
	res = decide(t, loadPolicy(t, requires("NET-08")+"flakes:\n  tolerated: 5\n"), load(t, r), nil)
	if req := item(t, res, KindRequired, "NET-08"); !res.Blocked() || req.Decision != Block || !hasReason(res, "NET-08 failed") {
		t.Errorf("a spec failing on every attempt: blocked %v, %+v", res.Blocked(), req)
	}
	for _, it := range res.Items {
		if it.Kind == KindFlake {
			t.Errorf("a spec failing on every attempt is called a flake: %+v", it)
		}
	}
}
