package vms

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/winconform/winconform/internal/runid"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/infra/windows/inventory"
	"github.com/winconform/winconform/internal/strictyaml"
)

// File is a loaded and checked VM file: which provider makes the machines,
// from what, how many, and what they are to the join.
type File struct {
	// Path is the file as given to Load or Parse; Dir its directory,
	// absolute.
	Path, Dir string
	// Provider is the provider's registered name.
	Provider string
	// Connection is how to reach it, credentials read.
	Connection Connection
	// Image is the golden image, as the provider names it ("" for
	// providers of existing machines).
	Image string
	// Count is how many machines to make (0 for providers of existing
	// machines, which take all theirs).
	Count int
	// CPUs and MemoryMiB size each machine.
	CPUs, MemoryMiB int
	// NamePrefix starts each machine's name: "<namePrefix>-<run ID>-<n>".
	NamePrefix string
	// Settings is what the provider's Registration.Settings returned.
	Settings any

	machine *yaml.Node                  // the machine block, relative paths made absolute
	env     func(string) (string, bool) // the environment the file was loaded in
}

// The VM file's defaults and bounds.
const (
	DefaultCPUs       = 2
	DefaultMemoryMiB  = 4096
	DefaultNamePrefix = "win"
	// MaxCount bounds count: a typo (count: 200) should not order a fleet.
	MaxCount = 64
)

// fileDoc is the file as written (see strictyaml): the common fields; the
// provider's block and unknown keys land in Rest.
type fileDoc struct {
	Provider   yaml.Node            `yaml:"provider"`
	Connection yaml.Node            `yaml:"connection"`
	Image      yaml.Node            `yaml:"image"`
	Count      yaml.Node            `yaml:"count"`
	CPUs       yaml.Node            `yaml:"cpus"`
	Memory     yaml.Node            `yaml:"memory"`
	NamePrefix yaml.Node            `yaml:"namePrefix"`
	Machine    yaml.Node            `yaml:"machine"`
	Rest       map[string]yaml.Node `yaml:",inline"`
}

type connectionDoc struct {
	Endpoint    yaml.Node            `yaml:"endpoint"`
	User        yaml.Node            `yaml:"user"`
	Credentials yaml.Node            `yaml:"credentials"`
	Unknown     map[string]yaml.Node `yaml:",inline"`
}

type secretRefDoc struct {
	Env     yaml.Node            `yaml:"env"`
	File    yaml.Node            `yaml:"file"`
	Unknown map[string]yaml.Node `yaml:",inline"`
}

// reserved are the common fields: no provider is named after one.
var reserved = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range strictyaml.Fields(&fileDoc{}) {
		m[f] = true
	}
	return m
}()

// LoadFromOS is Load with the process's environment.
func LoadFromOS(path string) (*File, error) { return Load(path, os.LookupEnv) }

// Load reads and checks the VM file at path; env looks up the variables
// credentials reference (os.LookupEnv when nil). It returns a *Error that
// lists every problem.
func Load(path string, env func(string) (string, bool)) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		p := Problem{Message: "cannot read the VM file: " + err.Error(), Fix: "check the path and the file's permissions"}
		if errors.Is(err, fs.ErrNotExist) {
			p.Message, p.Fix = "the VM file does not exist", "check the path (a relative path is from the working directory)"
		}
		return nil, &Error{Path: path, Problems: []Problem{p}, cause: err}
	}
	return Parse(path, data, env)
}

// Parse checks a VM file's content; path names it in errors, and relative
// paths in it are relative to its directory. env is as for Load.
func Parse(path string, data []byte, env func(string) (string, bool)) (*File, error) {
	if env == nil {
		env = os.LookupEnv
	}
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	d := &decoder{path: path, dir: dir, env: env}
	f := d.decode(data)
	if len(d.Problems) > 0 {
		return nil, d.err()
	}
	return f, nil
}

// decoder decodes one VM file, collecting its problems.
type decoder struct {
	strictyaml.Decoder
	path, dir string
	env       func(string) (string, bool)
}

func (d *decoder) err() *Error {
	e := &Error{Path: d.path}
	for _, p := range d.Problems {
		q := Problem{Line: p.Line, Message: p.Message, Fix: p.Fix}
		if p.Path != nil {
			q.Field = p.Path.String()
		}
		e.Problems = append(e.Problems, q)
	}
	sort.SliceStable(e.Problems, func(i, j int) bool { return e.Problems[i].Line < e.Problems[j].Line })
	return e
}

const fixTop = "write a mapping such as {provider: libvirt, image: ..., count: 2, machine: {user: Administrator, passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}}}"

func (d *decoder) decode(data []byte) *File {
	top := d.Document(data)
	if top == nil {
		if len(d.Problems) == 0 {
			d.Report(field.NewPath("provider"), 0, "is missing: the VM file is empty", "write "+fixTop)
		}
		return nil
	}
	var doc fileDoc
	rest, ok := d.Mapping(nil, top, &doc, fixTop)
	if !ok {
		return nil
	}
	f := &File{Path: d.path, Dir: d.dir, env: d.env}
	reg, known := d.provider(&doc.Provider)
	f.Provider = reg.Name

	// The provider's block, and keys nobody knows.
	var block *yaml.Node
	fields := strictyaml.Fields(&doc)
	for _, k := range rest {
		p := field.NewPath(k.Name)
		switch _, isProvider := Lookup(k.Name); {
		case known && k.Name == reg.Name && reg.Settings != nil:
			block = k.Value
		case known && k.Name == reg.Name:
			d.Report(p, k.Line, fmt.Sprintf("%s has no settings of its own", reg.Name), "remove the block")
		case isProvider:
			d.Report(p, k.Line, fmt.Sprintf("is the block of provider %s, but provider is %s", k.Name, quoteOr(f.Provider)),
				"keep only the block of the provider the file names")
		case isSecretKey(k.Name):
			d.inlineSecret(p, k.Line)
		default:
			fix := "the VM file accepts " + strings.Join(fields, ", ") + ", and a block named after its provider"
			if near := strictyaml.Suggest(k.Name, append(fields, Names()...)); near != "" {
				fix = fmt.Sprintf("did you mean %q? %s", near, fix)
			}
			d.Report(p, k.Line, "unknown field", fix)
		}
	}

	f.Connection = d.connection(&doc.Connection, reg, known)
	existing := known && reg.Existing
	f.Image = d.image(&doc.Image, existing)
	f.Count = d.count(&doc.Count, existing)
	f.CPUs = d.cpus(&doc.CPUs, existing)
	f.MemoryMiB = d.memory(&doc.Memory, existing)
	f.NamePrefix = d.namePrefix(&doc.NamePrefix, existing)
	if !existing {
		f.machine = d.machineBlock(&doc.Machine, f.NamePrefix)
	} else if doc.Machine.Kind != 0 {
		d.Report(field.NewPath("machine"), doc.Machine.Line, fmt.Sprintf("is not used by %s: its machines are set in its inventory", reg.Name),
			"remove machine; set the machines' WinRM, user and passwordFrom in the inventory file")
	}
	if known && reg.Settings != nil {
		f.Settings = reg.Settings(&Block{d: d, path: field.NewPath(reg.Name), node: block, conn: &f.Connection})
	}
	return f
}

// provider reads provider: a registered name.
func (d *decoder) provider(n *yaml.Node) (Registration, bool) {
	p := field.NewPath("provider")
	fix := "set provider to one of " + joinOr(Names())
	v, ok := d.scalar(p, n)
	switch {
	case !ok:
		return Registration{}, false
	case n.Kind == 0:
		d.Report(p, 0, "is missing", fix)
		return Registration{}, false
	case v == "":
		d.Report(p, n.Line, "is empty", fix)
		return Registration{}, false
	}
	r, found := Lookup(v)
	if !found {
		if near := strictyaml.Suggest(v, Names()); near != "" {
			fix = fmt.Sprintf("did you mean %q? %s", near, fix)
		}
		d.Report(p, n.Line, quote(v)+" is not a provider this harness has", fix)
		return Registration{Name: v}, false
	}
	return r, true
}

// connection reads connection: endpoint, user and credentials by reference,
// as far as the provider takes them.
func (d *decoder) connection(n *yaml.Node, reg Registration, known bool) Connection {
	p := field.NewPath("connection")
	var c Connection
	var doc connectionDoc
	unknown, ok := d.Mapping(p, n, &doc, "write a mapping such as {endpoint: qemu+tcp://kvm.lab/system, credentials: {password: {env: VAR}}}")
	if !ok {
		return c
	}
	d.refuse(p, unknown, "connection", strictyaml.Fields(&doc))
	if !known {
		return c
	}
	need := func(key string, node *yaml.Node, need Need, fix string) string {
		at := p.Child(key)
		v, ok := d.scalar(at, node)
		switch {
		case !ok:
		case node.Kind != 0 && need == Refused:
			d.Report(at, node.Line, fmt.Sprintf("is not used by %s", reg.Name), "remove it")
		case need == Required && node.Kind == 0:
			d.Report(at, d.lineOf(n), "is missing", fix)
		case need == Required && v == "":
			d.Report(at, node.Line, "is empty", fix)
		}
		return v
	}
	example := reg.EndpointExample
	if example == "" {
		example = "the provider's address"
	}
	c.Endpoint = need("endpoint", &doc.Endpoint, reg.Endpoint, fmt.Sprintf("set endpoint to where %s is, such as %s", reg.Summary, example))
	c.User = need("user", &doc.User, reg.User, fmt.Sprintf("set user to the account %s is reached as", reg.Summary))
	c.Credentials = d.credentials(p.Child("credentials"), &doc.Credentials, reg, n)
	return c
}

// credentials reads connection.credentials: name -> {env|file}, for the
// names the provider takes.
func (d *decoder) credentials(p *field.Path, n *yaml.Node, reg Registration, parent *yaml.Node) map[string]Secret {
	var doc map[string]yaml.Node
	entries, ok := d.Mapping(p, n, &doc, "write a mapping of names to references, such as {password: {env: VSPHERE_PASSWORD}}")
	if !ok {
		return nil
	}
	var names []string
	for _, c := range reg.Credentials {
		names = append(names, c.Name)
	}
	out := map[string]Secret{}
	for _, e := range entries {
		at := p.Child(e.Name)
		if !slices.Contains(names, e.Name) {
			fix := fmt.Sprintf("%s takes no credentials", reg.Name)
			if len(names) > 0 {
				fix = fmt.Sprintf("%s takes %s", reg.Name, joinOr(names))
				if near := strictyaml.Suggest(e.Name, names); near != "" {
					fix = fmt.Sprintf("did you mean %q? %s", near, fix)
				}
			}
			d.Report(at, e.Line, "unknown credential", fix)
			continue
		}
		if s, ok := d.secretRef(at, e.Value); ok {
			out[e.Name] = s
		}
	}
	for _, c := range reg.Credentials {
		if _, written := doc[c.Name]; c.Required && !written {
			line := d.lineOf(n)
			if line == 0 {
				line = d.lineOf(parent)
			}
			d.Report(p.Child(c.Name), line, "is missing",
				fmt.Sprintf("set credentials.%s: {env: VARIABLE} or {file: PATH}, where %s's %s is kept", c.Name, reg.Name, c.Name))
		}
	}
	return out
}

// secretRef reads a credential by reference, {env: VAR} or {file: PATH},
// and the secret it points at. A value written inline is refused.
func (d *decoder) secretRef(p *field.Path, n *yaml.Node) (Secret, bool) {
	nd := strictyaml.Deref(n)
	if nd != nil && nd.Kind == yaml.ScalarNode && !strictyaml.IsNull(nd) {
		d.inlineSecret(p, nd.Line)
		return "", false
	}
	var doc secretRefDoc
	unknown, ok := d.Mapping(p, n, &doc, "write {env: VARIABLE} or {file: PATH}")
	if !ok {
		return "", false
	}
	d.refuse(p, unknown, "a credential", strictyaml.Fields(&doc))
	env, envOK := d.scalar(p.Child("env"), &doc.Env)
	file, fileOK := d.scalar(p.Child("file"), &doc.File)
	line := d.lineOf(n)
	switch {
	case len(unknown) > 0 || !envOK || !fileOK:
		return "", false
	case doc.Env.Kind != 0 && doc.File.Kind != 0:
		d.Report(p, line, "sets both env and file", "keep one of them")
	case env != "":
		v, set := d.env(env)
		switch {
		case !envName.MatchString(env):
			d.Report(p.Child("env"), doc.Env.Line, quote(env)+" is not an environment variable's name", "use letters, digits and underscores, not starting with a digit")
		case !set:
			d.Report(p.Child("env"), doc.Env.Line, fmt.Sprintf("the variable %s is not set", env),
				fmt.Sprintf("set %s in the environment the harness runs in (export %s=...), or use file: PATH", env, env))
		case v == "":
			d.Report(p.Child("env"), doc.Env.Line, fmt.Sprintf("the variable %s is set but empty", env), fmt.Sprintf("set %s to the secret", env))
		default:
			return Secret(v), true
		}
	case file != "":
		abs := d.resolve(file)
		data, err := os.ReadFile(abs)
		v := strings.TrimRight(string(data), "\r\n")
		switch {
		case errors.Is(err, fs.ErrNotExist):
			d.Report(p.Child("file"), doc.File.Line, fmt.Sprintf("%s does not exist", quote(abs)), "create it with the secret on one line, or fix the path (a relative path is from the VM file's directory)")
		case err != nil:
			d.Report(p.Child("file"), doc.File.Line, fmt.Sprintf("%s cannot be read: %v", quote(abs), err), "check the file's permissions")
		case v == "":
			d.Report(p.Child("file"), doc.File.Line, fmt.Sprintf("%s is empty", quote(abs)), "write the secret in it")
		default:
			return Secret(v), true
		}
	default:
		d.Report(p, line, "sets neither env nor file", "write {env: VARIABLE} (a variable that holds it) or {file: PATH} (a file that holds only it)")
	}
	return "", false
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// isSecretKey reports whether a key names a secret that would be written
// inline.
func isSecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, ref := range []string{"from", "ref", "file", "env"} {
		if strings.HasSuffix(k, ref) {
			return false // a reference: passwordFrom, tokenFile
		}
	}
	for _, s := range []string{"password", "passwd", "secret", "token", "apikey", "accesskey"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

func (d *decoder) inlineSecret(p *field.Path, line int) {
	d.Report(p, line, "an inline credential is refused: the VM file must not hold secrets",
		"reference it instead: {env: VARIABLE} (a variable set where the harness runs) or {file: PATH} (a file that holds only the secret), under connection.credentials for the provider's and machine.passwordFrom for the machines'")
}

// refuse reports keys a mapping does not know: an inline secret, or an
// unknown field with the nearest known one.
func (d *decoder) refuse(p *field.Path, keys []strictyaml.Key, what string, known []string) {
	for _, k := range keys {
		if isSecretKey(k.Name) {
			d.inlineSecret(p.Child(k.Name), k.Line)
			continue
		}
		fix := what + " accepts " + strings.Join(known, ", ")
		if near := strictyaml.Suggest(k.Name, known); near != "" {
			fix = fmt.Sprintf("did you mean %q? %s", near, fix)
		}
		d.Report(p.Child(k.Name), k.Line, "unknown field", fix)
	}
}

func (d *decoder) image(n *yaml.Node, existing bool) string {
	p := field.NewPath("image")
	v, ok := d.scalar(p, n)
	switch {
	case !ok:
	case existing && n.Kind != 0:
		d.Report(p, n.Line, "is not used by a provider of existing machines", "remove it")
	case existing:
	case n.Kind == 0:
		d.Report(p, 0, "is missing", "set image to the golden image the machines are made from (see the README's VM section: a qcow2 path for libvirt, a template for vsphere, an image ID for azure, a VHDX path for hyperv)")
	case v == "":
		d.Report(p, n.Line, "is empty", "set image to the golden image the machines are made from")
	}
	return v
}

func (d *decoder) count(n *yaml.Node, existing bool) int {
	p := field.NewPath("count")
	fix := fmt.Sprintf("set count to how many machines to make, from 1 to %d", MaxCount)
	v, set, ok := d.integer(p, n, fix)
	switch {
	case existing && n.Kind != 0:
		d.Report(p, n.Line, "is not used by a provider of existing machines: it takes every machine of its inventory", "remove it")
		return 0
	case existing:
	case !ok:
	case !set:
		d.Report(p, 0, "is missing", fix)
	case v < 1:
		d.Report(p, n.Line, fmt.Sprintf("%d is not a number of machines", v), fix)
	case v > MaxCount:
		d.Report(p, n.Line, fmt.Sprintf("%d is more than %d", v, MaxCount), fix)
	}
	return v
}

func (d *decoder) cpus(n *yaml.Node, existing bool) int {
	p := field.NewPath("cpus")
	fix := "set cpus to the number of virtual CPUs, 1 or more (2 by default; Kubernetes' Windows nodes want 2)"
	v, set, ok := d.integer(p, n, fix)
	switch {
	case !ok:
	case existing && set:
		d.Report(p, n.Line, "is not used by a provider of existing machines", "remove it")
	case existing:
	case !set:
		return DefaultCPUs
	case v < 1:
		d.Report(p, n.Line, fmt.Sprintf("%d is not a number of CPUs", v), fix)
	}
	return v
}

func (d *decoder) memory(n *yaml.Node, existing bool) int {
	p := field.NewPath("memory")
	const fix = "write the memory with its unit, such as 4Gi or 4096Mi (4Gi by default)"
	if n.Kind == 0 {
		if existing {
			return 0
		}
		return DefaultMemoryMiB
	}
	if existing {
		d.Report(p, n.Line, "is not used by a provider of existing machines", "remove it")
		return 0
	}
	nd := strictyaml.Deref(n)
	if nd.Kind != yaml.ScalarNode || strictyaml.IsNull(nd) {
		d.Report(p, nd.Line, "is "+describe(nd)+", not an amount of memory", fix)
		return 0
	}
	if nd.ShortTag() == "!!int" {
		d.Report(p, nd.Line, "the number "+nd.Value+" has no unit", fmt.Sprintf("write it with its unit: %sMi for MiB (or Gi for GiB, such as 4Gi)", nd.Value))
		return 0
	}
	q, err := resource.ParseQuantity(nd.Value)
	if err != nil {
		d.Report(p, nd.Line, quote(nd.Value)+" is not an amount of memory", fix)
		return 0
	}
	const mi = 1 << 20
	b := q.Value()
	switch {
	case b <= 0:
		d.Report(p, nd.Line, quote(nd.Value)+" is no memory", fix)
	case b%mi != 0:
		d.Report(p, nd.Line, quote(nd.Value)+" is not a whole number of MiB", fix)
	default:
		return int(b / mi)
	}
	return 0
}

// dnsLabel is a lower-case DNS label.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

func (d *decoder) namePrefix(n *yaml.Node, existing bool) string {
	p := field.NewPath("namePrefix")
	// The longest name: prefix, run ID, and the count's digits.
	maxPrefix := 63 - 2 - runid.Max - len(fmt.Sprint(MaxCount))
	fix := fmt.Sprintf("use a lower-case DNS label of at most %d characters, such as win", maxPrefix)
	v, ok := d.scalar(p, n)
	switch {
	case !ok:
	case existing && n.Kind != 0:
		d.Report(p, n.Line, "is not used by a provider of existing machines: their names are the inventory's", "remove it")
	case existing:
	case n.Kind == 0:
		return DefaultNamePrefix
	case !dnsLabel.MatchString(v) || len(v) > maxPrefix:
		d.Report(p, n.Line, quote(v)+" cannot start a node name", fix)
	}
	return v
}

// The fields of the machine block that the harness sets itself.
var machineOwn = []string{"name", "address", "nodeIP"}

// machineBlock reads machine: the inventory's defaults for every VM (its
// WinRM, user, passwordFrom, labels, taints, binaries...). It is checked
// as the inventory checks its defaults, with the secrets it references
// read, by decoding a trial inventory of one machine.
func (d *decoder) machineBlock(n *yaml.Node, prefix string) *yaml.Node {
	p := field.NewPath("machine")
	const fix = "set machine: {user: Administrator, passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}} at least: what the join needs to reach each VM, as an inventory's defaults"
	nd := strictyaml.Deref(n)
	if strictyaml.IsNull(nd) {
		if nd != nil && nd.Kind != 0 {
			d.Report(p, nd.Line, "is empty", fix)
		} else {
			d.Report(p, 0, "is missing", fix)
		}
		return nil
	}
	if nd.Kind != yaml.MappingNode {
		d.Report(p, nd.Line, "is "+describe(nd)+", not a mapping", fix)
		return nil
	}
	m := copyNode(nd)
	ok := true
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		switch {
		case slices.Contains(machineOwn, k.Value):
			d.Report(p.Child(k.Value), k.Line, "is set by the harness for each VM", "remove it: each VM is named after the run and reached at the address its provider reports")
			ok = false
		case isSecretKey(k.Value):
			d.inlineSecret(p.Child(k.Value), k.Line)
			ok = false
		}
	}
	if !ok {
		return nil
	}
	d.absPaths(m)
	if prefix == "" {
		prefix = DefaultNamePrefix
	}
	data, err := inventoryYAML(m, []Placed{{Name: MachineName(prefix, "check", 1), Address: "192.0.2.1"}})
	if err != nil {
		d.Report(p, nd.Line, "cannot be written as an inventory's defaults: "+err.Error(), fix)
		return nil
	}
	if _, err := inventory.Parse(d.path, data, d.env); err != nil {
		var ie *inventory.Error
		if !errors.As(err, &ie) {
			d.Report(p, nd.Line, err.Error(), fix)
			return nil
		}
		for _, q := range ie.Problems {
			f := strings.TrimPrefix(q.Field, "defaults.")
			if f == "defaults" || f == "" {
				f = ""
			}
			at := p
			if f != "" {
				at = field.NewPath("machine." + f)
			}
			msg := strings.ReplaceAll(q.Message, " (from defaults)", "")
			fx := strings.ReplaceAll(strings.ReplaceAll(q.Fix, " here or in defaults", ""), "in defaults", "in machine")
			d.Report(at, lineAt(nd, f), msg, fx)
		}
		return nil
	}
	return m
}

// absPaths makes the relative paths of a machine block (winrm.caBundle,
// passwordFrom.file) absolute, from the VM file's directory: the inventory
// made from it lives elsewhere.
func (d *decoder) absPaths(m *yaml.Node) {
	for _, path := range [][2]string{{"winrm", "caBundle"}, {"passwordFrom", "file"}} {
		if v := child(child(m, path[0]), path[1]); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" && !strictyaml.IsNull(v) {
			v.Value = d.resolve(v.Value)
		}
	}
}

// child returns the value of key in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	n = strictyaml.Deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return strictyaml.Deref(n.Content[i+1])
		}
	}
	return nil
}

// lineAt returns the line of the field at path (dotted, "winrm.port";
// indexes dropped) within n, or n's line.
func lineAt(n *yaml.Node, path string) int {
	line := n.Line
	if path == "" {
		return line
	}
	cur := n
	for _, part := range strings.Split(path, ".") {
		part, _, _ = strings.Cut(part, "[")
		next := child(cur, part)
		if next == nil {
			return line
		}
		cur, line = next, next.Line
	}
	return line
}

// copyNode returns a deep copy of n, aliases followed.
func copyNode(n *yaml.Node) *yaml.Node {
	n = strictyaml.Deref(n)
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = copyNode(x)
	}
	return &c
}

// scalar reads a string field: any scalar as written, null as "". It
// reports a list or a mapping and returns false.
func (d *decoder) scalar(p *field.Path, n *yaml.Node) (string, bool) {
	if n.Kind == 0 {
		return "", true
	}
	v := strictyaml.Deref(n)
	switch {
	case strictyaml.IsNull(v):
		return "", true
	case v.Kind == yaml.ScalarNode:
		return v.Value, true
	}
	d.Report(p, v.Line, "is "+describe(v)+", not a single value", "write a single value")
	return "", false
}

// integer reads a whole number: its value, whether it is written (and not
// null), and false when it is not a whole number (reported).
func (d *decoder) integer(p *field.Path, n *yaml.Node, fix string) (int, bool, bool) {
	v := strictyaml.Deref(n)
	if v == nil || v.Kind == 0 || strictyaml.IsNull(v) {
		return 0, false, true
	}
	var i int
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&i) != nil {
		d.Report(p, v.Line, "is "+describe(v)+", not a whole number", fix)
		return 0, true, false
	}
	return i, true, true
}

func (d *decoder) resolve(raw string) string {
	if raw == "" || filepath.IsAbs(raw) {
		return raw
	}
	return filepath.Join(d.dir, raw)
}

func (d *decoder) lineOf(n *yaml.Node) int {
	if nd := strictyaml.Deref(n); nd != nil {
		return nd.Line
	}
	return 0
}

func quoteOr(s string) string {
	if s == "" {
		return "not set"
	}
	return quote(s)
}
