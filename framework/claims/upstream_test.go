package claims

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/winconform/winconform/internal/kubelines"
)

// pinnedKubernetes is the k8s.io/kubernetes version the harness's go.mod
// requires: the e2e framework the suites are built on, and the release
// whose test/e2e/windows the upstream claims were read from.
func pinnedKubernetes(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod requires no k8s.io/kubernetes")
	}
	return string(m[1])
}

// The upstream documents are read at the version go.mod pins: when go.mod
// moves to a new line, the catalogue must be read again.
func TestUpstreamDocumentsAreReadAtThePinnedVersion(t *testing.T) {
	pinned := pinnedKubernetes(t)
	if ReadAt != pinned {
		t.Errorf("the catalogue was read at %s, go.mod pins k8s.io/kubernetes %s: read test/e2e/windows and the limitations again", ReadAt, pinned)
	}
	line := "Kubernetes " + strings.Join(strings.Split(strings.TrimPrefix(pinned, "v"), ".")[:2], ".")
	for _, d := range documents {
		if strings.HasPrefix(d.Key, "upstream:") && d.Era != line {
			t.Errorf("document %s: era %q, want %q (read at %s)", d.Key, d.Era, line, pinned)
		}
	}
}

// Every upstream file a document names exists at the pinned version, in
// the module cache the suites are built from.
func TestUpstreamDocumentsNameFilesThatExist(t *testing.T) {
	pinned := pinnedKubernetes(t)
	out, err := exec.Command("go", "list", "-m", "-json", "k8s.io/kubernetes@"+pinned).Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/kubernetes@%s: %v", pinned, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("k8s.io/kubernetes@%s is not in the module cache (go mod download it): %s", pinned, out)
	}
	paths := regexp.MustCompile(`test/e2e/[a-z/_]+\.go`)
	for _, d := range documents {
		if !strings.HasPrefix(d.Key, "upstream:") {
			continue
		}
		named := paths.FindAllString(d.Title, -1)
		if len(named) == 0 {
			t.Errorf("document %s names no upstream file: %q", d.Key, d.Title)
		}
		for _, p := range named {
			if _, err := os.Stat(filepath.Join(mod.Dir, p)); err != nil {
				t.Errorf("document %s names %s, which k8s.io/kubernetes %s does not have", d.Key, p, pinned)
			}
		}
		if file := strings.TrimPrefix(d.Key, "upstream:"); !strings.Contains(d.Title, "/"+file) {
			t.Errorf("document %s does not name its file %s: %q", d.Key, file, d.Title)
		}
	}
}

// The catalogue's limitation data were checked for every line the harness
// supports: a line newer than CheckedThrough's means reading them again.
// CheckedThrough is ReadAt or newer, and a newer one is the version a line
// is pinned to.
func TestLimitationsCheckedForEverySupportedLine(t *testing.T) {
	read := version.MustParseGeneric(CheckedThrough)
	for _, l := range kubelines.Lines() {
		if v := version.MustParseGeneric(l.Version); v.Minor() > read.Minor() {
			t.Errorf("line %s is supported, the catalogue was checked through %s: check each limitation at %s", l, CheckedThrough, l.Version)
		}
	}
	if CheckedThrough != ReadAt {
		if version.MustParseGeneric(CheckedThrough).LessThan(version.MustParseGeneric(ReadAt)) {
			t.Errorf("CheckedThrough %s is older than ReadAt %s", CheckedThrough, ReadAt)
		}
		if l, err := kubelines.Find(CheckedThrough); err != nil || l.Version != CheckedThrough {
			t.Errorf("CheckedThrough %s is no version a line of internal/kubelines is pinned to: %v", CheckedThrough, err)
		}
	}
}
