package hyperv_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/testing/hypervhost"
)

// The host answers exactly the provider's scripts, with the parameters
// their headers declare: a script added to the provider, or a parameter
// added to one, without the host learning it fails here rather than as a
// problem in some later test.
func TestHostKnowsEveryScript(t *testing.T) {
	dir := "scripts"
	files, err := filepath.Glob(filepath.Join(dir, "hyperv-*.ps1"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in %s: %v", dir, err)
	}
	known := hypervhost.Scripts()
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".ps1")
		if name == "hyperv-lib" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n", 3)
		decl, ok := strings.CutPrefix(lines[1], "# parameters: ")
		if !ok {
			t.Errorf("%s: no parameters line", f)
			continue
		}
		var params []string
		for _, p := range strings.Split(decl, ",") {
			params = append(params, strings.TrimSpace(p))
		}
		want, ok := known[name]
		if !ok {
			t.Errorf("the host does not answer %s", name)
			continue
		}
		delete(known, name)
		if !slices.Equal(want, params) {
			t.Errorf("%s takes %v, the host reads %v", name, params, want)
		}
	}
	for name := range known {
		t.Errorf("the host answers %s, which the provider does not have", name)
	}
}
