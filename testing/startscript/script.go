package startscript

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Script is a start script as the model reads it.
type Script struct {
	Name     string
	toks     []token
	assigns  map[string][]assignment
	writes   []Access
	reads    []Access
	programs []program
	patterns []string
	problems []string
}

type assignment struct {
	line int
	rhs  []token
}

// Access is a place a script writes or reads on the node's file system.
type Access struct {
	Line int
	// What is the command and parameter: Set-Content -LiteralPath,
	// Move-Item -Destination, flanneld.exe --subnet-file.
	What string
	// Dir is a directory the script makes (New-Item -ItemType Directory):
	// making one that is already there changes nothing.
	Dir  bool
	expr []token
	// fixed is the path of a program's write (no expression to resolve).
	fixed string
}

type program struct {
	line int
	expr []token
	args [][]token
}

// pathParams says which parameters of a command name paths, and its
// positional parameters in order.
type pathParams struct {
	canonical  string
	named      map[string]string // a parameter (lower case, aliases too) to its canonical name
	positional []string          // canonical names of the positional parameters
	writes     []string          // canonical names that are written (or removed)
	reads      []string          // canonical names that are read
	switches   []string          // parameters that take no value
}

var commonSwitches = []string{"force", "recurse", "raw", "passthru", "nonewline", "whatif", "confirm", "noclobber", "append", "container", "asbytestream", "wait", "resolve", "isvalid", "erroraction"}

func params(canonical string, named map[string]string, positional, writes, reads []string) *pathParams {
	return &pathParams{canonical: canonical, named: named, positional: positional, writes: writes, reads: reads, switches: commonSwitches}
}

var pathAliases = map[string]string{"path": "Path", "literalpath": "LiteralPath", "lp": "LiteralPath", "pspath": "LiteralPath"}

func with(m map[string]string, more ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(more); i += 2 {
		out[more[i]] = more[i+1]
	}
	return out
}

// commands are the cmdlets (and their aliases) that write or read files, as
// PowerShell 5.1 and 7 define their path parameters.
var commands = func() map[string]*pathParams {
	m := map[string]*pathParams{}
	add := func(p *pathParams, names ...string) {
		for _, n := range names {
			m[n] = p
		}
	}
	content := params("Set-Content", pathAliases, []string{"Path"}, []string{"Path", "LiteralPath"}, nil)
	add(content, "set-content", "sc")
	add(params("Add-Content", pathAliases, []string{"Path"}, []string{"Path", "LiteralPath"}, nil), "add-content", "ac")
	add(params("Clear-Content", pathAliases, []string{"Path"}, []string{"Path", "LiteralPath"}, nil), "clear-content", "clc")
	add(params("Out-File", with(pathAliases, "filepath", "Path"), []string{"Path"}, []string{"Path", "LiteralPath"}, nil), "out-file")
	add(params("Tee-Object", with(pathAliases, "filepath", "Path"), []string{"Path"}, []string{"Path", "LiteralPath"}, nil), "tee-object", "tee")
	newItem := params("New-Item", with(pathAliases, "name", "Name", "itemtype", "ItemType", "type", "ItemType", "value", "Value"), []string{"Path"}, []string{"Path", "LiteralPath"}, nil)
	add(newItem, "new-item", "ni")
	add(params("mkdir", with(pathAliases, "name", "Name"), []string{"Path"}, []string{"Path", "LiteralPath"}, nil), "mkdir", "md")
	add(params("Copy-Item", with(pathAliases, "destination", "Destination"), []string{"Path", "Destination"}, []string{"Destination"}, []string{"Path", "LiteralPath"}), "copy-item", "cp", "copy", "cpi")
	add(params("Move-Item", with(pathAliases, "destination", "Destination"), []string{"Path", "Destination"}, []string{"Path", "LiteralPath", "Destination"}, nil), "move-item", "mv", "move", "mi")
	add(params("Remove-Item", pathAliases, []string{"Path"}, []string{"Path", "LiteralPath"}, nil), "remove-item", "rm", "del", "erase", "rd", "rmdir", "ri")
	add(params("Rename-Item", with(pathAliases, "newname", "NewName"), []string{"Path", "NewName"}, []string{"Path", "LiteralPath", "NewName"}, nil), "rename-item", "ren", "rni")
	add(params("Set-Acl", pathAliases, []string{"Path"}, []string{"Path", "LiteralPath"}, nil), "set-acl")
	add(params("Export-Csv", pathAliases, []string{"Path"}, []string{"Path", "LiteralPath"}, nil), "export-csv")
	add(params("Export-Clixml", pathAliases, []string{"Path"}, []string{"Path", "LiteralPath"}, nil), "export-clixml")
	add(params("Expand-Archive", with(pathAliases, "destinationpath", "DestinationPath"), []string{"Path", "DestinationPath"}, []string{"DestinationPath"}, []string{"Path", "LiteralPath"}), "expand-archive")
	add(params("Invoke-WebRequest", map[string]string{"outfile": "OutFile", "uri": "Uri"}, []string{"Uri"}, []string{"OutFile"}, nil), "invoke-webrequest", "iwr", "curl", "wget")
	add(params("Get-Content", pathAliases, []string{"Path"}, nil, []string{"Path", "LiteralPath"}), "get-content", "gc", "cat", "type")
	add(params("Test-Path", pathAliases, []string{"Path"}, nil, []string{"Path", "LiteralPath"}), "test-path")
	return m
}()

// staticWrites are the .NET methods that write a file or directory named by
// their first argument (and, for Move and Copy, their second).
var staticWrites = map[string][]int{
	"writealltext": {0}, "writeallbytes": {0}, "writealllines": {0}, "appendalltext": {0}, "appendalllines": {0},
	"create": {0}, "createtext": {0}, "delete": {0}, "createdirectory": {0}, "move": {0, 1}, "copy": {1}, "replace": {1},
}

var staticReads = map[string][]int{"readalltext": {0}, "readallbytes": {0}, "readalllines": {0}, "exists": {0}, "copy": {0}}

var fileTypes = []string{"io.file", "system.io.file", "io.directory", "system.io.directory"}

// Parse reads a start script.
func Parse(name, text string) (*Script, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &Script{Name: name, toks: toks, assigns: map[string][]assignment{}}
	var brackets []string // the brackets open before toks[i]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		inHashtable := len(brackets) > 0 && brackets[len(brackets)-1] == "@{"
		if opens(t) {
			brackets = append(brackets, t.text)
		} else if closes(t) && len(brackets) > 0 {
			brackets = brackets[:len(brackets)-1]
		}
		if inHashtable && keyPosition(toks, i) {
			// A key of a hashtable literal (Type = 'Overlay'), not a command.
			continue
		}
		switch {
		case t.kind == tVar && !t.splat && commandPosition(toks, i) && i+1 < len(toks) && toks[i+1].kind == tOp && toks[i+1].text == "=":
			end := statementEnd(toks, i+2)
			s.assigns[t.text] = append(s.assigns[t.text], assignment{line: t.line, rhs: toks[i+2 : end]})
		case t.kind == tWord && commandPosition(toks, i):
			if p, ok := commands[strings.ToLower(t.text)]; ok {
				s.command(p, toks, i)
			}
		case t.kind == tOp && t.text == "&" && commandPosition(toks, i):
			end := commandEnd(toks, i+1)
			ops := operands(toks[i+1 : end])
			if len(ops) == 0 {
				s.problems = append(s.problems, fmt.Sprintf("line %d: & without a program", t.line))
				continue
			}
			s.programs = append(s.programs, program{line: t.line, expr: ops[0], args: ops[1:]})
		case t.kind == tRedirect && !strings.Contains(t.text, "&"):
			end := commandEnd(toks, i+1)
			ops := operands(toks[i+1 : end])
			if len(ops) == 0 {
				s.problems = append(s.problems, fmt.Sprintf("line %d: %s without a file", t.line, t.text))
				continue
			}
			s.writes = append(s.writes, Access{Line: t.line, What: "redirection " + t.text, expr: ops[0]})
		case t.kind == tType && slices.Contains(fileTypes, strings.ToLower(t.text)) && i+3 < len(toks) && toks[i+1].text == "::" && toks[i+3].text == "(":
			method := strings.ToLower(toks[i+2].text)
			close := matching(toks, i+3)
			args := splitTop(toks[i+4:close], ",")
			what := "[" + t.text + "]::" + toks[i+2].text
			if idx, ok := staticWrites[method]; ok {
				for _, n := range idx {
					if n < len(args) {
						s.writes = append(s.writes, Access{Line: t.line, What: what, expr: args[n], Dir: method == "createdirectory"})
					}
				}
			}
			if idx, ok := staticReads[method]; ok {
				for _, n := range idx {
					if n < len(args) {
						s.reads = append(s.reads, Access{Line: t.line, What: what, expr: args[n]})
					}
				}
			}
			if _, w := staticWrites[method]; !w {
				if _, r := staticReads[method]; !r {
					s.problems = append(s.problems, fmt.Sprintf("line %d: %s: the model does not know whether it writes", t.line, what))
				}
			}
		case t.kind == tWord && strings.EqualFold(t.text, "-match") && i+1 < len(toks) && toks[i+1].kind == tString && !toks[i+1].expandable:
			s.patterns = append(s.patterns, toks[i+1].text)
		}
	}
	return s, nil
}

// command records the paths a file cmdlet at toks[i] writes and reads.
func (s *Script) command(p *pathParams, toks []token, i int) {
	end := commandEnd(toks, i+1)
	args := toks[i+1 : end]
	bound := map[string][]token{}
	var positional [][]token
	for j := 0; j < len(args); {
		a := args[j]
		if a.kind == tWord && isParameter(a.text) {
			name := strings.ToLower(strings.TrimPrefix(a.text, "-"))
			if k := strings.IndexByte(name, ':'); k >= 0 {
				name = name[:k]
				j++
				continue
			}
			canonical, known := p.named[name]
			if !known && slices.Contains(p.switches, name) {
				j++
				continue
			}
			if !known {
				// Another parameter with a value (-Encoding ASCII, -ItemType Directory).
				canonical = name
			}
			n := operandEnd(args, j+1)
			bound[canonical] = args[j+1 : n]
			j = n
			continue
		}
		n := operandEnd(args, j)
		if n == j {
			j++
			continue
		}
		positional = append(positional, args[j:n])
		j = n
	}
	// Positional arguments take the positional parameters not named; -Path
	// and -LiteralPath are one (two parameter sets).
	free := slices.DeleteFunc(slices.Clone(p.positional), func(name string) bool {
		_, named := bound[name]
		if name == "Path" {
			_, lit := bound["LiteralPath"]
			named = named || lit
		}
		return named
	})
	for k, v := range positional {
		if k < len(free) {
			bound[free[k]] = v
		}
	}
	dir := false
	if it, ok := bound["ItemType"]; ok && len(it) == 1 && strings.EqualFold(it[0].text, "directory") {
		dir = true
	}
	if p.canonical == "mkdir" {
		dir = true
	}
	name := bound["Name"]
	record := func(list *[]Access, canonical string) {
		expr, ok := bound[canonical]
		if !ok {
			return
		}
		if p.canonical == "Rename-Item" && canonical == "NewName" {
			// The new name is a name in the item's directory.
			parent := bound["Path"]
			if parent == nil {
				parent = bound["LiteralPath"]
			}
			expr = joinTokens(parentTokens(parent), expr)
		}
		for _, e := range splitTop(expr, ",") {
			if name != nil {
				e = joinTokens(e, name)
			}
			*list = append(*list, Access{Line: toks[i].line, What: p.canonical + " -" + canonical, expr: e, Dir: dir})
		}
	}
	for _, c := range p.writes {
		record(&s.writes, c)
	}
	for _, c := range p.reads {
		record(&s.reads, c)
	}
	if len(p.writes) > 0 && !slices.ContainsFunc(p.writes, func(c string) bool { _, ok := bound[c]; return ok }) {
		s.problems = append(s.problems, fmt.Sprintf("line %d: %s names no path the model can find", toks[i].line, toks[i].text))
	}
}

// joinTokens and parentTokens build synthetic expressions, (Join-Path a b)
// and (Split-Path -Parent a), that resolve() knows.
func joinTokens(a, b []token) []token {
	out := []token{{kind: tOp, text: "(", space: true}, {kind: tWord, text: "Join-Path"}}
	out = append(out, wrap(a)...)
	out = append(out, wrap(b)...)
	return append(out, token{kind: tOp, text: ")"})
}

func parentTokens(a []token) []token {
	out := []token{{kind: tOp, text: "(", space: true}, {kind: tWord, text: "Split-Path", space: true}, {kind: tWord, text: "-Parent", space: true}}
	out = append(out, wrap(a)...)
	return append(out, token{kind: tOp, text: ")"})
}

func wrap(e []token) []token {
	out := []token{{kind: tOp, text: "(", space: true}}
	out = append(out, e...)
	return append(out, token{kind: tOp, text: ")"})
}

func isParameter(w string) bool {
	return len(w) > 1 && w[0] == '-' && isWordStart(w[1]) && !operators[strings.ToLower(w)]
}

var operators = map[string]bool{}

func init() {
	for _, o := range strings.Fields("eq ne gt ge lt le like notlike match notmatch contains notcontains in notin replace split join and or not xor band bor bxor bnot shl shr is isnot as f ceq cne clike cmatch ieq ine imatch ilike") {
		operators["-"+o] = true
	}
}

// keyPosition says whether toks[i] starts a line or statement.
func keyPosition(toks []token, i int) bool {
	if i == 0 {
		return true
	}
	p := toks[i-1]
	return p.kind == tNewline || (p.kind == tOp && (p.text == ";" || p.text == "@{"))
}

// commandPosition says whether toks[i] starts a command or statement.
func commandPosition(toks []token, i int) bool {
	if i == 0 {
		return true
	}
	p := toks[i-1]
	if p.kind == tNewline {
		return true
	}
	return p.kind == tOp && slices.Contains([]string{";", "|", "(", "$(", "@(", "{", "}", "="}, p.text)
}

func opens(t token) bool {
	return t.kind == tOp && (t.text == "(" || t.text == "$(" || t.text == "@(" || t.text == "{" || t.text == "@{" || t.text == "[")
}

func closes(t token) bool {
	return t.kind == tOp && (t.text == ")" || t.text == "}" || t.text == "]")
}

// matching is the index of the bracket that closes toks[i].
func matching(toks []token, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		if opens(toks[j]) {
			depth++
		} else if closes(toks[j]) {
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(toks)
}

// commandEnd is where the command starting at from ends: a newline, ; or |
// outside brackets, a redirection, or a bracket closing one opened before.
func commandEnd(toks []token, from int) int {
	depth := 0
	for j := from; j < len(toks); j++ {
		t := toks[j]
		switch {
		case opens(t):
			depth++
		case closes(t):
			if depth == 0 {
				return j
			}
			depth--
		case depth == 0 && (t.kind == tNewline || t.kind == tRedirect || (t.kind == tOp && (t.text == ";" || t.text == "|"))):
			return j
		}
	}
	return len(toks)
}

// statementEnd is where an assignment's right-hand side ends (a pipeline
// belongs to it).
func statementEnd(toks []token, from int) int {
	depth := 0
	for j := from; j < len(toks); j++ {
		t := toks[j]
		switch {
		case opens(t):
			depth++
		case closes(t):
			if depth == 0 {
				return j
			}
			depth--
		case depth == 0 && (t.kind == tNewline || (t.kind == tOp && t.text == ";")):
			return j
		}
	}
	return len(toks)
}

// operandEnd is the end of the argument starting at toks[j]: a primary with
// what is glued to it (.member, [index], (call), ::member), and, joined by
// commas, more of them.
func operandEnd(toks []token, j int) int {
	n := primaryEnd(toks, j)
	for n < len(toks) && toks[n].kind == tOp && toks[n].text == "," {
		n = primaryEnd(toks, n+1)
	}
	return n
}

func primaryEnd(toks []token, j int) int {
	if j >= len(toks) {
		return j
	}
	t := toks[j]
	var n int
	switch {
	case opens(t):
		n = matching(toks, j) + 1
	case t.kind == tType:
		n = j + 1
		if n < len(toks) && !toks[n].space && toks[n].text != "::" {
			return primaryEnd(toks, n)
		}
	case t.kind == tString || t.kind == tVar || t.kind == tWord:
		n = j + 1
	default:
		return j
	}
	for n < len(toks) {
		u := toks[n]
		switch {
		case u.kind == tOp && u.text == "::" && n+1 < len(toks):
			n += 2
		case !u.space && u.kind == tOp && u.text == "." && n+1 < len(toks):
			n += 2
		case !u.space && u.kind == tOp && (u.text == "[" || u.text == "("):
			n = matching(toks, n) + 1
		default:
			return min(n, len(toks))
		}
	}
	return min(n, len(toks))
}

// operands splits a command's arguments (no parameters expected).
func operands(toks []token) [][]token {
	var out [][]token
	for j := 0; j < len(toks); {
		n := primaryEnd(toks, j)
		if n == j {
			j++
			continue
		}
		out = append(out, toks[j:n])
		j = n
	}
	return out
}

// splitTop splits tokens at a separator outside brackets.
func splitTop(toks []token, sep string) [][]token {
	var out [][]token
	depth, start := 0, 0
	for j, t := range toks {
		switch {
		case opens(t):
			depth++
		case closes(t):
			depth--
		case depth == 0 && t.kind == tOp && t.text == sep:
			out = append(out, toks[start:j])
			start = j + 1
		}
	}
	return append(out, toks[start:])
}

func text(toks []token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && t.space {
			b.WriteByte(' ')
		}
		switch t.kind {
		case tString:
			if t.expandable {
				b.WriteString(`"` + t.text + `"`)
			} else {
				b.WriteString(`'` + t.text + `'`)
			}
		case tVar:
			if t.splat {
				b.WriteString("@" + t.text)
			} else {
				b.WriteString("$" + t.text)
			}
		case tType:
			b.WriteString("[" + t.text + "]")
		default:
			b.WriteString(t.text)
		}
	}
	return b.String()
}

// Patterns are the regular expressions the script matches with -match
// 'literal'.
func (s *Script) Patterns() []string { return s.patterns }

// Problems are what the model found in the script and could not read.
func (s *Script) Problems() []string { return s.problems }

// Env is what a script's $env: variables hold: the container's
// environment. A variable set from elsewhere (valueFrom) maps to Unknown.
type Env map[string]string

// Unknown is the value of an environment variable the model cannot know.
const Unknown = "\x00unknown"

// Resolved is an access with its possible paths (every value each
// variable on the way may hold), cleaned (backslashes, a drive).
type Resolved struct {
	Access
	Expr  string
	Paths []string
}

// Writes resolves every place the script writes, including what the
// programs it starts write; an unresolvable path is an error.
func (s *Script) Writes(env Env) ([]Resolved, error) {
	var out []Resolved
	var errs []string
	r := &resolver{s: s, env: env}
	for _, w := range s.writes {
		paths, err := r.resolve(w.expr, 0, false)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s line %d: %s %s: %v", s.Name, w.Line, w.What, text(w.expr), err))
			continue
		}
		out = append(out, Resolved{Access: w, Expr: text(w.expr), Paths: cleanAll(paths)})
	}
	for _, p := range s.programs {
		paths, err := r.resolve(p.expr, 0, false)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s line %d: & %s: %v", s.Name, p.line, text(p.expr), err))
			continue
		}
		for _, exe := range paths {
			base := strings.ToLower(path.Base(strings.ReplaceAll(exe, `\`, "/")))
			prog, ok := programs[base]
			if !ok {
				errs = append(errs, fmt.Sprintf("%s line %d: starts %s: the model does not know what it writes (see programs in testing/startscript)", s.Name, p.line, exe))
				continue
			}
			args := r.programArgs(p.args)
			for _, w := range prog(s, args) {
				w.Line = p.line
				out = append(out, Resolved{Access: w, Expr: w.fixed, Paths: cleanAll([]string{w.fixed})})
			}
		}
	}
	if len(s.problems) > 0 {
		errs = append(errs, s.problems...)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// Reads resolves the places the script reads whose paths the model can
// resolve (a path found at run time, such as a volume's, is left out).
func (s *Script) Reads(env Env) []Resolved {
	var out []Resolved
	r := &resolver{s: s, env: env}
	for _, a := range s.reads {
		if paths, err := r.resolve(a.expr, 0, false); err == nil {
			out = append(out, Resolved{Access: a, Expr: text(a.expr), Paths: cleanAll(paths)})
		}
	}
	return out
}

// programs are the programs the start scripts start, and what each writes
// on the node, from its arguments:
//   - kube-proxy.exe (kernel-space mode) programs HNS and logs to standard
//     error; it writes a file only when told to (--log-file).
//   - flanneld.exe writes its --subnet-file, by default /run/flannel/subnet.env
//     (flannel-io/flannel, main.go), C:\run\flannel\subnet.env on Windows.
//   - host-local.exe (containernetworking/plugins, plugins/ipam/host-local)
//     keeps its reservations under the request's dataDir, by default
//     /var/lib/cni/networks (backend/disk/backend.go), in a directory per
//     network.
var programs = map[string]func(s *Script, args []string) []Access{
	"kube-proxy.exe": func(_ *Script, args []string) []Access {
		return flagWrites("kube-proxy.exe", args, "", "--log-file")
	},
	"flanneld.exe": func(_ *Script, args []string) []Access {
		return flagWrites("flanneld.exe", args, `C:\run\flannel\subnet.env`, "--subnet-file")
	},
	"host-local.exe": func(s *Script, _ []string) []Access {
		dirs := s.dataDirs()
		if len(dirs) == 0 {
			dirs = []string{`C:\var\lib\cni\networks`}
		}
		var out []Access
		for _, d := range dirs {
			out = append(out, Access{What: "host-local.exe (its store, under the request's dataDir)", fixed: d})
		}
		return out
	},
}

func flagWrites(prog string, args []string, def, flag string) []Access {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return []Access{{What: prog + " " + flag, fixed: v}}
		}
	}
	if def == "" {
		return nil
	}
	return []Access{{What: prog + " " + flag + " (its default)", fixed: def}}
}

var dataDirRE = regexp.MustCompile(`"dataDir"\s*:\s*"([^"]+)"`)

// dataDirs are the dataDirs the script's host-local requests name.
func (s *Script) dataDirs() []string {
	var out []string
	for _, t := range s.toks {
		if t.kind == tString {
			for _, m := range dataDirRE.FindAllStringSubmatch(t.text, -1) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// cleanAll puts paths in one form: backslashes, no doubled or trailing
// ones, the drive (C:) of a rooted path without one. Paths on PowerShell's
// other drives (Env:, Variable:, HKLM: ...) are not the file system's, and
// "" ($null, a redirection to nowhere) is no path: both are left out.
func cleanAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		if k := strings.IndexByte(p, ':'); k > 1 || p == "" {
			continue
		}
		out = append(out, Clean(p))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Clean puts a Windows path in one form.
func Clean(p string) string {
	if p == "" {
		return ""
	}
	p = strings.ReplaceAll(p, "/", `\`)
	for strings.Contains(p, `\\`) {
		p = strings.ReplaceAll(p, `\\`, `\`)
	}
	if strings.HasPrefix(p, `\`) {
		p = "C:" + p
	}
	if len(p) > 3 {
		p = strings.TrimSuffix(p, `\`)
	}
	if len(p) >= 2 && p[1] == ':' {
		p = strings.ToUpper(p[:1]) + p[1:]
	}
	return p
}

// Started is every path the script may start a program from (&), resolved
// as a path would be.
func (s *Script) Started(env Env) ([]string, error) {
	r := &resolver{s: s, env: env}
	var out []string
	for _, p := range s.programs {
		v, err := r.resolve(p.expr, 0, false)
		if err != nil {
			return nil, fmt.Errorf("line %d: & %s: %w", p.line, text(p.expr), err)
		}
		out = append(out, v...)
	}
	return cleanAll(out), nil
}
