package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What a command says on stderr passes through the one redaction (errOut):
// no file of the CLI names os.Stderr but main.go's errOut, and the programs
// a command runs (their own output, as a Stderr field).
func TestStderrOnlyThroughTheRedaction(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		allowed := map[ast.Node]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr: // exec.Cmd{Stderr: os.Stderr}, Options{Stderr: ...}
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Stderr" {
					allowed[n.Value] = true
				}
			case *ast.AssignStmt: // c.Stderr = os.Stderr
				for i, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Stderr" && i < len(n.Rhs) {
						allowed[n.Rhs[i]] = true
					}
				}
			case *ast.ValueSpec: // var errOut = redact.Writer(os.Stderr)
				if name == "main.go" && len(n.Names) == 1 && n.Names[0].Name == "errOut" {
					ast.Inspect(n, func(m ast.Node) bool {
						if sel, ok := m.(*ast.SelectorExpr); ok {
							allowed[sel] = true
						}
						return true
					})
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && !allowed[sel] {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" && sel.Sel.Name == "Stderr" {
					t.Errorf("%s: os.Stderr outside the redaction: write to errOut (or the command's ErrOrStderr)", fset.Position(sel.Pos()))
				}
			}
			return true
		})
	}
	if _, err := os.Stat("main.go"); err != nil {
		t.Fatal("the test runs in the CLI's folder:", err)
	}
}
