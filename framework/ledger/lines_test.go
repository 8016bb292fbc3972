package ledger

import (
	"strings"
	"testing"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/internal/kubelines"
)

// What each documented limitation is expected to do on every supported
// line, as checked against the sources of v1.35.4, v1.36.3 and v1.37.2 (the
// module cache) and the current documentation:
//   - none is lifted by 1.35, 1.36 or 1.37. API validation still forbids
//     privileged and the Linux-only fields for spec.os.name windows
//     (pkg/apis/core/validation validateWindows: 1.37 only moved the
//     hostPID/hostIPC/hostUsers/shareProcessNamespace checks out of the
//     securityContext branch); the Windows kubelet still ignores Linux-only
//     fields of a pod without spec.os (kuberuntime security_context_windows.go
//     unchanged); the kubelet still sets beta.kubernetes.io/os
//     (kubelet_node_status.go); the Windows emptyDir still has no memory
//     medium (volume/emptydir); the documentation still lists Service IPs
//     from the node, local NodePort access and memory-backed emptyDir
//     among what Windows nodes do not support; Windows support, Secrets and
//     ConfigMaps as volumes, StatefulSets and HPA stay lifted since 1.14.
//   - NET-17 is tied to flannel host-gw before 1.14: works on every line.
var onEveryLine = map[string]Behaviour{
	"NET-17": Works, "NET-21": Limited, "NET-27": Limited,
	"CFG-03": Works, "CFG-04": Works,
	"VOL-05": Limited,
	"SCH-02": Works,
	"LIM-01": Limited, "LIM-02": Limited, "LIM-03": Limited, "LIM-04": Limited,
	"LIM-05": Works, "LIM-06": Works, "LIM-07": Limited, "LIM-10": Limited, "LIM-11": Works,
}

func TestExpectationsOnEverySupportedLine(t *testing.T) {
	for _, c := range claims.All() {
		if c.Limitation != nil {
			if _, ok := onEveryLine[c.ID]; !ok {
				t.Errorf("%s is a limitation of the catalogue this test does not know: check it on every supported line and add it", c.ID)
			}
		}
	}
	for _, l := range kubelines.Lines() {
		for _, cni := range []string{"flannel/vxlan", "flannel/host-gw"} {
			cluster := Cluster{Server: l.Version, CNI: cni}
			for id, want := range onEveryLine {
				got, why := Expect(id, cluster)
				if got != want {
					t.Errorf("%s on %s with %s: expected %s (%s), want %s", id, l.Version, cni, got, why, want)
				}
				if strings.Contains(why, "unchecked") {
					t.Errorf("%s on %s: %q, but the catalogue was checked through %s", id, l.Version, why, claims.CheckedThrough)
				}
			}
		}
	}
}

// On a 1.37 server a limitation lifted long ago (Secret volumes, 1.14) is
// an expected lift; one the documents still state (a node's host reaching
// Service IPs) found lifted is drift, and found holding holds.
func TestVerdictsOnA137Server(t *testing.T) {
	v137 := Cluster{Server: kubelines.Default().Version, CNI: "flannel/vxlan"}
	cases := []struct {
		id         string
		observed   Behaviour
		verdict    Verdict
		unexpected bool
	}{
		{"CFG-03", Works, Lifted, false},
		{"CFG-03", Limited, Regressed, true},
		{"NET-21", Works, Lifted, true},
		{"NET-21", Limited, Holds, false},
		{"SCH-02", Works, Lifted, false},
	}
	for _, c := range cases {
		e := New(c.id, v137)
		e.Observed = c.observed
		e.Decide()
		if e.Verdict != c.verdict || e.Unexpected != c.unexpected {
			t.Errorf("%s observed %s on %s: %s (unexpected %v), want %s (unexpected %v); expected %s because %s",
				c.id, c.observed, v137.Server, e.Verdict, e.Unexpected, c.verdict, c.unexpected, e.Expected, e.Why)
		}
	}
}

// A limitation lifted by a line inside the supported ones (Until 1.36) is
// drift on the older line and an expected lift on the newer ones.
func TestALiftWithinTheSupportedLines(t *testing.T) {
	lifted := claims.Limitation{Statement: "s", Era: "e", Why: "lifted by 1.36", Holds: claims.Versions{Until: "1.36"}}
	for _, l := range kubelines.Lines() {
		want := Works
		if l.Minor < 36 {
			want = Limited
		}
		expected, why := ExpectOf(lifted, Cluster{Server: l.Version})
		if expected != want {
			t.Errorf("on %s: expected %s (%s), want %s", l.Version, expected, why, want)
		}
		e := Entry{Expected: expected, Observed: Works}
		e.Decide()
		if e.Verdict != Lifted || e.Unexpected != (want == Limited) {
			t.Errorf("found lifted on %s: %s, unexpected %v", l.Version, e.Verdict, e.Unexpected)
		}
	}
}

// A server newer than the line the catalogue was checked through keeps
// the expectation of the newest checked line, and says it is unchecked
// there; the 1.38 release, of the line whose pre-release was checked, is
// checked.
func TestANewerServerIsCarriedOverUnchecked(t *testing.T) {
	for _, id := range []string{"NET-21", "CFG-03", "LIM-11", "NET-17"} {
		checked, _ := Expect(id, Cluster{Server: claims.CheckedThrough, CNI: "flannel/vxlan"})
		got, why := Expect(id, Cluster{Server: "v1.39.0", CNI: "flannel/vxlan"})
		if got != checked {
			t.Errorf("%s on v1.39.0: %s, want %s as on %s", id, got, checked, claims.CheckedThrough)
		}
		if !strings.Contains(why, "unchecked") || !strings.Contains(why, claims.CheckedThrough) || !strings.Contains(why, "v1.39.0") {
			t.Errorf("%s on v1.39.0: why %q does not say the expectation is carried over from %s unchecked", id, why, claims.CheckedThrough)
		}
		if _, why := Expect(id, Cluster{Server: "v1.38.0", CNI: "flannel/vxlan"}); strings.Contains(why, "unchecked") {
			t.Errorf("%s on v1.38.0, the line checked through its pre-release: %q", id, why)
		}
	}
	if _, why := Expect("NET-21", Cluster{Server: "v1.37.9"}); strings.Contains(why, "unchecked") {
		t.Errorf("a later patch of the checked line is that line: %q", why)
	}
}
