package kubelines

import (
	"strings"
	"testing"
)

func TestContainerdTable(t *testing.T) {
	if err := CheckContainerd(DefaultContainerd); err != nil {
		t.Errorf("the default: %v", err)
	}
	if err := CheckContainerd(Containerd17); err != nil {
		t.Errorf("the 1.7 release named: %v", err)
	}
	for _, l := range Lines() {
		support, ok := containerdSupport[l.Minor]
		if !ok {
			t.Errorf("%v: no containerd support listed", l)
			continue
		}
		// The line's floor is the oldest containerd the matrix pairs with it.
		oldest, _ := parseRelease(support[0])
		for _, s := range support {
			r, ok := parseRelease(s)
			if !ok || CheckContainerd(s) != nil {
				t.Errorf("%v: %q is no release the harness knows", l, s)
			}
			if r.less(oldest) {
				oldest = r
			}
		}
		if oldest.String() != l.MinContainerd {
			t.Errorf("%v: MinContainerd %s, but the oldest containerd its support lists is %s", l, l.MinContainerd, oldest)
		}
		if err := l.SupportsContainerd(DefaultContainerd); err != nil {
			t.Errorf("%v does not take the default containerd: %v", l, err)
		}
	}
}

func TestCheckContainerd(t *testing.T) {
	for v, want := range map[string]string{
		"2.3.7":      "",
		"v1.7.28":    "",
		"2.4.0":      "",
		"2.3":        "is not a containerd version",
		"latest":     "is not a containerd version",
		"2.3.7-1":    "containerd 2.3.7-1 is a pre-release",
		"2.4.0-rc.1": "containerd 2.4.0-rc.1 is a pre-release",
		"2.3.70":     "containerd 2.3.70 is no release the harness knows",
		"1.8.0":      "containerd 1.8.0 is no release the harness knows",
		"3.0.0":      "containerd 3.0.0 is no release the harness knows",
		"1.6.20":     "containerd 1.6.20 is no release the harness knows",
	} {
		err := CheckContainerd(v)
		switch {
		case want == "" && err != nil:
			t.Errorf("CheckContainerd(%q) = %v", v, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("CheckContainerd(%q) = %v, want %q", v, err, want)
		}
	}
}

func TestSupportsContainerd(t *testing.T) {
	line := func(v string) Line {
		l, err := Find(v)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, tc := range []struct{ line, containerd, want string }{
		{"1.35", "1.7.28", ""},
		{"1.35", "1.7.27", "containerd 1.7.27 is older than Kubernetes 1.35 supports on the 1.7 line"},
		{"1.35", "2.0.14", "containerd 2.0.14 does not support Kubernetes 1.35"},
		{"1.35", "2.1.4", "older than Kubernetes 1.35 supports on the 2.1 line"},
		{"1.35", "2.1.5", ""},
		{"1.35", "2.3.7", ""},
		{"1.36", "1.7.28", "1.35 is the last line that supports containerd 1.x"},
		{"1.36", "2.1.9", "containerd 2.1.9 does not support Kubernetes 1.36"},
		{"1.36", "2.2.0", ""},
		{"1.36", "2.4.2", ""},
		{"1.37", "2.2.9", "pairs 1.37 with 2.4.0+, 2.3.0+"},
		{"1.37", "2.3.0", ""},
	} {
		err := line(tc.line).SupportsContainerd(tc.containerd)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s with containerd %s: %v", tc.line, tc.containerd, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s with containerd %s: %v, want %q", tc.line, tc.containerd, err, tc.want)
		}
	}
}
