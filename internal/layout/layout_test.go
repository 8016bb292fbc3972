// Package layout_test holds the house rules of the tree: the import table
// of docs/layout.md, and that no product binary links a test double.
package layout_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/winconform/winconform"

// root is the module's directory.
func root(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// part is the top-level part a package of the module belongs to, "" for
// another module's.
func part(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, module)
	if !ok || (rest != "" && rest[0] != '/') {
		return ""
	}
	rest = strings.TrimPrefix(rest, "/")
	if rest == "" {
		return "root"
	}
	first, _, _ := strings.Cut(rest, "/")
	return first
}

var cell = regexp.MustCompile("`([^`]+)`")

// table reads docs/layout.md's table: each part and the parts it may import.
func table(t *testing.T, dir string) map[string]map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name := cell.FindStringSubmatch(cells[1])[1]
		allowed[name] = map[string]bool{}
		for _, m := range cell.FindAllStringSubmatch(cells[3], -1) {
			allowed[name][m[1]] = true
		}
	}
	if len(allowed) < 5 {
		t.Fatalf("docs/layout.md holds a table of %d parts", len(allowed))
	}
	return allowed
}

type pkg struct {
	ImportPath, Dir                    string
	Imports, TestImports, XTestImports []string
}

func list(t *testing.T, dir string, env []string, args ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Dir,Imports,TestImports,XTestImports"}, args...)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// Every import between two parts is one the table allows: a package's own
// imports by its part's row, its tests' by the row and testing.
func TestImportsFollowTheLayout(t *testing.T) {
	dir := root(t)
	allowed := table(t, dir)
	pkgs := list(t, dir, nil, "./...")
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	check := func(from pkg, imports []string, test bool) {
		p := part(from.ImportPath)
		row, ok := allowed[p]
		if !ok {
			t.Errorf("%s is in part %q, which docs/layout.md does not name", from.ImportPath, p)
			return
		}
		for _, imp := range imports {
			q := part(imp)
			if q == "" || q == p || row[q] || (test && q == "testing") {
				continue
			}
			what := "imports"
			if test {
				what = "tests import"
			}
			t.Errorf("%s (%s) %s %s (%s): docs/layout.md does not allow %s to import %s", from.ImportPath, p, what, imp, q, p, q)
		}
	}
	for _, p := range pkgs {
		check(p, p.Imports, false)
		check(p, append(p.TestImports, p.XTestImports...), true)
	}
}

// The product binaries (the CLI, the suite binary, the suite runner, the
// probe for Linux and Windows) link no test double.
func TestProductBinariesLinkNoTestDouble(t *testing.T) {
	dir := root(t)
	for _, c := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"-deps", "./cmd/winconform", "./images/suiterunner", "./images/probe"}},
		{nil, []string{"-deps", "-test", "./suites"}},
		{[]string{"GOOS=windows"}, []string{"-deps", "./images/probe"}},
	} {
		for _, p := range list(t, dir, c.env, c.args...) {
			if part(p.ImportPath) == "testing" {
				t.Errorf("go list %s links %s, a test double", strings.Join(c.args, " "), p.ImportPath)
			}
		}
	}
}

// The rule itself: a table that forbids an import the tree makes is
// caught (the check cannot pass whatever the tree holds).
func TestPartNamesThePart(t *testing.T) {
	for pkg, want := range map[string]string{
		module:                                     "root",
		module + "/cmd/winconform":                 "cmd",
		module + "/testing/wsmantest":              "testing",
		module + "/testingx":                       "testingx",
		module + "/internal/kubenode":              "internal",
		module + "x/cmd":                           "",
		"k8s.io/client-go/kubernetes":              "",
		module + "/infra/windows/scripts/steptest": "infra",
	} {
		if got := part(pkg); got != want {
			t.Errorf("part(%q) = %q, want %q", pkg, got, want)
		}
	}
}
