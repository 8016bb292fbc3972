package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/winconform/winconform/internal/runid"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Machines is the VM file: which provider makes the Windows machines, from
// what, how many, and what they are to the join; and the provider's own
// block, a key named after it, decoded into the Go type it registered.
type Machines struct {
	// Provider is the provider's registered name.
	Provider string `yaml:"provider"`
	// Connection is how to reach it, its credentials read.
	Connection Connection `yaml:"connection"`
	// Image is the golden image, as the provider names it ("" for
	// providers of existing machines).
	Image string `yaml:"image"`
	// Count is how many machines to make, 1 to MaxCount (0 for providers
	// of existing machines, which take all theirs).
	Count int `yaml:"count"`
	// CPUs and MemoryMiB size each machine: 2 and 4Gi unless set.
	CPUs      int `yaml:"cpus"`
	MemoryMiB MiB `yaml:"memory"`
	// NamePrefix starts each machine's name: "<namePrefix>-<run ID>-<n>".
	NamePrefix string `yaml:"namePrefix"`
	// Machine is what every machine is to the join: an inventory's
	// defaults, without name, address and nodeIP, which the harness sets.
	Machine Machine `yaml:"machine"`

	// Path is the file, as given to Load or Parse; Dir its directory, absolute.
	Path, Dir string `yaml:"-"`
	// Block is the provider's block, decoded and checked.
	Block ProviderBlock `yaml:"-"`

	env    Env
	blocks []entry // keys that name providers
}

// Connection is how to reach the provider.
type Connection struct {
	// Endpoint is where the provider is: a libvirt URI, a vCenter, a
	// Hyper-V host, an Azure cloud's endpoint. "" when not set.
	Endpoint string `yaml:"endpoint"`
	// User is the account the provider is reached as, "" when not set.
	User string `yaml:"user"`
	// Credentials are the provider's secrets, by name, each by reference.
	Credentials map[string]SecretRef `yaml:"credentials"`
}

// The VM file's defaults and bounds.
const (
	DefaultCPUs       = 2
	DefaultMemoryMiB  = 4096
	DefaultNamePrefix = "win"
	// MaxCount bounds count: a typo (count: 200) should not order a fleet.
	MaxCount = 64
)

// MiB is an amount of memory in MiB, written with its unit (4Gi, 4096Mi).
type MiB int

// UnmarshalText reads an amount of memory; its error says the fix after "; ".
func (m *MiB) UnmarshalText(text []byte) error {
	const fix = "write the memory with its unit, such as 4Gi or 4096Mi (4Gi by default)"
	s := string(text)
	q, err := resource.ParseQuantity(s)
	switch {
	case isDigits(s):
		return fmt.Errorf("the number %s has no unit; write it with its unit: %sMi for MiB (or Gi for GiB, such as 4Gi)", s, s)
	case err != nil:
		return fmt.Errorf("%s is not an amount of memory; %s", Quote(s), fix)
	case q.Value() <= 0:
		return fmt.Errorf("%s is no memory; %s", Quote(s), fix)
	case q.Value()%(1<<20) != 0:
		return fmt.Errorf("%s is not a whole number of MiB; %s", Quote(s), fix)
	}
	*m = MiB(q.Value() >> 20)
	return nil
}

// Need says whether a field of the connection is required, optional or refused.
type Need int

// The needs.
const (
	Refused Need = iota
	Optional
	Required
)

// Credential is a name connection.credentials takes.
type Credential struct {
	Name     string
	Required bool
}

// Provider is a VM provider as the VM file knows it: what its connection
// takes, the Go type of its block, and how to open it.
type Provider struct {
	// Name is the VM file's provider, and the key of its block.
	Name string
	// Summary says in a few words what the provider drives: "a vCenter".
	Summary string
	// Existing is true for a provider of machines that exist already: the
	// VM file's image, count, cpus, memory, namePrefix and machine are
	// refused.
	Existing bool
	// Endpoint and User say whether connection.endpoint and
	// connection.user are required, optional or refused; EndpointExample
	// is an endpoint, for messages.
	Endpoint, User  Need
	EndpointExample string
	// Credentials are the names connection.credentials takes.
	Credentials []Credential
	// Open is how to connect to the provider: infra/vms.Register sets it
	// (its own func type, which takes the loaded file and returns a
	// vms.Provider), and vms.Open calls it. It is opaque here: config is
	// below the package that says what a provider is, and never calls it.
	Open any

	block func() ProviderBlock
}

// ProviderBlock is a provider's block of the VM file. The loader decodes it
// strictly into the provider's type, then Check gives it its defaults and
// returns its problems, with paths from p (the block's); f is the VM file,
// the rest of it decoded.
type ProviderBlock interface {
	Check(f *Machines, p *field.Path) field.ErrorList
}

var (
	providersMu sync.RWMutex
	providers   = map[string]Provider{}
)

// RegisterProvider adds a provider whose block decodes into a T to the
// one registry of providers: the loader reads their names, blocks and
// connections from it, and vms.Open their Open (a provider registers with
// vms.Register, which sets Open and calls this). It panics on a name that
// is empty, a field of the VM file or registered already: programming
// errors.
func RegisterProvider[T any, P interface {
	*T
	ProviderBlock
}](p Provider) {
	providersMu.Lock()
	defer providersMu.Unlock()
	if _, dup := providers[p.Name]; dup || p.Name == "" || slices.Contains(keys(Machines{}), p.Name) {
		panic(fmt.Sprintf("config: cannot register a provider named %q", p.Name))
	}
	p.block = func() ProviderBlock { return P(new(T)) }
	providers[p.Name] = p
}

// LookupProvider returns the provider registered as name.
func LookupProvider(name string) (Provider, bool) {
	providersMu.RLock()
	defer providersMu.RUnlock()
	p, ok := providers[name]
	return p, ok
}

// ProviderNames lists the registered providers, sorted.
func ProviderNames() []string {
	providersMu.RLock()
	defer providersMu.RUnlock()
	return slices.Sorted(maps.Keys(providers))
}

func (*Machines) kind() string { return "Machines" }

// vmFile is Machines' fields, decoded as a struct.
type vmFile Machines

func (f *vmFile) extra(e entry) bool {
	_, ok := LookupProvider(e.name)
	if ok {
		f.blocks = append(f.blocks, e)
	}
	return ok
}

func (f *Machines) decodeYAML(l *loader, p *field.Path, n *yaml.Node) {
	l.value(p, n, reflect.ValueOf((*vmFile)(f)).Elem(), "the VM file")
	reg, known := LookupProvider(f.Provider)
	for _, e := range f.blocks {
		if known && e.name == reg.Name {
			f.Block = reg.block()
			l.decode(field.NewPath(e.name), e.value, reflect.ValueOf(f.Block).Elem(), e.name)
			continue
		}
		l.add(field.NewPath(e.name), e.line, fmt.Sprintf("is the block of provider %s, but provider is %s", e.name, Quote(f.Provider)),
			"keep only the block of the provider the file names")
	}
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

func (f *Machines) check(l *loader) {
	f.Path, f.Dir, f.env = l.path, l.dir, l.env
	names := ProviderNames()
	reg, known := LookupProvider(f.Provider)
	switch {
	case f.Provider == "":
		l.require(field.NewPath("provider"), "set provider to one of "+joinOr(names))
	case !known:
		l.add(field.NewPath("provider"), 0, Quote(f.Provider)+" is not a provider this harness has", DidYouMean(f.Provider, names)+"set provider to one of "+joinOr(names))
	}
	if known {
		f.connection(l, reg)
	}
	top := field.NewPath
	if reg.Existing {
		for _, k := range []string{"image", "count", "cpus", "memory", "namePrefix", "machine"} {
			if l.written(top(k)) {
				l.add(top(k), 0, "is not used by "+reg.Name+": it takes every machine of its inventory",
					"remove it; set the machines (their WinRM, user and passwordFrom) in the inventory file")
			}
		}
	} else {
		f.sizes(l)
	}
	if known {
		if f.Block == nil {
			f.Block = reg.block()
		}
		l.addAll(f.Block.Check(f, top(reg.Name)))
	}
}

// connection checks what the provider's connection takes.
func (f *Machines) connection(l *loader, reg Provider) {
	p, c := field.NewPath("connection"), f.Connection
	for _, n := range []struct {
		key, v string
		need   Need
		fix    string
	}{
		{"endpoint", c.Endpoint, reg.Endpoint, fmt.Sprintf("set endpoint to where %s is, such as %s", reg.Summary, reg.EndpointExample)},
		{"user", c.User, reg.User, fmt.Sprintf("set user to the account %s is reached as", reg.Summary)},
	} {
		switch {
		case n.need == Refused && n.v != "":
			l.add(p.Child(n.key), 0, "is not used by "+reg.Name, "remove it")
		case n.need == Required && n.v == "":
			l.require(p.Child(n.key), n.fix)
		}
	}
	var takes []string
	for _, cr := range reg.Credentials {
		takes = append(takes, cr.Name)
		if _, ok := c.Credentials[cr.Name]; cr.Required && !ok {
			l.require(p.Child("credentials").Key(cr.Name),
				fmt.Sprintf("set credentials.%s: {env: VARIABLE} or {file: PATH}, where %s's %s is kept", cr.Name, reg.Name, cr.Name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Credentials)) {
		if !slices.Contains(takes, name) {
			fix := reg.Name + " takes no credentials"
			if len(takes) > 0 {
				fix = DidYouMean(name, takes) + reg.Name + " takes " + joinOr(takes)
			}
			l.add(p.Child("credentials").Key(name), 0, "is not a credential of "+reg.Name, fix)
		}
	}
}

// sizes checks and defaults what a provider that makes machines needs.
func (f *Machines) sizes(l *loader) {
	p := field.NewPath
	if f.Image == "" {
		l.require(p("image"), "set image to the golden image the machines are made from (a qcow2 path for libvirt, a template for vsphere, an image ID for azure, a VHDX path for hyperv)")
	}
	countFix := fmt.Sprintf("set count to how many machines to make, from 1 to %d", MaxCount)
	switch {
	case !l.written(p("count")):
		l.require(p("count"), countFix)
	case f.Count < 1:
		l.add(p("count"), 0, fmt.Sprintf("%d is not a number of machines", f.Count), countFix)
	case f.Count > MaxCount:
		l.add(p("count"), 0, fmt.Sprintf("%d is more than %d", f.Count, MaxCount), countFix)
	}
	if !l.written(p("cpus")) {
		f.CPUs = DefaultCPUs
	} else if f.CPUs < 1 {
		l.add(p("cpus"), 0, fmt.Sprintf("%d is not a number of CPUs", f.CPUs), "set cpus to the number of virtual CPUs, 1 or more (2 by default; Kubernetes' Windows nodes want 2)")
	}
	if f.MemoryMiB == 0 {
		f.MemoryMiB = DefaultMemoryMiB
	}
	// The longest name: prefix, run ID, and the count's digits.
	maxPrefix := 63 - 2 - runid.Max - len(strconv.Itoa(MaxCount))
	if f.NamePrefix == "" {
		f.NamePrefix = DefaultNamePrefix
	} else if !dnsLabel.MatchString(f.NamePrefix) || len(f.NamePrefix) > maxPrefix {
		l.add(p("namePrefix"), 0, Quote(f.NamePrefix)+" cannot start a node name", fmt.Sprintf("use a lower-case DNS label of at most %d characters, such as win", maxPrefix))
	}
	mp := p("machine")
	if !l.written(mp) {
		l.require(mp, "set machine: {user: Administrator, passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}} at least: what the join needs to reach each VM, as an inventory's defaults")
		return
	}
	for _, k := range []string{"name", "address", "nodeIP"} {
		if l.written(mp.Child(k)) {
			l.add(mp.Child(k), 0, "is set by the harness for each VM", "remove it: each VM is named after the run and reached at the address its provider reports")
		}
	}
	l.addAll(f.Machine.fields(mp))
	m := f.Machine
	m.Name, m.Address = f.NamePrefix, "192.0.2.1"
	l.machine(mp, mp, &m, Machine{})
}

// Inventory is the inventory file of machines a run made from f: f's
// machine block as its defaults, and each machine's name and address. It
// returns the file's content and the inventory it loads as (path names it).
func (f *Machines) Inventory(path string, machines []Machine) ([]byte, *Inventory, error) {
	inv := Inventory{Defaults: f.Machine}
	for _, m := range machines {
		inv.Machines = append(inv.Machines, Machine{Name: m.Name, Address: m.Address})
	}
	data, err := yaml.Marshal(&inv)
	if err != nil {
		return nil, nil, err
	}
	loaded, err := Parse[Inventory](path, data, f.env)
	return data, loaded, err
}

// LoadInventory loads the inventory at path (relative to f's directory)
// in the environment f was loaded in.
func (f *Machines) LoadInventory(path string) (*Inventory, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(f.Dir, path)
	}
	return Load[Inventory](path, f.env)
}

// joinOr joins words as "a", "a or b", "a, b or c".
func joinOr(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
