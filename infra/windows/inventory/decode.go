package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"

	"github.com/winconform/winconform/internal/winrelease"
)

// The fields each mapping accepts, in the order messages list them.
var (
	topFields          = []string{"defaults", "machines"}
	machineFields      = []string{"name", "address", "winrm", "user", "passwordFrom", "expectedBuild", "labels", "taints", "binaries", "defenderExclusions"}
	defaultsFields     = machineFields[2:] // all but name and address
	winrmFields        = []string{"port", "https", "caBundle", "insecure", "tlsServerName", "auth"}
	passwordFromFields = []string{"env", "file"}
)

// Built-in defaults, applied when neither a machine nor defaults set the field.
const (
	defaultHTTPSPort = 5986
	defaultHTTPPort  = 5985
	defaultAuth      = AuthBasic
)

const (
	fixMachines = "list at least one machine under machines:, each with name, address, user and passwordFrom (user and passwordFrom may come from defaults)"
	fixPort     = "use a port from 1 to 65535: 5986 for WinRM over HTTPS, 5985 over HTTP"
	fixNoDrop   = `write caBundle: "" on the machine to drop one from defaults`
)

// scope is what a problem is about: a machine (index counts from 1), the
// defaults (prefix "defaults."), or the file as a whole.
type scope struct {
	machine string
	index   int
	prefix  string
}

var (
	fileScope     = scope{}
	defaultsScope = scope{prefix: "defaults."}
)

// opt is a field as written: set when the file sets it, empty when it is
// set to nothing (~), which drops a default for the built-in one, bad when
// it was set to something wrong (already reported, and not to be checked
// again), inherited when it came from defaults.
type opt[T any] struct {
	v                          T
	set, empty, bad, inherited bool
	line                       int
}

// or returns o when it is set, else the default def.
func (o opt[T]) or(def opt[T]) opt[T] {
	if o.set {
		return o
	}
	if def.set {
		def.inherited = true
	}
	return def
}

// ok reports whether the field is set to a valid value.
func (o opt[T]) ok() bool { return o.set && !o.bad }

// from returns " (from defaults)" for an inherited field.
func (o opt[T]) from() string {
	if o.inherited {
		return " (from defaults)"
	}
	return ""
}

// filePath is a path as written and as resolved against the inventory's directory.
type filePath struct{ raw, abs string }

// passwordFrom is a password source as written.
type passwordFrom struct {
	env  string
	file filePath
}

// winrmSpec is a winrm mapping as written.
type winrmSpec struct {
	port          opt[int]
	https         opt[bool]
	caBundle      opt[filePath]
	insecure      opt[bool]
	tlsServerName opt[string]
	auth          opt[Auth]
}

// spec is a machine or the defaults as written, each field checked on its own.
type spec struct {
	line          int
	mapping       bool // the node is a mapping (a machine that is not is reported once, then skipped)
	name          opt[string]
	address       opt[string]
	user          opt[string]
	winrm         winrmSpec
	passwordFrom  opt[passwordFrom]
	expectedBuild opt[Build]
	labels        map[string]string
	taints        opt[[]corev1.Taint]
	binaries      map[string]string
	defender      opt[bool]
}

// withDefaults applies def to every field m does not set. Labels and
// binaries merge key by key, winrm field by field.
func (m spec) withDefaults(def spec) spec {
	m.user = m.user.or(def.user)
	m.passwordFrom = m.passwordFrom.or(def.passwordFrom)
	m.expectedBuild = m.expectedBuild.or(def.expectedBuild)
	m.taints = m.taints.or(def.taints)
	m.defender = m.defender.or(def.defender)
	w, dw := &m.winrm, def.winrm
	w.port = w.port.or(dw.port)
	w.https = w.https.or(dw.https)
	w.caBundle = w.caBundle.or(dw.caBundle)
	w.insecure = w.insecure.or(dw.insecure)
	w.tlsServerName = w.tlsServerName.or(dw.tlsServerName)
	w.auth = w.auth.or(dw.auth)
	m.labels = mergeMaps(def.labels, m.labels)
	m.binaries = mergeMaps(def.binaries, m.binaries)
	return m
}

// mergeMaps returns base overlaid with over, or nil when both are empty.
func mergeMaps(base, over map[string]string) map[string]string {
	if len(base)+len(over) == 0 {
		return nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}

// decoder collects the problems of one inventory file.
type decoder struct {
	path     string
	dir      string // absolute directory of the file: relative paths start there
	env      func(string) (string, bool)
	problems []Problem

	merged        int  // entries brought in by merge keys so far
	mergeReported bool // too many merged entries was reported
}

func newDecoder(path string, env func(string) (string, bool)) *decoder {
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &decoder{path: path, dir: dir, env: env}
}

// report records a problem. An empty field in the defaults scope is the
// defaults mapping itself.
func (d *decoder) report(s scope, field string, line int, msg, fix string) {
	f := s.prefix + field
	if field == "" {
		f = strings.TrimSuffix(s.prefix, ".")
	}
	d.problems = append(d.problems, Problem{Machine: s.machine, Index: s.index, Field: f, Line: line, Message: msg, Fix: fix})
}

// err returns the problems as an *Error: file-wide ones first, then each
// machine's in list order; within each, in line order.
func (d *decoder) err() *Error {
	sort.SliceStable(d.problems, func(i, j int) bool {
		a, b := d.problems[i], d.problems[j]
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		return a.Line < b.Line
	})
	return &Error{Path: d.path, Problems: d.problems}
}

// resolve turns a path written in the file into an absolute one.
func (d *decoder) resolve(raw string) filePath {
	if raw == "" || filepath.IsAbs(raw) {
		return filePath{raw: raw, abs: raw}
	}
	return filePath{raw: raw, abs: filepath.Join(d.dir, raw)}
}

// pending is a machine whose fields are checked, waiting for its password
// and CA bundle to be read.
type pending struct {
	s scope
	m spec
}

// decode checks the whole file and returns its machines; they are complete
// only when no problem was reported.
func (d *decoder) decode(data []byte) []Machine {
	top := d.document(data)
	if top == nil {
		return nil
	}
	var defaultsNode, machinesNode *yaml.Node
	es, _ := d.entries(fileScope, "", top, "{defaults: {...}, machines: [...]}")
	for _, e := range es {
		if !d.accept(fileScope, "", e, "the top level", topFields) {
			continue
		}
		switch e.key {
		case "defaults":
			defaultsNode = e.v
		case "machines":
			machinesNode = e.v
		}
	}
	defs := d.spec(defaultsScope, defaultsNode, true)

	var ps []pending
	names := map[string]int{}
	endpoints := map[string]int{}
	for i, n := range d.machineNodes(machinesNode) {
		s := scope{machine: peekName(n), index: i + 1}
		own := d.spec(s, n, false)
		if !own.mapping {
			continue
		}
		m := own.withDefaults(defs)
		d.check(s, m)
		if m.name.ok() && m.name.v != "" {
			if j, dup := names[m.name.v]; dup {
				d.report(s, "name", m.name.line, fmt.Sprintf("%s is also the name of machine #%d", quote(m.name.v), j),
					"give each machine its own name: it becomes the Kubernetes node name")
			} else {
				names[m.name.v] = s.index
			}
		}
		if port, ok := m.port(); ok && m.address.ok() && m.address.v != "" {
			ep := strings.ToLower(strings.TrimSuffix(m.address.v, ".")) + ":" + strconv.Itoa(port)
			if j, dup := endpoints[ep]; dup {
				d.report(s, "address", m.address.line, fmt.Sprintf("%s port %d is also machine #%d", quote(m.address.v), port, j),
					"each machine is one Windows host: fix the address, or give the machine its own WinRM port if it is reached through port forwarding")
			} else {
				endpoints[ep] = s.index
			}
		}
		ps = append(ps, pending{s: s, m: m})
	}
	return d.finish(defs, ps)
}

// document parses the YAML and returns its top-level mapping, or nil after
// reporting why there is none.
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.report(fileScope, "machines", 0, "is missing: the inventory is empty", fixMachines)
		} else {
			d.syntax(err)
		}
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		if len(extra.Content) > 0 && !isNull(extra.Content[0]) {
			d.report(fileScope, "yaml", extra.Content[0].Line, "the file holds more than one YAML document",
				"keep one document: remove the '---' line and what follows it, or merge the documents")
		}
	case !errors.Is(err, io.EOF):
		d.syntax(err)
		return nil
	}
	top := &doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		top = doc.Content[0]
	}
	top = deref(top)
	switch {
	case isNull(top):
		d.report(fileScope, "machines", 0, "is missing: the inventory is empty", fixMachines)
		return nil
	case top.Kind != yaml.MappingNode:
		d.report(fileScope, "", top.Line, "the file is "+describe(top)+", not a mapping",
			"write a mapping with machines: (and optionally defaults:) at the top level")
		return nil
	}
	return top
}

// yamlLine splits a YAML library error into its line and message.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntax reports a YAML syntax error, with its line when the library gives one.
func (d *decoder) syntax(err error) {
	msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	d.report(fileScope, "yaml", line, "the file is not valid YAML: "+msg,
		"fix the YAML near that line: indent with spaces (not tabs), line up the keys of each mapping, and quote values that hold ': ' or ' #'")
}

// machineNodes returns the machines list's items, reporting a list that is
// missing, empty or not a list.
func (d *decoder) machineNodes(n *yaml.Node) []*yaml.Node {
	if n == nil {
		d.report(fileScope, "machines", 0, "is missing", fixMachines)
		return nil
	}
	nd := deref(n)
	switch {
	case isNull(nd) || (nd.Kind == yaml.SequenceNode && len(nd.Content) == 0):
		d.report(fileScope, "machines", nd.Line, "is empty", fixMachines)
		return nil
	case nd.Kind != yaml.SequenceNode:
		d.report(fileScope, "machines", nd.Line, "is "+describe(nd)+", not a list", fixMachines+" (each item starts with '- ')")
		return nil
	}
	return nd.Content
}

// spec reads a machine (or, with isDefaults, the defaults), checking each
// field on its own.
func (d *decoder) spec(s scope, n *yaml.Node, isDefaults bool) spec {
	what, known, example := "a machine", machineFields, "{name: win-a, address: 192.168.56.20}"
	if isDefaults {
		what, known, example = "defaults", defaultsFields, "{user: Administrator, winrm: {https: true}}"
	}
	var sp spec
	if nd := deref(n); nd != nil {
		sp.line = nd.Line
	}
	if !isDefaults && isNull(n) {
		d.report(s, "", sp.line, "is empty", "write the machine's fields under its '- ': name, address, and user and passwordFrom unless defaults set them")
		return sp
	}
	es, ok := d.entries(s, "", n, example)
	sp.mapping = ok
	for _, e := range es {
		if isDefaults && (e.key == "name" || e.key == "address") {
			d.report(s, e.key, e.k.Line, "cannot have a default: each machine has its own", "set "+e.key+" on each machine")
			continue
		}
		if !d.accept(s, "", e, what, known) {
			continue
		}
		switch e.key {
		case "name":
			sp.name = d.name(s, e.v)
		case "address":
			sp.address = d.address(s, e.v)
		case "winrm":
			sp.winrm = d.winrm(s, e.v)
		case "user":
			sp.user = d.str(s, "user", e.v)
		case "passwordFrom":
			sp.passwordFrom = d.passwordFrom(s, e.v)
		case "expectedBuild":
			sp.expectedBuild = d.expectedBuild(s, e.v)
		case "labels":
			sp.labels = d.labels(s, e.v)
		case "taints":
			sp.taints = d.taints(s, e.v)
		case "binaries":
			sp.binaries = d.binaries(s, e.v)
		case "defenderExclusions":
			sp.defender = d.boolean(s, "defenderExclusions", e.v)
		}
	}
	return sp
}

// winrm reads a winrm mapping.
func (d *decoder) winrm(s scope, n *yaml.Node) winrmSpec {
	var w winrmSpec
	es, _ := d.entries(s, "winrm", n, "{port: 5986, https: true, auth: basic}")
	for _, e := range es {
		if !d.accept(s, "winrm", e, "winrm", winrmFields) {
			continue
		}
		field := join("winrm", e.key)
		switch e.key {
		case "port":
			w.port = d.integer(s, field, e.v, fixPort)
			if w.port.ok() && !w.port.empty && (w.port.v < 1 || w.port.v > 65535) {
				d.report(s, field, w.port.line, fmt.Sprintf("%d is out of range", w.port.v), fixPort)
				w.port.bad = true
			}
		case "https":
			w.https = d.boolean(s, field, e.v)
		case "insecure":
			w.insecure = d.boolean(s, field, e.v)
		case "caBundle":
			p := d.str(s, field, e.v)
			w.caBundle = opt[filePath]{v: d.resolve(p.v), set: true, bad: p.bad, line: p.line}
		case "tlsServerName":
			w.tlsServerName = d.str(s, field, e.v)
			if v := w.tlsServerName.v; w.tlsServerName.ok() && v != "" && !isHostName(v) {
				d.report(s, field, w.tlsServerName.line, quote(v)+" is not a DNS name or IP address",
					"write the name the machine's certificate is issued to, such as win-2022-a.lab")
				w.tlsServerName.bad = true
			}
		case "auth":
			a := d.str(s, field, e.v)
			w.auth = opt[Auth]{v: Auth(a.v), set: true, bad: a.bad, line: a.line}
			if a.ok() && w.auth.v != AuthBasic && w.auth.v != AuthNTLM {
				fix := "use basic (local accounts) or ntlm (local or domain accounts)"
				if l := Auth(strings.ToLower(a.v)); l == AuthBasic || l == AuthNTLM {
					fix = fmt.Sprintf("write it in lower case: %s", l)
				}
				d.report(s, field, a.line, quote(a.v)+" is not an authentication method", fix)
				w.auth.bad = true
			}
		}
	}
	return w
}

// passwordFrom reads a passwordFrom mapping: exactly one of env and file.
func (d *decoder) passwordFrom(s scope, n *yaml.Node) opt[passwordFrom] {
	o := opt[passwordFrom]{set: true}
	if nd := deref(n); nd != nil {
		o.line = nd.Line
	}
	es, ok := d.entries(s, "passwordFrom", n, "{env: WIN_A_PASSWORD}")
	if !ok {
		o.bad = true
		return o
	}
	var env, file opt[string]
	for _, e := range es {
		if !d.accept(s, "passwordFrom", e, "passwordFrom", passwordFromFields) {
			o.bad = true
			continue
		}
		switch e.key {
		case "env":
			env = d.str(s, "passwordFrom.env", e.v)
		case "file":
			file = d.str(s, "passwordFrom.file", e.v)
		}
	}
	if env.bad || file.bad {
		o.bad = true
	}
	switch {
	case o.bad:
	case env.set && file.set:
		d.report(s, "passwordFrom", o.line, "sets both env and file", "keep one of them")
		o.bad = true
	case !env.set && !file.set:
		d.report(s, "passwordFrom", o.line, "sets neither env nor file",
			"set env: VARIABLE (a variable that holds the password) or file: PATH (a file that holds only the password)")
		o.bad = true
	case env.set:
		if msg, fix := checkEnvName(env.v); msg != "" {
			d.report(s, "passwordFrom.env", env.line, msg, fix)
			o.bad = true
		}
		o.v.env = env.v
	case file.v == "":
		d.report(s, "passwordFrom.file", file.line, "is empty",
			"write the path of a file that holds only the password (relative to the inventory file's directory)")
		o.bad = true
	default:
		o.v.file = d.resolve(file.v)
	}
	return o
}

// name reads a machine's name: a lower-case DNS label.
func (d *decoder) name(s scope, n *yaml.Node) opt[string] {
	o := d.str(s, "name", n)
	if o.ok() && o.v != "" {
		if msg, fix := checkName(o.v); msg != "" {
			d.report(s, "name", o.line, msg, fix)
			o.bad = true
		}
	}
	return o
}

// address reads a machine's address: an IP address or DNS name.
func (d *decoder) address(s scope, n *yaml.Node) opt[string] {
	o := d.str(s, "address", n)
	if o.ok() && o.v != "" {
		if msg, fix := checkAddress(o.v); msg != "" {
			d.report(s, "address", o.line, msg, fix)
			o.bad = true
		}
	}
	return o
}

// expectedBuild reads a build such as 10.0.20348; "" means none.
func (d *decoder) expectedBuild(s scope, n *yaml.Node) opt[Build] {
	str := d.str(s, "expectedBuild", n)
	o := opt[Build]{set: true, bad: str.bad, line: str.line}
	if !str.ok() || str.v == "" {
		return o
	}
	b, err := winrelease.ParseBuild(str.v)
	switch {
	case err != nil:
		fix := "write the build as 10.0.NNNNN (quoted), such as \"10.0.20348\" for Windows Server 2022; [Environment]::OSVersion.Version on the machine shows it"
		if m := revision.FindStringSubmatch(str.v); m != nil {
			fix = fmt.Sprintf("drop the revision: write %q (the check compares major.minor.build)", m[1])
		}
		d.report(s, "expectedBuild", str.line, quote(str.v)+" is not a Windows build of the form 10.0.NNNNN", fix)
		o.bad = true
	case !b.Supported():
		oldest := winrelease.Releases()[0]
		d.report(s, "expectedBuild", str.line,
			fmt.Sprintf("%s is older than %s (%s), the oldest build Kubernetes supports for Windows nodes", b, oldest.Build, oldest.Product),
			"use a supported build: "+winrelease.List())
		o.bad = true
	default:
		o.v = b
	}
	return o
}

// revision matches a build written with a revision: 10.0.20348.2113.
var revision = regexp.MustCompile(`^(10\.0\.[0-9]{5})\.[0-9]+$`)

// labels reads node labels; invalid ones are reported and left out.
func (d *decoder) labels(s scope, n *yaml.Node) map[string]string {
	es, _ := d.entries(s, "labels", n, "{topology.kubernetes.io/zone: lab-1}")
	out := map[string]string{}
	for _, e := range es {
		field := "labels[" + e.key + "]"
		if isPasswordKey(e.key) {
			d.inlinePassword(s, field, e.k.Line)
			continue
		}
		if msg, fix := checkLabelKey(e.key); msg != "" {
			d.report(s, field, e.k.Line, msg, fix)
			continue
		}
		v := d.str(s, field, e.v)
		if !v.ok() {
			continue
		}
		if msg, fix := checkLabelValue(v.v); msg != "" {
			d.report(s, field, v.line, msg, fix)
			continue
		}
		out[e.key] = v.v
	}
	return out
}

// taints reads node taints written as key=value:Effect or key:Effect.
func (d *decoder) taints(s scope, n *yaml.Node) opt[[]corev1.Taint] {
	nd := deref(n)
	o := opt[[]corev1.Taint]{set: true}
	if isNull(nd) {
		return o
	}
	o.line = nd.Line
	if nd.Kind != yaml.SequenceNode {
		d.report(s, "taints", nd.Line, "is "+describe(nd)+", not a list", `write a list such as ["os=windows:NoSchedule"]`)
		o.bad = true
		return o
	}
	seen := map[string]int{}
	for i, item := range nd.Content {
		field := fmt.Sprintf("taints[%d]", i)
		v := d.str(s, field, item)
		if !v.ok() {
			o.bad = true
			continue
		}
		t, msg, fix := parseTaint(v.v)
		if msg != "" {
			d.report(s, field, v.line, msg, fix)
			o.bad = true
			continue
		}
		id := t.Key + ":" + string(t.Effect)
		if j, dup := seen[id]; dup {
			d.report(s, field, v.line, fmt.Sprintf("repeats the key %s and effect %s of taints[%d]", t.Key, t.Effect, j),
				"keep one: a node has at most one taint per key and effect")
			o.bad = true
			continue
		}
		seen[id] = i
		o.v = append(o.v, t)
	}
	return o
}

// binaries reads the component -> source map.
func (d *decoder) binaries(s scope, n *yaml.Node) map[string]string {
	es, _ := d.entries(s, "binaries", n, `{containerd: "https://example.com/containerd.zip"}`)
	out := map[string]string{}
	for _, e := range es {
		field := join("binaries", e.key)
		if isPasswordKey(e.key) {
			d.inlinePassword(s, field, e.k.Line)
			continue
		}
		if msg, fix := checkComponent(e.key); msg != "" {
			d.report(s, field, e.k.Line, msg, fix)
			continue
		}
		v := d.str(s, field, e.v)
		if !v.ok() {
			continue
		}
		if msg, fix := checkSource(v.v); msg != "" {
			d.report(s, field, v.line, msg, fix)
			continue
		}
		out[e.key] = v.v
	}
	return out
}

// port returns the machine's WinRM port, defaults applied, and false when
// the port written is wrong.
func (m spec) port() (int, bool) {
	switch {
	case m.winrm.port.bad:
		return 0, false
	case m.winrm.port.set && !m.winrm.port.empty:
		return m.winrm.port.v, true
	case m.https():
		return defaultHTTPSPort, true
	}
	return defaultHTTPPort, true
}

// https reports whether the machine uses HTTPS (the default; a wrong https
// value counts as the default so as not to report more than it).
func (m spec) https() bool {
	h := m.winrm.https
	return !h.ok() || h.empty || h.v
}

// check reports missing required fields and fields that conflict, once
// defaults are applied.
func (d *decoder) check(s scope, m spec) {
	missing := func(o opt[string], field, fix string) {
		switch {
		case !o.set:
			d.report(s, field, m.line, "is missing", fix)
		case o.ok() && o.v == "":
			d.report(s, field, o.line, "is empty"+o.from(), fix)
		}
	}
	missing(m.name, "name", "set name: the Kubernetes node name, a lower-case DNS label such as win-2022-a")
	missing(m.address, "address", "set address: the machine's IP address or DNS name")
	missing(m.user, "user", "set user here or in defaults: the account WinRM logs in as, such as Administrator")
	if !m.passwordFrom.set {
		d.report(s, "passwordFrom", m.line, "is missing",
			"set passwordFrom: {env: VARIABLE} or passwordFrom: {file: PATH} here or in defaults")
	}

	w := m.winrm
	https := m.https()
	insecure := w.insecure.ok() && w.insecure.v
	ca := w.caBundle.ok() && w.caBundle.v.raw != ""
	if insecure && ca {
		d.report(s, "winrm.insecure", w.insecure.line,
			fmt.Sprintf("insecure: true%s and caBundle%s %s are exclusive: insecure skips the certificate check that caBundle is for",
				w.insecure.from(), w.caBundle.from(), quote(w.caBundle.v.raw)),
			"keep caBundle to verify the machine's certificate and drop insecure, or drop caBundle to skip the check ("+fixNoDrop+")")
	}
	if p := w.port; p.ok() && p.inherited && !p.empty {
		usual, other, otherName, scheme := defaultHTTPSPort, defaultHTTPPort, "HTTP", "HTTPS"
		if !https {
			usual, other, otherName, scheme = defaultHTTPPort, defaultHTTPSPort, "HTTPS", "HTTP"
		}
		if p.v == other {
			d.report(s, "winrm.port", p.line,
				fmt.Sprintf("%d (from defaults) is WinRM's %s port, but this machine uses %s", p.v, otherName, scheme),
				fmt.Sprintf("set port: %d on the machine (or port: ~ for the port that goes with https)", usual))
		}
	}
	if https {
		return
	}
	httpsFalse := "https: false" + w.https.from()
	if insecure {
		d.report(s, "winrm.insecure", w.insecure.line,
			fmt.Sprintf("insecure: true%s with %s: insecure only applies to HTTPS", w.insecure.from(), httpsFalse),
			"remove insecure, or set https: true")
	}
	if ca {
		d.report(s, "winrm.caBundle", w.caBundle.line,
			fmt.Sprintf("caBundle%s with %s: a CA bundle only applies to HTTPS", w.caBundle.from(), httpsFalse),
			"set https: true to verify the machine's certificate, or remove caBundle ("+fixNoDrop+")")
	}
	if t := w.tlsServerName; t.ok() && t.v != "" {
		d.report(s, "winrm.tlsServerName", t.line,
			fmt.Sprintf("tlsServerName%s with %s: a server name only applies to HTTPS", t.from(), httpsFalse),
			`set https: true, or remove tlsServerName (tlsServerName: "" drops one from defaults)`)
	}
}

// finish reads the passwords and CA bundles and returns the machines. A
// source inherited from defaults is read once and its problems reported
// once, under defaults, naming the machines that use it.
func (d *decoder) finish(defs spec, ps []pending) []Machine {
	var pwUsers, caUsers []string
	for _, p := range ps {
		who := fmt.Sprintf("#%d", p.s.index)
		if p.s.machine != "" {
			who = strconv.Quote(p.s.machine)
		}
		if pf := p.m.passwordFrom; pf.ok() && pf.inherited {
			pwUsers = append(pwUsers, who)
		}
		if ca := p.m.winrm.caBundle; ca.ok() && ca.inherited && ca.v.raw != "" && p.m.https() {
			caUsers = append(caUsers, who)
		}
	}
	var defPassword Secret
	var defCA []byte
	if len(pwUsers) > 0 {
		defPassword, _ = d.password(defaultsScope, defs.passwordFrom, users(pwUsers))
	}
	if len(caUsers) > 0 {
		defCA, _ = d.caBundle(defaultsScope, defs.winrm.caBundle, users(caUsers))
	}

	machines := make([]Machine, 0, len(ps))
	for _, p := range ps {
		m, w := p.m, p.m.winrm
		port, _ := m.port()
		out := Machine{
			Name:    m.name.v,
			Address: m.address.v,
			User:    m.user.v,
			WinRM: WinRM{
				Port:          port,
				HTTPS:         m.https(),
				Insecure:      w.insecure.v,
				TLSServerName: w.tlsServerName.v,
				Auth:          defaultAuth,
			},
			PasswordFrom:       PasswordSource{Env: m.passwordFrom.v.env, File: m.passwordFrom.v.file.abs},
			ExpectedBuild:      m.expectedBuild.v,
			Labels:             m.labels,
			Taints:             m.taints.v,
			Binaries:           m.binaries,
			DefenderExclusions: m.defender.v,
		}
		if w.auth.ok() {
			out.WinRM.Auth = w.auth.v
		}
		if pf := m.passwordFrom; pf.ok() {
			if pf.inherited {
				out.Password = defPassword
			} else {
				out.Password, _ = d.password(p.s, pf, "")
			}
		}
		if ca := w.caBundle; ca.ok() && ca.v.raw != "" && m.https() {
			out.WinRM.CABundlePath = ca.v.abs
			if ca.inherited {
				out.WinRM.CABundle = defCA
			} else {
				out.WinRM.CABundle, _ = d.caBundle(p.s, ca, "")
			}
		}
		machines = append(machines, out)
	}
	return machines
}

// users says which machines take a source from defaults, for messages.
func users(who []string) string {
	if len(who) == 1 {
		return fmt.Sprintf(" (machine %s takes it from defaults)", who[0])
	}
	return fmt.Sprintf(" (machines %s take it from defaults)", joinWords(who, "and"))
}
