package netmatrix

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/probeclient"
)

// A Windows node's host whose probes reach nothing (its network is down, the
// probe cannot get out of the host's compartment, a host firewall drops
// everything) sees every path blocked, the documented limitations' paths
// included. Blocked there says nothing of NET-21 (a Windows host cannot reach
// Service IPs, Kubernetes docs "Troubleshooting Windows nodes") or NET-27 (a
// Windows node cannot reach a NodePort through its own address, same page):
// a limitation cell holds only when its source reached a path it should
// reach (a control from the same source), and only after a second probe.
func TestLimitationCellsHoldOnlyWithAReachableControlAndTwoProbes(t *testing.T) {
	ts := []Target{
		podTargets(peerWinB)[0],               // win-1 -> windows-b/pod-ip: expected reachable (the control)
		serviceTargets(peerSvcLinux)[0],       // win-1 -> svc-linux/cluster-ip: NET-21, expected blocked
		serviceTargets(peerSvcLinux, win1)[3], // win-1 -> svc-linux/nodeport@win-1: NET-27, expected blocked
	}
	profile := documented("v1.34.4", "flannel/vxlan")
	run := func(control probeclient.Result) (*Matrix, *fakeSource) {
		f := &fakeSource{peer: nodeWin1, probe: per(func(_ int, url string) probeclient.Result {
			if url == ts[0].URL {
				return control
			}
			return failResult("timeout", "i/o timeout")
		})}
		m := &Matrix{Sources: []Source{f}, Targets: ts, Profile: profile, Claims: ClaimsFor, Applies: Applicable, Workers: 1}
		m.Run(context.Background(), nil)
		return m, f
	}

	// The host reaches nothing: its limitation cells say nothing.
	m, f := run(failResult("timeout", "i/o timeout"))
	for _, id := range []string{ts[1].ID(), ts[2].ID()} {
		c := cellOf(t, m, win1, id)
		if c.Expect.Reachable {
			t.Fatalf("%s: expected reachable; the test needs a documented limitation", id)
		}
		if c.Verdict == OK || c.Decided() {
			t.Errorf("%s: verdict %s (decided %v) on a host that reached nothing, want a cell that decides nothing", id, c.Verdict, c.Decided())
		}
		if c.Verdict.Fails(false) {
			t.Errorf("%s: verdict %s fails the claim; an unobserved limitation is not a failure", id, c.Verdict)
		}
		if !strings.Contains(c.Why, "reached none") {
			t.Errorf("%s: why %q, want it to say the source reached none of its reachable paths", id, c.Why)
		}
	}

	// The host reaches a pod: its limitation cells hold, after two probes each.
	m, f = run(okResult(ipWinB))
	for _, id := range []string{ts[1].ID(), ts[2].ID()} {
		c := cellOf(t, m, win1, id)
		if c.Verdict != OK || !c.Decided() {
			t.Errorf("%s: verdict %s decided %v, want a limitation that holds", id, c.Verdict, c.Decided())
		}
		if !c.Reprobed || c.First == nil || c.First.ErrorClass != "timeout" {
			t.Errorf("%s: reprobed %v first %+v, want a limitation confirmed by a second probe", id, c.Reprobed, c.First)
		}
	}
	if b := f.Batches(); len(b) != 2 || len(b[1]) != 2 {
		t.Errorf("batches %q, want a second batch of the two limitation cells", b)
	}
}

// A second probe that agrees with the documents does not erase a first that
// did not: blocked, then reachable, on a limitation cell is flaky.
func TestLimitationCellBlockedThenReachableIsFlaky(t *testing.T) {
	ts := []Target{podTargets(peerWinB)[0], serviceTargets(peerSvcLinux)[0]}
	f := &fakeSource{peer: nodeWin1, probe: per(func(call int, url string) probeclient.Result {
		switch {
		case url == ts[0].URL:
			return okResult(ipWinB)
		case call > 0:
			return okResult(ipLinA) // a backend of svc-linux: the right answer
		}
		return failResult("timeout", "i/o timeout")
	})}
	m := &Matrix{Sources: []Source{f}, Targets: ts, Profile: documented("v1.34.4", "flannel/vxlan"), Claims: ClaimsFor, Applies: Applicable, Workers: 1}
	m.Run(context.Background(), nil)
	c := cellOf(t, m, win1, ts[1].ID())
	if c.Verdict != Flaky || c.Decided() {
		t.Errorf("blocked then reachable on a limitation cell: verdict %s decided %v, want flaky and undecided", c.Verdict, c.Decided())
	}
}

// A probe error is no observation: a limitation cell whose first probe
// broke and whose second saw the path blocked has seen it blocked once. It
// holds only after two real probes (a third is made) beside a reachable
// control; a third that breaks again decides nothing.
func TestLimitationCellAfterAProbeErrorNeedsTwoRealProbes(t *testing.T) {
	ts := []Target{podTargets(peerWinB)[0], serviceTargets(peerSvcLinux)[0]}
	run := func(answers ...probeclient.Result) (*Cell, *fakeSource) {
		f := &fakeSource{peer: nodeWin1, probe: per(func(call int, url string) probeclient.Result {
			if url == ts[0].URL {
				return okResult(ipWinB) // the control: reachable
			}
			return answers[min(call, len(answers)-1)]
		})}
		m := &Matrix{Sources: []Source{f}, Targets: ts, Profile: documented("v1.34.4", "flannel/vxlan"), Claims: ClaimsFor, Applies: Applicable, Workers: 1}
		m.Run(context.Background(), nil)
		return cellOf(t, m, win1, ts[1].ID()), f
	}
	broken, blocked := failResult("probe-error", "exec: no such container"), failResult("timeout", "i/o timeout")
	c, f := run(broken, blocked, blocked)
	if c.Verdict != OK || !c.Decided() || len(f.Batches()) != 3 {
		t.Errorf("probe error, blocked, blocked: verdict %s decided %v after %d batches, want a limitation that holds after a third probe", c.Verdict, c.Decided(), len(f.Batches()))
	}
	c, _ = run(broken, blocked, broken)
	if c.Verdict == OK || c.Decided() {
		t.Errorf("probe error, blocked, probe error: verdict %s decided %v, want a cell that decides nothing (one real probe)", c.Verdict, c.Decided())
	}
	// Two real probes from the start: two batches, as before.
	c, f = run(blocked)
	if c.Verdict != OK || len(f.Batches()) != 2 {
		t.Errorf("blocked, blocked: verdict %s after %d batches", c.Verdict, len(f.Batches()))
	}
}

// A wrong answer (an HTTP 404 from a Service IP, a reply from a pod that is
// not the target's) says something answered that should not have; a right
// answer on the second probe does not make the path right.
func TestWrongAnswerOnEitherProbeStaysWrong(t *testing.T) {
	ts := []Target{podTargets(peerLinB)[0], serviceTargets(peerSvcLinux)[0], serviceTargets(peerSvcLinux)[1]}
	f := &fakeSource{peer: peerLinA, probe: per(func(call int, url string) probeclient.Result {
		switch {
		case url == ts[0].URL && call == 0:
			return okResult("10.9.9.9") // another pod answered for linux-b
		case url == ts[1].URL && call == 0:
			return failResult("http-status", "404 Not Found")
		case url == ts[2].URL && call == 0:
			return failResult("weird", "something odd")
		case url == ts[0].URL:
			return okResult(ipLinB)
		}
		return okResult(ipLinA)
	})}
	m := &Matrix{Sources: []Source{f}, Targets: ts, Applies: Applicable, Workers: 1}
	m.Run(context.Background(), nil)
	for _, tc := range []struct {
		id, why string
	}{
		{ts[0].ID(), "10.9.9.9"},
		{ts[1].ID(), "404 Not Found"},
		{ts[2].ID(), "something odd"},
	} {
		c := cellOf(t, m, "linux-a", tc.id)
		if c.Verdict != Wrong {
			t.Errorf("%s: a wrong answer, then a right one: verdict %s, want wrong", tc.id, c.Verdict)
		}
		if !c.Verdict.Fails(true) {
			t.Errorf("%s: verdict %s does not fail its claim", tc.id, c.Verdict)
		}
		if !strings.Contains(c.Why, tc.why) || !strings.Contains(c.Why, "first probe") {
			t.Errorf("%s: why %q, want the first probe's wrong answer (%s) named", tc.id, c.Why, tc.why)
		}
		if c.Symbol() != SymWrong {
			t.Errorf("%s: symbol %q, want %q", tc.id, c.Symbol(), SymWrong)
		}
	}
}

// A flaky cell is partial evidence: it decides nothing, so that the claim it
// alone covers is not shown, whatever --allow-flaky lets pass.
func TestDecided(t *testing.T) {
	for v, want := range map[Verdict]bool{OK: true, Drift: true, Regression: true, Wrong: true,
		Flaky: false, Broken: false, Skipped: false, Unobserved: false} {
		if got := (&Cell{Verdict: v}).Decided(); got != want {
			t.Errorf("a %s cell: decided %v, want %v", v, got, want)
		}
	}
}

// The Windows build travels with the matrix's evidence: each decided cell
// counts for the build of every Windows node it crossed; a flaky cell counts
// for nothing.
func TestEvidenceByLevelAndBuild(t *testing.T) {
	winA, winB := peerWinA, peerWinB
	winA.Build, winB.Build = "10.0.20348", "10.0.26100"
	lin := peerLinA
	ts := []Target{podTargets(winA)[0], podTargets(winB)[0], podTargets(peerLinB)[0]}
	f := &fakeSource{peer: lin, probe: per(func(call int, url string) probeclient.Result {
		switch url {
		case ts[0].URL:
			return okResult(ipWinA)
		case ts[1].URL:
			if call == 0 {
				return failResult("timeout", "i/o timeout")
			}
			return okResult(ipWinB) // flaky
		}
		return okResult(ipLinB)
	})}
	m := &Matrix{Sources: []Source{f}, Targets: ts, Applies: Applicable, Workers: 1}
	m.Run(context.Background(), nil)
	got := m.Evidence(m.Cells())
	want := []Evidence{{Level: claims.WindowsNode, Build: "10.0.20348", Cells: 1, Nodes: []string{winA.Node}}, {Level: claims.Linux, Cells: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("evidence %+v, want %+v (the flaky cell to 10.0.26100 counts for nothing)", got, want)
	}
}
