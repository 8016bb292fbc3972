package kubelines

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestTable(t *testing.T) {
	ls := Lines()
	if len(ls) != 4 {
		t.Fatalf("lines = %v", ls)
	}
	for i, l := range ls {
		// Only the newest line may be in pre-release, and only it names a
		// cri-tools release of another line or a Go toolchain of its own.
		if l.PreRelease() && i != len(ls)-1 {
			t.Errorf("%v: a pre-release line that is not the newest", l)
		}
		if !l.PreRelease() && (l.CRITools != "" || l.GoToolchain != "") {
			t.Errorf("%v: a released line with cri-tools %q or toolchain %q of its own", l, l.CRITools, l.GoToolchain)
		}
		if l.GoToolchain != "" && !regexp.MustCompile(`^go1\.\d+\.\d+$`).MatchString(l.GoToolchain) {
			t.Errorf("%v: Go toolchain %q is no GOTOOLCHAIN release name", l, l.GoToolchain)
		}
		if !regexp.MustCompile(`^v1\.\d+\.0$`).MatchString(l.CrictlVersion()) {
			t.Errorf("%v: crictl %q", l, l.CrictlVersion())
		}
		if i > 0 && l.Minor != ls[i-1].Minor+1 {
			t.Errorf("lines not consecutive, oldest first: %v after %v", l, ls[i-1])
		}
		if !strings.HasPrefix(l.Version, "v"+l.Name()+".") {
			t.Errorf("%v: version not on its line", l)
		}
		if _, err := time.Parse(time.DateOnly, l.EndOfLife); err != nil {
			t.Errorf("%v: end of life %q: %v", l, l.EndOfLife, err)
		}
		if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(l.MinContainerd) {
			t.Errorf("%v: containerd floor %q", l, l.MinContainerd)
		}
		// From 1.36 the kubelet needs containerd 2 (containerd's RELEASES.md
		// lists no 1.x for 1.36 and 1.37).
		if l.Minor >= 36 && strings.HasPrefix(l.MinContainerd, "1.") {
			t.Errorf("%v: containerd 1.x floor", l)
		}
		if !l.NeedsFailCgroupV1Off {
			t.Errorf("%v: every line from 1.35 refuses cgroup v1 by default", l)
		}
	}
	// The default is the newest released line, never the pre-release.
	if d := Default(); d.Version != "v1.37.2" || d != ls[len(ls)-2] || d.PreRelease() {
		t.Errorf("default = %v", d)
	}
	next := ls[len(ls)-1]
	if next.Version != "v1.38.0-beta.0" || !next.PreRelease() || next.GoToolchain != "go1.27.3" || next.CrictlVersion() != "v1.37.0" {
		t.Errorf("1.38 = %+v", next)
	}
	if got := next.String(); got != "1.38 (v1.38.0-beta.0, a pre-release)" {
		t.Errorf("String() = %q", got)
	}
	if got := ls[1].CrictlVersion(); got != "v1.36.0" {
		t.Errorf("1.36's crictl = %q", got)
	}
	if o := Oldest(); o.Version != "v1.35.4" {
		t.Errorf("oldest = %v", o)
	}
	if got := Supported(); got != "1.35 (v1.35.4), 1.36 (v1.36.3), 1.37 (v1.37.2) or 1.38 (v1.38.0-beta.0, a pre-release)" {
		t.Errorf("Supported() = %q", got)
	}
	Lines()[0].Version = "changed"
	if Lines()[0].Version != "v1.35.4" {
		t.Error("Lines shares its table")
	}
}

func TestResolve(t *testing.T) {
	for _, c := range []struct{ in, line, release string }{
		{"v1.36.3", "1.36", "v1.36.3"},
		{"1.36.3", "1.36", "v1.36.3"},
		{"v1.36", "1.36", "v1.36.3"},
		{"1.36", "1.36", "v1.36.3"},
		{"1.35", "1.35", "v1.35.4"},
		{"v1.35.0", "1.35", "v1.35.0"},
		{"v1.37.2", "1.37", "v1.37.2"},
		{"1.37", "1.37", "v1.37.2"},
		// The pre-release line: by its name, or its pinned version exactly.
		{"1.38", "1.38", "v1.38.0-beta.0"},
		{"v1.38", "1.38", "v1.38.0-beta.0"},
		{"v1.38.0-beta.0", "1.38", "v1.38.0-beta.0"},
		{"1.38.0-beta.0", "1.38", "v1.38.0-beta.0"},
	} {
		l, release, err := Resolve(c.in)
		if err != nil || l.Name() != c.line || release != c.release {
			t.Errorf("Resolve(%q) = %v, %q, %v; want line %s, %s", c.in, l, release, err, c.line, c.release)
		}
		if f, err := Find(c.in); err != nil || f != l {
			t.Errorf("Find(%q) = %v, %v", c.in, f, err)
		}
	}
}

func TestResolveRefuses(t *testing.T) {
	supported := "the supported lines are 1.35 (v1.35.4), 1.36 (v1.36.3), 1.37 (v1.37.2) or 1.38 (v1.38.0-beta.0, a pre-release)"
	pinned := "the line is in pre-release, pinned to v1.38.0-beta.0"
	for _, c := range []struct{ in, want string }{
		// A line the harness does not know, older and newer.
		{"v1.34.4", `"v1.34.4" is on Kubernetes 1.34, older than the oldest line the harness supports (past its end of life): ` + supported},
		{"1.33", `"1.33" is on Kubernetes 1.33, older than the oldest line`},
		{"v1.39.0", `"v1.39.0" is on Kubernetes 1.39, newer than any line the harness knows: ` + supported},
		{"v1.39.0-alpha.0", `"v1.39.0-alpha.0" is on Kubernetes 1.39, newer than any line`},
		// The pre-release line: anything but its pinned version, which
		// is not yet released.
		{"v1.38.0", `"v1.38.0" is no version of Kubernetes 1.38 the harness knows: ` + pinned},
		{"1.38.0", `"1.38.0" is no version of Kubernetes 1.38 the harness knows: ` + pinned},
		{"v1.38.1", `"v1.38.1" is no version of Kubernetes 1.38 the harness knows: ` + pinned},
		{"v1.38.0-beta.1", `"v1.38.0-beta.1" is no version of Kubernetes 1.38 the harness knows: ` + pinned},
		{"v1.38.0-alpha.0", `"v1.38.0-alpha.0" is no version of Kubernetes 1.38`},
		{"v1.38.0-rc.0", `"v1.38.0-rc.0" is no version of Kubernetes 1.38`},
		{"v1.38.0-rc.1", `"v1.38.0-rc.1" is no version of Kubernetes 1.38`},
		{"v1.38.1-beta.0", `"v1.38.1-beta.0" is no version of Kubernetes 1.38`},
		// A pre-release of a released line.
		{"v1.37.2-rc.0", `"v1.37.2-rc.0" is a pre-release of Kubernetes 1.37, which is released: write a release, such as v1.37.2`},
		{"v1.37.0-beta.0", `"v1.37.0-beta.0" is a pre-release of Kubernetes 1.37, which is released`},
		// Not the pinned pre-release as upstream tags it.
		{"v1.38.0-beta.0+meta", `"v1.38.0-beta.0+meta" is not a Kubernetes version`},
		{"v1.38.0-beta.0-dirty", `"v1.38.0-beta.0-dirty" is not a Kubernetes version`},
		{"v1.38.0-Beta.0", `"v1.38.0-Beta.0" is not a Kubernetes version`},
		{"v1.38.0-beta", `"v1.38.0-beta" is not a Kubernetes version`},
		{"v1.38.0-beta.00", `"v1.38.0-beta.00" is not a Kubernetes version`},
		{"v1.38.0-beta.0.1", `"v1.38.0-beta.0.1" is not a Kubernetes version`},
		{"v1.38.0beta.0", `"v1.38.0beta.0" is not a Kubernetes version`},
		{"v1.38-beta.0", `"v1.38-beta.0" is not a Kubernetes version`},
		{"v1.38.0-beta.0 ", `"v1.38.0-beta.0 " is not a Kubernetes version`},
		{"v1.38.0-pre.0", `"v1.38.0-pre.0" is not a Kubernetes version`},
		// No Kubernetes version at all.
		{"latest", `"latest" is not a Kubernetes version: want v1.MINOR.PATCH or 1.MINOR, such as v1.37.2 or 1.37`},
		{"", `"" is not a Kubernetes version`},
		{"v2.0.0", `"v2.0.0" is not a Kubernetes version`},
		{"1", `"1" is not a Kubernetes version`},
		{"v1.37.2+k3s1", `"v1.37.2+k3s1" is not a Kubernetes version`},
		{"v1.037.2", `"v1.037.2" is not a Kubernetes version`},
		{"V1.37.2", `"V1.37.2" is not a Kubernetes version`},
		{" v1.37.2", `" v1.37.2" is not a Kubernetes version`},
		{"v1.37.2.1", `"v1.37.2.1" is not a Kubernetes version`},
	} {
		l, release, err := Resolve(c.in)
		if err == nil {
			t.Errorf("Resolve(%q) = %v, %q; want an error", c.in, l, release)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Resolve(%q): %v\nwant: %s", c.in, err, c.want)
		}
		if _, ferr := Find(c.in); ferr == nil || ferr.Error() != err.Error() {
			t.Errorf("Find(%q): %v", c.in, ferr)
		}
	}
}

// A patch newer than its line's newest is no release yet; the line's own
// patches and the line alone pass; a version of no line is refused as Find
// refuses it.
func TestCheckPatch(t *testing.T) {
	for v, ok := range map[string]bool{
		"v1.36.3": true, "1.36.0": true, "1.36": true, "v1.36.99": false, "v1.37.3": false, "v1.30.1": false, "latest": false,
		"v1.38.0-beta.0": true, "1.38": true, "v1.38.0": false, "v1.38.0-rc.0": false, "v1.38.0-beta.0+meta": false, "v1.37.2-rc.0": false,
	} {
		if err := CheckPatch(v); (err == nil) != ok {
			t.Errorf("CheckPatch(%q) = %v, want ok %v", v, err, ok)
		}
	}
}

// A pre-release as an API server or a binary reports it, whatever follows
// it; a release, a release with what a build adds, and anything that is no
// Kubernetes version are none.
func TestIsPreRelease(t *testing.T) {
	for v, want := range map[string]bool{
		"v1.38.0-beta.0": true, "1.38.0-beta.0": true, "v1.38.0-rc.1": true, "v1.39.0-alpha.2": true,
		"v1.38.0-beta.0+0123456789ab": true, "v1.38.0-rc.1.12+abcdef": true, "v1.37.2-rc.0": true,
		"v1.37.2": false, "v1.37.2-dirty": false, "v1.37.2+k3s1": false, "v1.38": false, "": false,
		"v1.38.0-beta": false, "v1.38.0-beta.x": false, "v1.38.0-pre.0": false, "latest": false, "v2.0.0-rc.0": false,
		"v1.38.0-beta.01": false,
	} {
		if got := IsPreRelease(v); got != want {
			t.Errorf("IsPreRelease(%q) = %v, want %v", v, got, want)
		}
	}
}
