package startscript

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// resolver finds the values a path expression may have: string literals,
// expandable strings, variables (every value the script assigns them),
// $env: variables (the container's environment, and what the script sets),
// Join-Path, Split-Path -Parent, comma lists and parentheses. Anything else
// is an error.
type resolver struct {
	s        *Script
	env      Env
	visiting map[string]bool
}

const (
	maxDepth  = 32
	maxValues = 256
)

func trimNewlines(expr []token) []token {
	for len(expr) > 0 && expr[0].kind == tNewline {
		expr = expr[1:]
	}
	for len(expr) > 0 && expr[len(expr)-1].kind == tNewline {
		expr = expr[:len(expr)-1]
	}
	return expr
}

// resolve is an expression's values. stmt says it stands where PowerShell
// reads a statement (an assignment's right-hand side, inside parentheses),
// where a bareword is a command; elsewhere (a command's argument) a
// bareword is a string.
func (r *resolver) resolve(expr []token, depth int, stmt bool) ([]string, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deep")
	}
	expr = trimNewlines(expr)
	if len(expr) == 0 {
		return nil, errors.New("an empty expression")
	}
	if parts := splitTop(expr, ","); len(parts) > 1 {
		var out []string
		for _, p := range parts {
			v, err := r.resolve(p, depth+1, stmt)
			if err != nil {
				return nil, err
			}
			out = append(out, v...)
		}
		return out, nil
	}
	first := expr[0]
	if first.kind == tOp && (first.text == "(" || first.text == "$(") && matching(expr, 0) == len(expr)-1 {
		return r.resolve(expr[1:len(expr)-1], depth+1, true)
	}
	if first.kind == tWord && strings.EqualFold(first.text, "Join-Path") {
		return r.joinPath(expr[1:], depth)
	}
	if first.kind == tWord && strings.EqualFold(first.text, "Split-Path") && len(expr) >= 3 && strings.EqualFold(expr[1].text, "-Parent") {
		v, err := r.resolve(expr[2:], depth+1, false)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, p := range v {
			p = strings.TrimRight(strings.ReplaceAll(p, "/", `\`), `\`)
			if k := strings.LastIndexByte(p, '\\'); k >= 0 {
				out = append(out, p[:k+1])
			}
		}
		return out, nil
	}
	if len(expr) == 1 {
		switch first.kind {
		case tString:
			if !first.expandable {
				return []string{first.text}, nil
			}
			return r.expand(first.text, depth+1)
		case tVar:
			if !first.splat {
				return r.variable(first.text, depth+1)
			}
		case tWord:
			if !stmt && !isParameter(first.text) {
				return []string{first.text}, nil
			}
		}
	}
	return nil, fmt.Errorf("the model cannot resolve %s", text(expr))
}

// joinPath is Join-Path [-Path] a [-ChildPath] b: a and b joined with one
// backslash, for every value of each.
func (r *resolver) joinPath(args []token, depth int) ([]string, error) {
	bound := map[string][]token{}
	var positional [][]token
	for j := 0; j < len(args); {
		a := args[j]
		if a.kind == tNewline {
			j++
			continue
		}
		if a.kind == tWord && isParameter(a.text) {
			n := operandEnd(args, j+1)
			bound[strings.ToLower(a.text[1:])] = args[j+1 : n]
			j = n
			continue
		}
		n := operandEnd(args, j)
		if n == j {
			return nil, fmt.Errorf("Join-Path %s: the model cannot read it", text(args))
		}
		positional = append(positional, args[j:n])
		j = n
	}
	for k, name := range []string{"path", "childpath"} {
		if _, ok := bound[name]; !ok && k < len(positional) {
			bound[name] = positional[k]
		}
	}
	if bound["path"] == nil || bound["childpath"] == nil || len(bound) != 2 {
		return nil, fmt.Errorf("Join-Path %s: the model reads Join-Path with a path and a child path only", text(args))
	}
	parents, err := r.resolve(bound["path"], depth+1, false)
	if err != nil {
		return nil, err
	}
	children, err := r.resolve(bound["childpath"], depth+1, false)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range parents {
		for _, c := range children {
			out = append(out, strings.TrimRight(p, `\/`)+`\`+strings.TrimLeft(c, `\/`))
		}
	}
	return limit(out)
}

// variable is every value the script assigns a variable; for $env:NAME,
// the container's value as well.
func (r *resolver) variable(name string, depth int) ([]string, error) {
	if name == "null" {
		return []string{""}, nil
	}
	if r.visiting == nil {
		r.visiting = map[string]bool{}
	}
	if r.visiting[name] {
		return nil, fmt.Errorf("$%s is assigned from itself", name)
	}
	r.visiting[name] = true
	defer delete(r.visiting, name)
	var out []string
	if env, ok := strings.CutPrefix(name, "env:"); ok {
		found := false
		for k, v := range r.env {
			if strings.EqualFold(k, env) {
				if v == Unknown {
					return nil, fmt.Errorf("$env:%s comes from outside the manifest (valueFrom)", k)
				}
				out = append(out, v)
				found = true
			}
		}
		if !found && len(r.s.assigns[name]) == 0 {
			return nil, fmt.Errorf("$env:%s is not in the container's environment", env)
		}
	} else if len(r.s.assigns[name]) == 0 {
		return nil, fmt.Errorf("$%s is not assigned in the script (a parameter, a loop variable?)", name)
	}
	for _, a := range r.s.assigns[name] {
		v, err := r.resolve(a.rhs, depth+1, true)
		if err != nil {
			return nil, fmt.Errorf("$%s (line %d): %w", name, a.line, err)
		}
		out = append(out, v...)
	}
	slices.Sort(out)
	return limit(slices.Compact(out))
}

// expand is an expandable string's values: its $variables, ${variables}
// and $( ) subexpressions resolved, its `-escapes taken.
func (r *resolver) expand(s string, depth int) ([]string, error) {
	values := []string{""}
	appendAll := func(parts []string) error {
		var next []string
		for _, v := range values {
			for _, p := range parts {
				next = append(next, v+p)
			}
		}
		var err error
		values, err = limit(next)
		return err
	}
	var lit strings.Builder
	flush := func() error {
		if lit.Len() == 0 {
			return nil
		}
		err := appendAll([]string{lit.String()})
		lit.Reset()
		return err
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '`' && i+1 < len(s):
			i++
			lit.WriteByte(s[i])
		case c == '"' && i+1 < len(s) && s[i+1] == '"':
			i++
			lit.WriteByte('"')
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			end, err := endOfSubexpression(s, i+2)
			if err != nil {
				return nil, err
			}
			toks, err := lex(s[i+2 : end])
			if err != nil {
				return nil, err
			}
			v, err := r.resolve(toks, depth+1, true)
			if err != nil {
				return nil, err
			}
			if err := flush(); err != nil {
				return nil, err
			}
			if err := appendAll(v); err != nil {
				return nil, err
			}
			i = end
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, errors.New("${ without }")
			}
			v, err := r.variable(strings.ToLower(s[i+2:i+end]), depth+1)
			if err != nil {
				return nil, err
			}
			if err := flush(); err != nil {
				return nil, err
			}
			if err := appendAll(v); err != nil {
				return nil, err
			}
			i += end
		case c == '$' && i+1 < len(s) && isWordStart(s[i+1]):
			j := i + 1
			for j < len(s) && isVarChar(s, j) {
				j++
			}
			v, err := r.variable(strings.ToLower(s[i+1:j]), depth+1)
			if err != nil {
				return nil, err
			}
			if err := flush(); err != nil {
				return nil, err
			}
			if err := appendAll(v); err != nil {
				return nil, err
			}
			i = j - 1
		default:
			lit.WriteByte(c)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return values, nil
}

// programArgs are a program's arguments as far as the model resolves them;
// an array splatted (@args) gives its elements.
func (r *resolver) programArgs(args [][]token) []string {
	var out []string
	for _, a := range args {
		if len(a) == 1 && a[0].kind == tVar && a[0].splat {
			for _, as := range r.s.assigns[a[0].text] {
				rhs := trimNewlines(as.rhs)
				if len(rhs) >= 2 && rhs[0].text == "@(" && matching(rhs, 0) == len(rhs)-1 {
					rhs = rhs[1 : len(rhs)-1]
				}
				for _, e := range splitTop(rhs, ",") {
					if v, err := r.resolve(e, 0, false); err == nil {
						out = append(out, v...)
					}
				}
			}
			continue
		}
		if v, err := r.resolve(a, 0, false); err == nil {
			out = append(out, v...)
		}
	}
	return out
}

func limit(v []string) ([]string, error) {
	if len(v) > maxValues {
		return nil, fmt.Errorf("more than %d values", maxValues)
	}
	return v, nil
}
