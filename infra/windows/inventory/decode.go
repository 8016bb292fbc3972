package inventory

import (
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/internal/strictyaml"
	"github.com/winconform/winconform/internal/winrelease"
)

// The file as written, decoded strictly (see strictyaml): a yaml.Node per
// field, so that a field written empty (~) differs from one left out and
// keeps its line; the keys a struct does not know land in Unknown.
type (
	fileDoc struct {
		Defaults yaml.Node            `yaml:"defaults"`
		Machines yaml.Node            `yaml:"machines"`
		Unknown  map[string]yaml.Node `yaml:",inline"`
	}
	// machineDoc is a machine, or the defaults (which cannot set name,
	// address or nodeIP: the first three fields).
	machineDoc struct {
		Name               yaml.Node            `yaml:"name"`
		Address            yaml.Node            `yaml:"address"`
		NodeIP             yaml.Node            `yaml:"nodeIP"`
		WinRM              yaml.Node            `yaml:"winrm"`
		User               yaml.Node            `yaml:"user"`
		PasswordFrom       yaml.Node            `yaml:"passwordFrom"`
		ExpectedBuild      yaml.Node            `yaml:"expectedBuild"`
		Labels             yaml.Node            `yaml:"labels"`
		Taints             yaml.Node            `yaml:"taints"`
		Binaries           yaml.Node            `yaml:"binaries"`
		KubeletVersion     yaml.Node            `yaml:"kubeletVersion"`
		ContainerdVersion  yaml.Node            `yaml:"containerdVersion"`
		DefenderExclusions yaml.Node            `yaml:"defenderExclusions"`
		CloudMetadataRoute yaml.Node            `yaml:"cloudMetadataRoute"`
		PrepullImages      yaml.Node            `yaml:"prepullImages"`
		Underlay           yaml.Node            `yaml:"underlay"`
		Unknown            map[string]yaml.Node `yaml:",inline"`
	}
	underlayDoc struct {
		Shape   yaml.Node            `yaml:"shape"`
		Via     yaml.Node            `yaml:"via"`
		Unknown map[string]yaml.Node `yaml:",inline"`
	}
	winrmDoc struct {
		Port          yaml.Node            `yaml:"port"`
		HTTPS         yaml.Node            `yaml:"https"`
		CABundle      yaml.Node            `yaml:"caBundle"`
		Insecure      yaml.Node            `yaml:"insecure"`
		TLSServerName yaml.Node            `yaml:"tlsServerName"`
		Auth          yaml.Node            `yaml:"auth"`
		Unknown       map[string]yaml.Node `yaml:",inline"`
	}
	passwordFromDoc struct {
		Env     yaml.Node            `yaml:"env"`
		File    yaml.Node            `yaml:"file"`
		Unknown map[string]yaml.Node `yaml:",inline"`
	}
)

// Built-in defaults, applied when neither a machine nor defaults set the field.
const (
	defaultHTTPSPort = 5986
	defaultHTTPPort  = 5985
	// The defaults reach a stock Windows Server: its only listener is HTTP
	// on 5985, with Basic off and AllowUnencrypted=false, which NTLM with
	// message encryption gets through.
	defaultHTTPS = false
	defaultAuth  = AuthNTLM
)

const (
	fixMachines = "list at least one machine under machines:, each with name, address, user and passwordFrom (user and passwordFrom may come from defaults)"
	fixPort     = "use a port from 1 to 65535: 5986 for WinRM over HTTPS, 5985 over HTTP"
	fixNoDrop   = `write caBundle: "" on the machine to drop one from defaults`
)

var (
	pathDefaults = field.NewPath("defaults")
	pathMachines = field.NewPath("machines")
)

// opt is a field as decoded: set when the file sets it, empty when it is
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

// winrmSpec is a winrm mapping, typed.
type winrmSpec struct {
	port          opt[int]
	https         opt[bool]
	caBundle      opt[filePath]
	insecure      opt[bool]
	tlsServerName opt[string]
	auth          opt[Auth]
}

// spec is a machine or the defaults, typed, each field checked on its own.
type spec struct {
	line          int
	mapping       bool // the node is a mapping (a machine that is not is reported once, then skipped)
	name          opt[string]
	address       opt[string]
	nodeIP        opt[string]
	user          opt[string]
	winrm         winrmSpec
	passwordFrom  opt[passwordFrom]
	expectedBuild opt[Build]
	labels        map[string]string
	taints        opt[[]corev1.Taint]
	binaries      map[string]string
	kubelet       opt[string]
	containerd    opt[string]
	defender      opt[bool]
	metadataRoute opt[bool]
	prepull       opt[bool]
	underlayShape opt[string]
	underlayVia   opt[string]
}

// withDefaults applies def to every field m does not set. Labels and
// binaries merge key by key, winrm field by field.
func (m spec) withDefaults(def spec) spec {
	m.user = m.user.or(def.user)
	m.passwordFrom = m.passwordFrom.or(def.passwordFrom)
	m.expectedBuild = m.expectedBuild.or(def.expectedBuild)
	m.taints = m.taints.or(def.taints)
	m.defender = m.defender.or(def.defender)
	m.metadataRoute = m.metadataRoute.or(def.metadataRoute)
	m.prepull = m.prepull.or(def.prepull)
	m.underlayShape = m.underlayShape.or(def.underlayShape)
	m.underlayVia = m.underlayVia.or(def.underlayVia)
	m.kubelet = m.kubelet.or(def.kubelet)
	m.containerd = m.containerd.or(def.containerd)
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

// decoder decodes one inventory file: strictly, then defaults, then
// validation, collecting every problem with its field path.
type decoder struct {
	strictyaml.Decoder
	path  string
	dir   string // absolute directory of the file: relative paths start there
	env   func(string) (string, bool)
	names []string // the machines' names as written, for messages
}

func newDecoder(path string, env func(string) (string, bool)) *decoder {
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &decoder{path: path, dir: dir, env: env}
}

// machinePath matches the path of a machine's field: machines[0].winrm.port.
var machinePath = regexp.MustCompile(`^machines\[(\d+)\]\.?`)

// err returns the problems as an *Error, each field path split into the
// machine and the field within it: file-wide problems first, then each
// machine's in list order; within each, in line order.
func (d *decoder) err() *Error {
	e := &Error{Path: d.path}
	for _, p := range d.Problems {
		q := Problem{Line: p.Line, Message: p.Message, Fix: p.Fix}
		if p.Path != nil {
			q.Field = p.Path.String()
		}
		if m := machinePath.FindStringSubmatch(q.Field); m != nil {
			i, _ := strconv.Atoi(m[1])
			q.Index, q.Machine, q.Field = i+1, d.names[i], q.Field[len(m[0]):]
		}
		e.Problems = append(e.Problems, q)
	}
	sort.SliceStable(e.Problems, func(i, j int) bool {
		a, b := e.Problems[i], e.Problems[j]
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		return a.Line < b.Line
	})
	return e
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
	p     *field.Path
	index int // in the machines list, from 1
	m     spec
}

// decode checks the whole file and returns its machines; they are complete
// only when no problem was reported.
func (d *decoder) decode(data []byte) []Machine {
	top := d.Document(data)
	if top == nil {
		if len(d.Problems) == 0 {
			d.Report(pathMachines, 0, "is missing: the inventory is empty", fixMachines)
		}
		return nil
	}
	var doc fileDoc
	unknown, ok := d.Mapping(nil, top, &doc, "write a mapping with machines: (and optionally defaults:) at the top level")
	if !ok {
		return nil
	}
	d.refuse(nil, unknown, "the top level", strictyaml.Fields(&doc))
	defs := d.spec(pathDefaults, &doc.Defaults, true)

	var ps []pending
	names := map[string]int{}
	endpoints := map[string]int{}
	for i, n := range d.machineNodes(&doc.Machines) {
		p := pathMachines.Index(i)
		own := d.spec(p, n, false)
		d.names[i] = own.name.v
		if !own.mapping {
			continue
		}
		m := own.withDefaults(defs)
		d.check(p, m)
		if m.name.ok() && m.name.v != "" {
			if j, dup := names[m.name.v]; dup {
				d.Report(p.Child("name"), m.name.line, fmt.Sprintf("%s is also the name of machine #%d", quote(m.name.v), j),
					"give each machine its own name: it becomes the Kubernetes node name")
			} else {
				names[m.name.v] = i + 1
			}
		}
		if port, ok := m.port(); ok && m.address.ok() && m.address.v != "" {
			ep := strings.ToLower(strings.TrimSuffix(m.address.v, ".")) + ":" + strconv.Itoa(port)
			if j, dup := endpoints[ep]; dup {
				d.Report(p.Child("address"), m.address.line, fmt.Sprintf("%s port %d is also machine #%d", quote(m.address.v), port, j),
					"each machine is one Windows host: fix the address, or give the machine its own WinRM port if it is reached through port forwarding")
			} else {
				endpoints[ep] = i + 1
			}
		}
		ps = append(ps, pending{p: p, index: i + 1, m: m})
	}
	return d.finish(defs, ps)
}

// machineNodes returns the machines list's items, reporting a list that is
// missing, empty or not a list.
func (d *decoder) machineNodes(n *yaml.Node) []*yaml.Node {
	nd := strictyaml.Deref(n)
	switch {
	case nd.Kind == 0:
		d.Report(pathMachines, 0, "is missing", fixMachines)
	case strictyaml.IsNull(nd) || (nd.Kind == yaml.SequenceNode && len(nd.Content) == 0):
		d.Report(pathMachines, nd.Line, "is empty", fixMachines)
	case nd.Kind != yaml.SequenceNode:
		d.Report(pathMachines, nd.Line, "is "+describe(nd)+", not a list", fixMachines+" (each item starts with '- ')")
	default:
		d.names = make([]string, len(nd.Content))
		return nd.Content
	}
	return nil
}

// refuse reports the keys that a mapping of what does not know: an
// inline password, or an unknown field with the nearest known one.
func (d *decoder) refuse(p *field.Path, keys []strictyaml.Key, what string, known []string) {
	for _, k := range keys {
		if isPasswordKey(k.Name) {
			d.inlinePassword(p.Child(k.Name), k.Line)
			continue
		}
		fix := what + " accepts " + joinOr(known)
		if near := strictyaml.Suggest(k.Name, known); near != "" {
			fix = fmt.Sprintf("did you mean %q? %s", near, fix)
		}
		d.Report(p.Child(k.Name), k.Line, "unknown field", fix)
	}
}

// spec reads a machine (or, with isDefaults, the defaults), checking each
// field on its own.
func (d *decoder) spec(p *field.Path, n *yaml.Node, isDefaults bool) spec {
	var sp spec
	if nd := strictyaml.Deref(n); nd != nil {
		sp.line = nd.Line
	}
	if !isDefaults && strictyaml.IsNull(n) {
		d.Report(p, sp.line, "is empty", "write the machine's fields under its '- ': name, address, and user and passwordFrom unless defaults set them")
		return sp
	}
	var doc machineDoc
	what, fix := "a machine", "write a mapping such as {name: win-a, address: 192.168.56.20}"
	if isDefaults {
		what, fix = "defaults", "write a mapping such as {user: Administrator, winrm: {https: true}}"
	}
	unknown, ok := d.Mapping(p, n, &doc, fix)
	sp.mapping = ok
	if !ok {
		return sp
	}
	known := strictyaml.Fields(&doc)
	if isDefaults {
		known = known[3:] // all but name, address and nodeIP
	}
	d.refuse(p, unknown, what, known)
	if isDefaults {
		for _, f := range []struct {
			key  string
			node *yaml.Node
		}{{"name", &doc.Name}, {"address", &doc.Address}, {"nodeIP", &doc.NodeIP}} {
			if f.node.Kind != 0 {
				d.Report(p.Child(f.key), f.node.Line, "cannot have a default: each machine has its own", "set "+f.key+" on each machine")
			}
		}
	} else {
		sp.name = d.name(p.Child("name"), &doc.Name)
		sp.address = d.address(p.Child("address"), &doc.Address)
		sp.nodeIP = d.checked(p.Child("nodeIP"), &doc.NodeIP, checkNodeIP)
	}
	sp.winrm = d.winrm(p.Child("winrm"), &doc.WinRM)
	sp.user = d.str(p.Child("user"), &doc.User)
	sp.passwordFrom = d.passwordFrom(p.Child("passwordFrom"), &doc.PasswordFrom)
	sp.expectedBuild = d.expectedBuild(p.Child("expectedBuild"), &doc.ExpectedBuild)
	sp.labels = d.labels(p.Child("labels"), &doc.Labels)
	sp.taints = d.taints(p.Child("taints"), &doc.Taints)
	sp.binaries = d.binaries(p.Child("binaries"), &doc.Binaries)
	sp.kubelet = d.checked(p.Child("kubeletVersion"), &doc.KubeletVersion, checkKubeletVersion)
	sp.containerd = d.checked(p.Child("containerdVersion"), &doc.ContainerdVersion, checkContainerdVersion)
	sp.defender = d.boolean(p.Child("defenderExclusions"), &doc.DefenderExclusions)
	sp.metadataRoute = d.boolean(p.Child("cloudMetadataRoute"), &doc.CloudMetadataRoute)
	sp.prepull = d.boolean(p.Child("prepullImages"), &doc.PrepullImages)
	sp.underlayShape, sp.underlayVia = d.underlay(p.Child("underlay"), &doc.Underlay)
	return sp
}

// Underlay shapes (infra/underlay): how a machine reaches the kind network.
var underlayShapes = []string{"routed", "same-host", "none"}

// underlay reads an underlay mapping: its shape and the kind host's
// address the machine routes through.
func (d *decoder) underlay(p *field.Path, n *yaml.Node) (shape, via opt[string]) {
	var doc underlayDoc
	unknown, ok := d.Mapping(p, n, &doc, "write a mapping such as {shape: routed, via: 192.168.56.1}")
	if !ok {
		return shape, via
	}
	d.refuse(p, unknown, "underlay", strictyaml.Fields(&doc))
	shape = d.checked(p.Child("shape"), &doc.Shape, func(v string) (string, string) {
		for _, s := range underlayShapes {
			if v == s {
				return "", ""
			}
		}
		return quote(v) + " is not an underlay shape",
			"use routed (the machine routes to the kind network through the kind host: lab machines, cloud VMs), same-host (a VM on the kind network's own bridge) or none (the path is made by others; the harness only checks it)"
	})
	via = d.checked(p.Child("via"), &doc.Via, func(v string) (string, string) {
		if ip := net.ParseIP(v); ip == nil || ip.To4() == nil {
			return quote(v) + " is not an IPv4 address", "write the address of the kind host that the machine reaches, such as 192.168.56.1"
		}
		return "", ""
	})
	return shape, via
}

// winrm reads a winrm mapping.
func (d *decoder) winrm(p *field.Path, n *yaml.Node) winrmSpec {
	var w winrmSpec
	var doc winrmDoc
	unknown, ok := d.Mapping(p, n, &doc, "write a mapping such as {port: 5985, auth: ntlm} or {https: true, caBundle: ./winrm-ca.pem}")
	if !ok {
		return w
	}
	d.refuse(p, unknown, "winrm", strictyaml.Fields(&doc))
	w.port = d.integer(p.Child("port"), &doc.Port, fixPort)
	if w.port.ok() && !w.port.empty && (w.port.v < 1 || w.port.v > 65535) {
		d.Report(p.Child("port"), w.port.line, fmt.Sprintf("%d is out of range", w.port.v), fixPort)
		w.port.bad = true
	}
	w.https = d.boolean(p.Child("https"), &doc.HTTPS)
	w.insecure = d.boolean(p.Child("insecure"), &doc.Insecure)
	if ca := d.str(p.Child("caBundle"), &doc.CABundle); ca.set {
		w.caBundle = opt[filePath]{v: d.resolve(ca.v), set: true, bad: ca.bad, line: ca.line}
	}
	w.tlsServerName = d.str(p.Child("tlsServerName"), &doc.TLSServerName)
	if v := w.tlsServerName.v; w.tlsServerName.ok() && v != "" && !isHostName(v) {
		d.Report(p.Child("tlsServerName"), w.tlsServerName.line, quote(v)+" is not a DNS name or IP address",
			"write the name the machine's certificate is issued to, such as win-2022-a.lab")
		w.tlsServerName.bad = true
	}
	if a := d.str(p.Child("auth"), &doc.Auth); a.set {
		w.auth = opt[Auth]{v: Auth(a.v), set: true, bad: a.bad, line: a.line}
		if a.ok() && w.auth.v != AuthBasic && w.auth.v != AuthNTLM {
			fix := "use ntlm (local or domain accounts, sealed over HTTP) or basic (local accounts, HTTPS only)"
			if l := Auth(strings.ToLower(a.v)); l == AuthBasic || l == AuthNTLM {
				fix = fmt.Sprintf("write it in lower case: %s", l)
			}
			d.Report(p.Child("auth"), a.line, quote(a.v)+" is not an authentication method", fix)
			w.auth.bad = true
		}
	}
	return w
}

// passwordFrom reads a passwordFrom mapping: exactly one of env and file.
func (d *decoder) passwordFrom(p *field.Path, n *yaml.Node) opt[passwordFrom] {
	if n.Kind == 0 {
		return opt[passwordFrom]{}
	}
	o := opt[passwordFrom]{set: true, line: strictyaml.Deref(n).Line}
	var doc passwordFromDoc
	unknown, ok := d.Mapping(p, n, &doc, "write a mapping such as {env: WIN_A_PASSWORD}")
	if !ok {
		o.bad = true
		return o
	}
	d.refuse(p, unknown, "passwordFrom", strictyaml.Fields(&doc))
	env, file := d.str(p.Child("env"), &doc.Env), d.str(p.Child("file"), &doc.File)
	o.bad = len(unknown) > 0 || env.bad || file.bad
	switch {
	case o.bad:
	case env.set && file.set:
		d.Report(p, o.line, "sets both env and file", "keep one of them")
		o.bad = true
	case !env.set && !file.set:
		d.Report(p, o.line, "sets neither env nor file",
			"set env: VARIABLE (a variable that holds the password) or file: PATH (a file that holds only the password)")
		o.bad = true
	case env.set:
		if msg, fix := checkEnvName(env.v); msg != "" {
			d.Report(p.Child("env"), env.line, msg, fix)
			o.bad = true
		}
		o.v.env = env.v
	case file.v == "":
		d.Report(p.Child("file"), file.line, "is empty",
			"write the path of a file that holds only the password (relative to the inventory file's directory)")
		o.bad = true
	default:
		o.v.file = d.resolve(file.v)
	}
	return o
}

// checked reads a string field and checks a non-empty value with check.
func (d *decoder) checked(p *field.Path, n *yaml.Node, check func(string) (msg, fix string)) opt[string] {
	o := d.str(p, n)
	if o.ok() && o.v != "" {
		if msg, fix := check(o.v); msg != "" {
			d.Report(p, o.line, msg, fix)
			o.bad = true
		}
	}
	return o
}

// name reads a machine's name: a lower-case DNS label.
func (d *decoder) name(p *field.Path, n *yaml.Node) opt[string] { return d.checked(p, n, checkName) }

// address reads a machine's address: an IP address or DNS name.
func (d *decoder) address(p *field.Path, n *yaml.Node) opt[string] {
	return d.checked(p, n, checkAddress)
}

// expectedBuild reads a build such as 10.0.20348; "" means none.
func (d *decoder) expectedBuild(p *field.Path, n *yaml.Node) opt[Build] {
	str := d.str(p, n)
	o := opt[Build]{set: str.set, bad: str.bad, line: str.line}
	if !str.ok() || str.v == "" {
		return o
	}
	b, err := winrelease.ParseBuild(str.v)
	switch {
	case err != nil:
		fix := "write the build as 10.0.NNNNN (quoted), such as \"10.0.20348\" for Windows Server 2022; [Environment]::OSVersion.Version on the machine shows it"
		if v, err := winrelease.Parse(str.v); err == nil && v.HasRevision {
			if _, err := winrelease.ParseBuild(v.Build.String()); err == nil {
				fix = fmt.Sprintf("drop the revision: write %q (the check compares major.minor.build)", v.Build.String())
			}
		}
		d.Report(p, str.line, quote(str.v)+" is not a Windows build of the form 10.0.NNNNN", fix)
		o.bad = true
	case !b.Supported():
		oldest := winrelease.Releases()[0]
		d.Report(p, str.line,
			fmt.Sprintf("%s is older than %s (%s), the oldest build Kubernetes supports for Windows nodes", b, oldest.Build, oldest.Product),
			"use a supported build: "+winrelease.List())
		o.bad = true
	default:
		o.v = b
	}
	return o
}

// stringMap reads labels or binaries, a mapping of names to strings: each
// key is checked with checkKey (an inline password is refused), each value
// with checkValue; wrong entries are reported and left out. key names an
// entry's field.
func (d *decoder) stringMap(p *field.Path, n *yaml.Node, fix string, key func(string) *field.Path,
	checkKey, checkValue func(string) (msg, fix string)) map[string]string {
	var doc map[string]yaml.Node
	entries, _ := d.Mapping(p, n, &doc, fix)
	out := map[string]string{}
	for _, e := range entries {
		at := key(e.Name)
		if isPasswordKey(e.Name) {
			d.inlinePassword(at, e.Line)
			continue
		}
		if msg, fix := checkKey(e.Name); msg != "" {
			d.Report(at, e.Line, msg, fix)
			continue
		}
		if v := d.checked(at, e.Value, checkValue); v.ok() {
			out[e.Name] = v.v
		}
	}
	return out
}

// labels reads node labels; invalid ones are reported and left out.
func (d *decoder) labels(p *field.Path, n *yaml.Node) map[string]string {
	return d.stringMap(p, n, "write a mapping such as {topology.kubernetes.io/zone: lab-1}", p.Key, checkLabelKey, checkLabelValue)
}

// binaries reads the component -> source map.
func (d *decoder) binaries(p *field.Path, n *yaml.Node) map[string]string {
	return d.stringMap(p, n, `write a mapping such as {containerd: "https://example.com/containerd.zip"}`,
		func(k string) *field.Path { return p.Child(k) }, checkComponent, checkSource)
}

// taints reads node taints written as key=value:Effect or key:Effect.
func (d *decoder) taints(p *field.Path, n *yaml.Node) opt[[]corev1.Taint] {
	if n.Kind == 0 {
		return opt[[]corev1.Taint]{}
	}
	nd := strictyaml.Deref(n)
	o := opt[[]corev1.Taint]{set: true}
	if strictyaml.IsNull(nd) {
		return o
	}
	o.line = nd.Line
	if nd.Kind != yaml.SequenceNode {
		d.Report(p, nd.Line, "is "+describe(nd)+", not a list", `write a list such as ["os=windows:NoSchedule"]`)
		o.bad = true
		return o
	}
	seen := map[string]int{}
	for i, item := range nd.Content {
		v := d.str(p.Index(i), item)
		if !v.ok() {
			o.bad = true
			continue
		}
		t, msg, fix := parseTaint(v.v)
		if msg != "" {
			d.Report(p.Index(i), v.line, msg, fix)
			o.bad = true
			continue
		}
		id := t.Key + ":" + string(t.Effect)
		if j, dup := seen[id]; dup {
			d.Report(p.Index(i), v.line, fmt.Sprintf("repeats the key %s and effect %s of taints[%d]", t.Key, t.Effect, j),
				"keep one: a node has at most one taint per key and effect")
			o.bad = true
			continue
		}
		seen[id] = i
		o.v = append(o.v, t)
	}
	return o
}

// str reads a string field. Any scalar is taken as written (port-like or
// numeric label values need no quotes); null is the empty string.
func (d *decoder) str(p *field.Path, n *yaml.Node) opt[string] {
	if n.Kind == 0 {
		return opt[string]{}
	}
	v := strictyaml.Deref(n)
	o := opt[string]{set: true, line: v.Line}
	switch {
	case strictyaml.IsNull(v):
	case v.Kind == yaml.ScalarNode:
		o.v = v.Value
	default:
		d.Report(p, v.Line, "is "+describe(v)+", not a string", "write a single value")
		o.bad = true
	}
	return o
}

// boolean reads a true/false field; null sets it empty.
func (d *decoder) boolean(p *field.Path, n *yaml.Node) opt[bool] {
	return scalar[bool](d, p, n, "!!bool", "true or false", "write true or false")
}

// integer reads a whole-number field; null sets it empty.
func (d *decoder) integer(p *field.Path, n *yaml.Node, fix string) opt[int] {
	return scalar[int](d, p, n, "!!int", "a whole number", fix)
}

// scalar reads a field whose YAML tag must be tag (what names it in
// messages); null sets it empty.
func scalar[T any](d *decoder, p *field.Path, n *yaml.Node, tag, what, fix string) opt[T] {
	if n.Kind == 0 {
		return opt[T]{}
	}
	v := strictyaml.Deref(n)
	o := opt[T]{set: true, line: v.Line}
	if strictyaml.IsNull(v) {
		o.empty = true
		return o
	}
	if v.Kind != yaml.ScalarNode || v.ShortTag() != tag || v.Decode(&o.v) != nil {
		d.Report(p, v.Line, "is "+describe(v)+", not "+what, fix)
		o.bad = true
	}
	return o
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

// https reports whether the machine uses HTTPS (not the default; a wrong
// https value counts as the default so as not to report more than it).
func (m spec) https() bool {
	h := m.winrm.https
	if !h.ok() || h.empty {
		return defaultHTTPS
	}
	return h.v
}

// check reports missing required fields and fields that conflict, once
// defaults are applied.
func (d *decoder) check(p *field.Path, m spec) {
	missing := func(o opt[string], key, fix string) {
		switch {
		case !o.set:
			d.Report(p.Child(key), m.line, "is missing", fix)
		case o.ok() && o.v == "":
			d.Report(p.Child(key), o.line, "is empty"+o.from(), fix)
		}
	}
	missing(m.name, "name", "set name: the Kubernetes node name, a lower-case DNS label such as win-2022-a")
	missing(m.address, "address", "set address: the machine's IP address or DNS name")
	missing(m.user, "user", "set user here or in defaults: the account WinRM logs in as, such as Administrator")
	if !m.passwordFrom.set {
		d.Report(p.Child("passwordFrom"), m.line, "is missing",
			"set passwordFrom: {env: VARIABLE} or passwordFrom: {file: PATH} here or in defaults")
	}

	w, wp := m.winrm, p.Child("winrm")
	https := m.https()
	insecure := w.insecure.ok() && w.insecure.v
	ca := w.caBundle.ok() && w.caBundle.v.raw != ""
	if insecure && ca {
		d.Report(wp.Child("insecure"), w.insecure.line,
			fmt.Sprintf("insecure: true%s and caBundle%s %s are exclusive: insecure skips the certificate check that caBundle is for",
				w.insecure.from(), w.caBundle.from(), quote(w.caBundle.v.raw)),
			"keep caBundle to verify the machine's certificate and drop insecure, or drop caBundle to skip the check ("+fixNoDrop+")")
	}
	if port := w.port; port.ok() && port.inherited && !port.empty {
		usual, other, otherName, scheme := defaultHTTPSPort, defaultHTTPPort, "HTTP", "HTTPS"
		if !https {
			usual, other, otherName, scheme = defaultHTTPPort, defaultHTTPSPort, "HTTPS", "HTTP"
		}
		if port.v == other {
			d.Report(wp.Child("port"), port.line,
				fmt.Sprintf("%d (from defaults) is WinRM's %s port, but this machine uses %s", port.v, otherName, scheme),
				fmt.Sprintf("set port: %d on the machine (or port: ~ for the port that goes with https)", usual))
		}
	}
	if https {
		return
	}
	httpsFalse := "https: false" + w.https.from()
	if !w.https.ok() || w.https.empty {
		httpsFalse = "HTTP (https is false unless set)"
	}
	if a := w.auth; a.ok() && a.v == AuthBasic {
		d.Report(wp.Child("auth"), a.line,
			fmt.Sprintf("auth: basic%s over %s is refused: Basic sends the password in clear text with every message, and a stock WinRM refuses it (AllowUnencrypted=false)", a.from(), httpsFalse),
			"use auth: ntlm (the default), which seals every message over HTTP, or set https: true with the machine's CA in caBundle (infra/windows/setup/Prepare-WinRM.ps1 makes an HTTPS listener and prints it)")
	}
	if insecure {
		d.Report(wp.Child("insecure"), w.insecure.line,
			fmt.Sprintf("insecure: true%s with %s: insecure only applies to HTTPS", w.insecure.from(), httpsFalse),
			"remove insecure, or set https: true")
	}
	if ca {
		d.Report(wp.Child("caBundle"), w.caBundle.line,
			fmt.Sprintf("caBundle%s with %s: a CA bundle only applies to HTTPS", w.caBundle.from(), httpsFalse),
			"set https: true to verify the machine's certificate, or remove caBundle ("+fixNoDrop+")")
	}
	if t := w.tlsServerName; t.ok() && t.v != "" {
		d.Report(wp.Child("tlsServerName"), t.line,
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
		who := fmt.Sprintf("#%d", p.index)
		if name := p.m.name.v; name != "" {
			who = strconv.Quote(name)
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
		defPassword, _ = d.password(pathDefaults, defs.passwordFrom, users(pwUsers))
	}
	if len(caUsers) > 0 {
		defCA, _ = d.caBundle(pathDefaults, defs.winrm.caBundle, users(caUsers))
	}

	machines := make([]Machine, 0, len(ps))
	for _, p := range ps {
		m, w := p.m, p.m.winrm
		port, _ := m.port()
		out := Machine{
			Name:    m.name.v,
			Address: m.address.v,
			NodeIP:  m.nodeIP.v,
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
			KubeletVersion:     normalVersion(m.kubelet.v, "v"),
			ContainerdVersion:  normalVersion(m.containerd.v, ""),
			DefenderExclusions: m.defender.v,
			CloudMetadataRoute: m.metadataRoute.v,
			PrepullImages:      m.prepull.v,
			Underlay:           Underlay{Shape: m.underlayShape.v, Via: m.underlayVia.v},
		}
		if w.auth.ok() {
			out.WinRM.Auth = w.auth.v
		}
		if pf := m.passwordFrom; pf.ok() {
			if pf.inherited {
				out.Password = defPassword
			} else {
				out.Password, _ = d.password(p.p, pf, "")
			}
		}
		if ca := w.caBundle; ca.ok() && ca.v.raw != "" && m.https() {
			out.WinRM.CABundlePath = ca.v.abs
			if ca.inherited {
				out.WinRM.CABundle = defCA
			} else {
				out.WinRM.CABundle, _ = d.caBundle(p.p, ca, "")
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

// isPasswordKey reports whether a key would hold an inline password.
func isPasswordKey(key string) bool { return strings.EqualFold(key, "password") }

// inlinePassword reports an inline password. The message never holds the
// value.
func (d *decoder) inlinePassword(p *field.Path, line int) {
	d.Report(p, line, "an inline password is refused: the inventory file must not hold passwords",
		"remove it and use passwordFrom: {env: VARIABLE} (a variable set where the harness runs) or passwordFrom: {file: PATH} (a file that holds only the password)")
}

// describe and quote name values in messages.
var describe, quote = strictyaml.Describe, strictyaml.Quote
