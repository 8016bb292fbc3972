package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"

	"github.com/winconform/winconform/infra/gotool"
	"github.com/winconform/winconform/infra/nodeimage"
)

// Source is a Go file of a module the harness depends on, read from the
// module cache at the version the build uses: where the Linux build cannot
// run a component's Windows code, its facts are read from the Windows file.
type Source struct {
	// Module and Path name the file: k8s.io/kubernetes,
	// cmd/kubeadm/app/apis/kubeadm/v1beta4/defaults_windows.go.
	Module, Path string
	// Version is the module's version the file was read at.
	Version string

	file *ast.File
}

// String cites the file.
func (s *Source) String() string { return s.Module + "@" + s.Version + " " + s.Path }

var (
	moduleMu   sync.Mutex
	moduleDirs = map[string]moduleInfo{}
)

type moduleInfo struct{ Dir, Version string }

// moduleDir is where the module the build uses is in the module cache.
func moduleDir(module string) (moduleInfo, error) {
	moduleMu.Lock()
	defer moduleMu.Unlock()
	if m, ok := moduleDirs[module]; ok {
		return m, nil
	}
	out, err := exec.Command("go", "list", "-m", "-json", module).Output()
	if err != nil {
		return moduleInfo{}, fmt.Errorf("upstream: go list -m %s: %v", module, err)
	}
	var m struct {
		Dir, Version string
		Replace      *struct{ Dir, Version string }
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return moduleInfo{}, err
	}
	info := moduleInfo{Dir: m.Dir, Version: m.Version}
	if m.Replace != nil {
		info = moduleInfo{Dir: m.Replace.Dir, Version: m.Replace.Version}
	}
	if info.Dir == "" {
		// Not downloaded yet: go mod download puts it in the cache.
		if out, err := exec.Command("go", "mod", "download", "-json", module+"@"+info.Version).Output(); err == nil {
			var d struct{ Dir string }
			if json.Unmarshal(out, &d) == nil {
				info.Dir = d.Dir
			}
		}
	}
	if info.Dir == "" {
		return moduleInfo{}, fmt.Errorf("upstream: the source of %s is not in the module cache", module)
	}
	moduleDirs[module] = info
	return info, nil
}

// ReadSource parses a file of a module the build uses.
func ReadSource(module, path string) (*Source, error) {
	m, err := moduleDir(module)
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(m.Dir, filepath.FromSlash(path)), nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("upstream: %v", err)
	}
	return &Source{Module: module, Path: path, Version: m.Version, file: f}, nil
}

// StringConst is the value of the string constant name the file declares.
func (s *Source) StringConst(name string) (string, error) {
	for _, d := range s.file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			for i, n := range v.Names {
				if n.Name != name || i >= len(v.Values) {
					continue
				}
				if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					return strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return "", fmt.Errorf("upstream: %s declares no string constant %s", s, name)
}

// function is the body of the function or method called name.
func (s *Source) function(name string) (*ast.FuncDecl, error) {
	for _, d := range s.file.Decls {
		if f, ok := d.(*ast.FuncDecl); ok && f.Name.Name == name && f.Body != nil {
			return f, nil
		}
	}
	return nil, fmt.Errorf("upstream: %s has no function %s", s, name)
}

// flagMethod is a pflag.FlagSet method that defines a flag whose name is
// its first string argument: BoolVar, StringVar, Var, DurationVarP, ...
var flagMethod = regexp.MustCompile(`^(Bool|String|Int|Int32|Int64|Uint|Uint32|Float64|Duration|StringSlice|StringArray|IP|IPNet)?(Var)?P?$`)

// FlagNames are the names of the flags function name defines on a
// pflag.FlagSet.
func (s *Source) FlagNames(function string) ([]string, error) {
	f, err := s.function(function)
	if err != nil {
		return nil, err
	}
	var names []string
	ast.Inspect(f.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !flagMethod.MatchString(sel.Sel.Name) || sel.Sel.Name == "" {
			return true
		}
		for _, a := range call.Args {
			if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil {
					names = append(names, v)
				}
				break
			}
		}
		return true
	})
	if len(names) == 0 {
		return nil, fmt.Errorf("upstream: %s: %s defines no flag the reader recognises", s, function)
	}
	return names, nil
}

// RefusedFields are the fields of receiver (a parameter's name, such as
// kc) that function refuses when set: the fields named in the condition of
// an if statement whose body returns an error.
func (s *Source) RefusedFields(function, receiver string) ([]string, error) {
	f, err := s.function(function)
	if err != nil {
		return nil, err
	}
	var fields []string
	ast.Inspect(f.Body, func(n ast.Node) bool {
		stmt, ok := n.(*ast.IfStmt)
		if !ok || !returnsError(stmt.Body) {
			return true
		}
		ast.Inspect(stmt.Cond, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == receiver {
					fields = append(fields, sel.Sel.Name)
				}
			}
			return true
		})
		return true
	})
	if len(fields) == 0 {
		return nil, fmt.Errorf("upstream: %s: %s refuses no field of %s the reader recognises", s, function, receiver)
	}
	return fields, nil
}

// returnsError says whether a block returns something other than nil.
func returnsError(b *ast.BlockStmt) bool {
	for _, st := range b.List {
		r, ok := st.(*ast.ReturnStmt)
		if !ok || len(r.Results) == 0 {
			continue
		}
		if id, ok := r.Results[len(r.Results)-1].(*ast.Ident); ok && id.Name == "nil" {
			continue
		}
		return true
	}
	return false
}

// Selectors are the names selected (X.Name) in function's body, such as
// ProxyModeKernelspace of kubeproxyconfig.ProxyModeKernelspace.
func (s *Source) Selectors(function string) ([]string, error) {
	f, err := s.function(function)
	if err != nil {
		return nil, err
	}
	var out []string
	ast.Inspect(f.Body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			out = append(out, sel.Sel.Name)
		}
		return true
	})
	return out, nil
}

// ReadModuleSource parses a file of module@version, downloaded into the
// module cache (through the Go module proxy) when the build does not use
// the module: the source of a component the harness builds or runs but
// does not link (MetalLB's speaker, say).
func ReadModuleSource(module, version, path string) (*Source, error) {
	dir, _, err := gotool.Download(context.Background(), nil, filepath.Join(nodeimage.DefaultCacheDir(), "upstream"), module+"@"+version)
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, filepath.FromSlash(path)), nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("upstream: %v", err)
	}
	return &Source{Module: module, Path: path, Version: version, file: f}, nil
}

// Calls are the names of the functions function calls (f of f(...) and
// of x.f(...)), all of them; under, when set, keeps only those called in
// the body of an if statement whose condition names it (a selector such as
// ServiceExternalTrafficPolicyTypeLocal).
func (s *Source) Calls(function, under string) ([]string, error) {
	f, err := s.function(function)
	if err != nil {
		return nil, err
	}
	var out []string
	var walk func(n ast.Node, inside bool)
	walk = func(n ast.Node, inside bool) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.IfStmt:
				if under == "" {
					return true
				}
				names := false
				ast.Inspect(x.Cond, func(c ast.Node) bool {
					if sel, ok := c.(*ast.SelectorExpr); ok && sel.Sel.Name == under {
						names = true
					}
					return true
				})
				if x.Init != nil {
					walk(x.Init, inside)
				}
				walk(x.Cond, inside)
				walk(x.Body, inside || names)
				if x.Else != nil {
					walk(x.Else, inside)
				}
				return false
			case *ast.CallExpr:
				if inside == (under != "") {
					switch fn := x.Fun.(type) {
					case *ast.Ident:
						out = append(out, fn.Name)
					case *ast.SelectorExpr:
						out = append(out, fn.Sel.Name)
					}
				}
			}
			return true
		})
	}
	walk(f.Body, false)
	return out, nil
}
