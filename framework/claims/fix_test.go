package claims

import (
	"strings"
	"testing"
)

// VOL-09 depends on the kubelet fix of kubernetes#112630 (pods with several
// subPath mounts stuck Terminating on Windows: the kubelet kept only the
// last subPath's cleanup, leaking the others' file handles). The fix,
// kubernetes#138367, is in 1.37.0 (CHANGELOG-1.37.md of k8s.io/kubernetes
// v1.37.2; pkg/kubelet/kubelet_pods.go's makeMounts keeps one cleanup per
// subPath from 1.37, one in all in v1.36.3 and v1.35.4), and in no 1.35 or
// 1.36 patch (their changelogs name neither).
func TestVOL09NeedsTheSubPathFixOf137(t *testing.T) {
	f := MustGet("VOL-09").Fix
	if f == nil {
		t.Fatal("VOL-09 names no upstream fix")
	}
	for kubelet, want := range map[string]bool{
		"v1.35.4": true, "v1.36.3": true, "v1.36.99": true, "v1.36.3-gke.100": true,
		"v1.37.0": false, "v1.37.2": false, "v1.37.0+vendor.1": false, "v1.38.1": false,
		"": false, "unknown": false, // an unknown kubelet is not blamed
	} {
		if got := f.Missing(kubelet); got != want {
			t.Errorf("Missing(%q) = %v, want %v", kubelet, got, want)
		}
	}
	note := f.Explain("v1.36.3")
	for _, want := range []string{"v1.36.3", "1.37", "kubernetes/kubernetes#112630", "kubernetes/kubernetes#138367"} {
		if !strings.Contains(note, want) {
			t.Errorf("Explain = %q, want it to name %s", note, want)
		}
	}
	if n := f.Explain("v1.37.2"); n != "" {
		t.Errorf("Explain on a fixed kubelet = %q, want nothing", n)
	}
}

func TestCheckRefusesAFixWithoutItsData(t *testing.T) {
	good := Claim{ID: "VOL-99", Kind: Feature, Level: WindowsNode, OSes: win, Title: "t", Docs: []string{"002"}}
	for name, f := range map[string]*Fix{
		"no version":  {Bug: "a/b#1", Change: "a/b#2", Symptom: "s"},
		"bad version": {In: "soon", Bug: "a/b#1", Change: "a/b#2", Symptom: "s"},
		"no bug":      {In: "1.37", Change: "a/b#2", Symptom: "s"},
		"no symptom":  {In: "1.37", Bug: "a/b#1", Change: "a/b#2"},
	} {
		c := good
		c.Fix = f
		if p := strings.Join(Check([]Claim{c}), "\n"); !strings.Contains(p, "claim VOL-99: upstream fix") {
			t.Errorf("%s: problems %q", name, p)
		}
	}
	c := good
	c.Fix = &Fix{In: "1.37", Bug: "a/b#1", Change: "a/b#2", Symptom: "s"}
	if p := Check([]Claim{c}); len(p) > 0 {
		t.Errorf("a good fix is refused: %v", p)
	}
}
