package config

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/internal/winrelease"
)

// Inventory is the inventory file: the Windows machines the harness joins
// to its cluster over WinRM. Loaded, every machine has its defaults, its
// password read and its CA bundle loaded.
type Inventory struct {
	// Path is the file, as given to Load or Parse.
	Path string `yaml:"-" json:"path"`
	// Defaults apply to every machine that does not set the field: winrm
	// and underlay field by field, labels and binaries key by key (the
	// machine's win), the rest whole. A field a machine writes empty (~,
	// "") drops the default for the built-in one. Defaults cannot set
	// name, address or nodeIP.
	Defaults Machine `yaml:"defaults,omitempty" json:"-"`
	// Machines are in file order; their names are unique.
	Machines []Machine `yaml:"machines" json:"machines"`
}

// Machine is one Windows machine to join to the cluster.
type Machine struct {
	// Name is the machine's Kubernetes node name: a lower-case DNS label.
	Name string `yaml:"name,omitempty" json:"name"`
	// Address is the machine's IP address or DNS name.
	Address string `yaml:"address,omitempty" json:"address"`
	// NodeIP is the node's address on the cluster's network, "" for the
	// kubelet's own choice: on a machine with several network interfaces,
	// the kubelet's --node-ip and the interface flannel takes.
	NodeIP string `yaml:"nodeIP,omitempty" json:"nodeIP,omitempty"`
	// WinRM is how to reach the machine.
	WinRM WinRM `yaml:"winrm,omitempty" json:"winrm"`
	// User is the account WinRM logs in as; PasswordFrom its password.
	User         string    `yaml:"user,omitempty" json:"user"`
	PasswordFrom SecretRef `yaml:"passwordFrom,omitempty" json:"passwordFrom"`
	// ExpectedBuild is the Windows build the machine must have (10.0.20348).
	ExpectedBuild Build `yaml:"expectedBuild,omitempty" json:"expectedBuild,omitzero"`
	// Labels and Taints are applied to the node.
	Labels map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Taints []Taint           `yaml:"taints,omitempty" json:"taints,omitempty"`
	// Binaries maps a component (containerd, kubelet, images...) to where
	// its binaries come from: an http(s) URL, or an absolute path on the
	// machine.
	Binaries map[string]string `yaml:"binaries,omitempty" json:"binaries,omitempty"`
	// KubeletVersion (v1.36.3) is the node's kubelet, kubeadm and
	// kube-proxy when not the cluster's; ContainerdVersion (2.3.7) its
	// containerd. "": the version the sources name, else the default.
	KubeletVersion    string `yaml:"kubeletVersion,omitempty" json:"kubeletVersion,omitempty"`
	ContainerdVersion string `yaml:"containerdVersion,omitempty" json:"containerdVersion,omitempty"`
	// DefenderExclusions asks for Microsoft Defender exclusions for the
	// node; CloudMetadataRoute for the route to 169.254.169.254 (a cloud
	// VM); PrepullImages for the node's images pulled at the join.
	DefenderExclusions bool `yaml:"defenderExclusions,omitempty" json:"defenderExclusions"`
	CloudMetadataRoute bool `yaml:"cloudMetadataRoute,omitempty" json:"cloudMetadataRoute"`
	PrepullImages      bool `yaml:"prepullImages,omitempty" json:"prepullImages"`
	// Underlay is how the machine reaches the kind network (infra/underlay).
	Underlay Underlay `yaml:"underlay,omitempty" json:"underlay,omitzero"`
}

// Build is a Windows build, such as 10.0.20348.
type Build = winrelease.Build

// Underlay says how a machine reaches the kind network: its shape
// (routed, same-host or none; "" for routed) and the kind host's address
// it routes through ("" for this host's address toward it).
type Underlay struct {
	Shape string `yaml:"shape,omitempty" json:"shape,omitempty"`
	Via   string `yaml:"via,omitempty" json:"via,omitempty"`
}

func (*Inventory) kind() string { return "Inventory" }

// Machine returns the machine with the given name.
func (inv *Inventory) Machine(name string) (Machine, bool) {
	for _, m := range inv.Machines {
		if m.Name == name {
			return m, true
		}
	}
	return Machine{}, false
}

const fixMachines = "list at least one machine under machines:, each with name, address, user and passwordFrom (user and passwordFrom may come from defaults)"

func (inv *Inventory) check(l *loader) {
	inv.Path = l.path
	dp, mp := field.NewPath("defaults"), field.NewPath("machines")
	for _, k := range []string{"name", "address", "nodeIP"} {
		if l.written(dp.Child(k)) {
			l.add(dp.Child(k), 0, "cannot have a default: each machine has its own", "set "+k+" on each machine")
		}
	}
	l.addAll(inv.Defaults.fields(dp))
	switch {
	case !l.written(mp):
		l.require(mp, fixMachines)
	case len(inv.Machines) == 0:
		l.add(mp, 0, "is empty", fixMachines)
	}
	names, endpoints := map[string]int{}, map[string]int{}
	for i := range inv.Machines {
		p, m := mp.Index(i), &inv.Machines[i]
		if l.nulls[p.String()] {
			l.add(p, 0, "is empty", "write the machine's fields under its '- ': name, address, and user and passwordFrom unless defaults set them")
			continue
		}
		l.addAll(m.fields(p))
		l.machine(p, dp, m, inv.Defaults)
		if j, dup := names[m.Name]; dup && m.Name != "" {
			l.add(p.Child("name"), 0, fmt.Sprintf("%s is also the name of machine #%d", Quote(m.Name), j),
				"give each machine its own name: it becomes the Kubernetes node name")
		} else {
			names[m.Name] = i + 1
		}
		ep := fmt.Sprintf("%s:%d", strings.ToLower(strings.TrimSuffix(m.Address, ".")), m.WinRM.Port)
		if j, dup := endpoints[ep]; dup && m.Address != "" {
			l.add(p.Child("address"), 0, fmt.Sprintf("%s port %d is also machine #%d", Quote(m.Address), m.WinRM.Port, j),
				"each machine is one Windows host: fix the address, or give the machine its own WinRM port if it is reached through port forwarding")
		} else {
			endpoints[ep] = i + 1
		}
	}
}

// machine gives m (at p) what defaults (def, at dp) set and it does not,
// then the built-in defaults, and checks what only the whole machine
// shows: required fields, and fields that conflict.
func (l *loader) machine(p, dp *field.Path, m *Machine, def Machine) {
	l.inherit(p, dp, reflect.ValueOf(m).Elem(), reflect.ValueOf(def))
	from := func(key string) string {
		if path := dotted(p, key); !l.written(path) && l.written(dotted(dp, key)) {
			return " (from defaults)"
		}
		return ""
	}
	w, wp := &m.WinRM, p.Child("winrm")
	if usual, other := w.ports(); from("winrm.port") != "" && w.Port == other {
		scheme := map[bool]string{true: "HTTPS", false: "HTTP"}
		l.add(wp.Child("port"), 0, fmt.Sprintf("%d (from defaults) is WinRM's %s port, but this machine uses %s", w.Port, scheme[!w.HTTPS], scheme[w.HTTPS]),
			fmt.Sprintf("set port: %d on the machine (or port: ~ for the port that goes with https)", usual))
	}
	w.setDefaults()
	m.KubeletVersion = normalVersion(m.KubeletVersion, "v")
	m.ContainerdVersion = normalVersion(m.ContainerdVersion, "")
	for _, f := range []struct{ key, v, fix string }{
		{"name", m.Name, "set name: the Kubernetes node name, a lower-case DNS label such as win-2022-a"},
		{"address", m.Address, "set address: the machine's IP address or DNS name"},
		{"user", m.User, "set user, on the machine or in defaults: the account WinRM logs in as, such as Administrator"},
		{"passwordFrom", m.PasswordFrom.Env + m.PasswordFrom.File, "set passwordFrom: {env: VARIABLE} or {file: PATH}, on the machine or in defaults"},
	} {
		if f.v == "" {
			l.require(p.Child(f.key), f.fix)
		}
	}
	l.addAll(w.cross(wp, func(k string) string { return from("winrm." + k) }))
}

// dotted is p's child at key, which may be dotted ("winrm.port").
func dotted(p *field.Path, key string) *field.Path {
	for _, k := range strings.Split(key, ".") {
		p = p.Child(k)
	}
	return p
}

// inherit gives each field of v (the value at p) that the file leaves out
// the value of def (the value at dp): structs field by field, maps key by
// key, the rest whole.
func (l *loader) inherit(p, dp *field.Path, v, def reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		key := keyOf(v.Type().Field(i))
		f, df := v.Field(i), def.Field(i)
		fp, fdp := p.Child(key), dp.Child(key)
		_, whole := f.Addr().Interface().(decodable)
		switch {
		case key == "" || !l.written(fdp):
		case f.Kind() == reflect.Struct && !whole && !f.Addr().Type().Implements(textUnmarshaler):
			l.inherit(fp, fdp, f, df)
		case f.Kind() == reflect.Map:
			merged := reflect.MakeMap(f.Type())
			for _, m := range []reflect.Value{df, f} {
				for it := m.MapRange(); it.Next(); {
					merged.SetMapIndex(it.Key(), it.Value())
				}
			}
			f.Set(merged)
		case !l.written(fp):
			f.Set(df)
		}
	}
}

// fields checks each field of a machine (or the defaults) on its own, as
// written: a field left empty is not checked.
func (m *Machine) fields(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	value := func(p *field.Path, v string, check func(string) (msg, fix string)) {
		if v != "" {
			if msg, fix := check(v); msg != "" {
				errs = append(errs, Invalid(p, msg, fix))
			}
		}
	}
	value(p.Child("name"), m.Name, checkName)
	value(p.Child("address"), m.Address, checkAddress)
	value(p.Child("nodeIP"), m.NodeIP, checkNodeIP)
	value(p.Child("kubeletVersion"), m.KubeletVersion, checkKubeletVersion)
	value(p.Child("containerdVersion"), m.ContainerdVersion, checkContainerdVersion)
	value(p.Child("underlay", "shape"), m.Underlay.Shape, checkShape)
	value(p.Child("underlay", "via"), m.Underlay.Via, func(v string) (string, string) {
		if a, err := netip.ParseAddr(v); err != nil || !a.Is4() {
			return Quote(v) + " is not an IPv4 address", "write the address of the kind host that the machine reaches, such as 192.168.56.1"
		}
		return "", ""
	})
	if b := m.ExpectedBuild; !b.IsZero() && !b.Supported() {
		oldest := winrelease.Releases()[0]
		errs = append(errs, Invalid(p.Child("expectedBuild"),
			fmt.Sprintf("%s is older than %s (%s), the oldest build Kubernetes supports for Windows nodes", b, oldest.Build, oldest.Product),
			"use a supported build: "+winrelease.List()))
	}
	for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
		value(p.Child("labels").Key(k), k, checkLabelKey)
		value(p.Child("labels").Key(k), m.Labels[k], checkLabelValue)
	}
	for _, k := range slices.Sorted(maps.Keys(m.Binaries)) {
		value(p.Child("binaries").Key(k), k, checkComponent)
		if msg, fix := checkSource(m.Binaries[k]); msg != "" {
			errs = append(errs, Invalid(p.Child("binaries").Key(k), msg, fix))
		}
	}
	seen := map[string]int{}
	for i, t := range m.Taints {
		id := t.Key + ":" + string(t.Effect)
		if j, dup := seen[id]; dup {
			errs = append(errs, Invalid(p.Child("taints").Index(i), fmt.Sprintf("repeats the key %s and effect %s of taints[%d]", t.Key, t.Effect, j),
				"keep one: a node has at most one taint per key and effect"))
		}
		seen[id] = i
	}
	return append(errs, m.WinRM.fields(p.Child("winrm"))...)
}

// Each check below returns "" when the value is fine, else what is wrong and the fix.

// checkName checks a machine name: a lower-case DNS label (RFC 1123), as a
// node name must be.
func checkName(v string) (msg, fix string) {
	if len(validation.IsDNS1123Label(v)) == 0 {
		return "", ""
	}
	fix = "use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit"
	s := strings.Trim(notLabelChar.ReplaceAllString(strings.ToLower(v), "-"), "-")
	if len(s) > validation.DNS1123LabelMaxLength {
		s = strings.TrimRight(s[:validation.DNS1123LabelMaxLength], "-")
	}
	if s != "" && len(validation.IsDNS1123Label(s)) == 0 {
		fix += fmt.Sprintf(", such as %q", s)
	}
	return Quote(v) + " is not a lower-case DNS label, as a node name must be", fix
}

var notLabelChar = regexp.MustCompile(`[^a-z0-9-]+`)

// checkAddress checks a machine address: an IP address or a DNS name.
func checkAddress(a string) (msg, fix string) {
	if _, err := netip.ParseAddr(a); err == nil {
		return "", ""
	}
	if strings.Contains(a, "://") {
		return Quote(a) + " is a URL, not an address",
			"write the host alone, such as 192.168.56.20: the scheme comes from winrm.https and the port from winrm.port"
	}
	if inner, ok := strings.CutPrefix(a, "["); ok && strings.HasSuffix(inner, "]") {
		return Quote(a) + " has brackets", "write the IPv6 address without brackets: " + strings.TrimSuffix(inner, "]")
	}
	if host, port, err := net.SplitHostPort(a); err == nil && isDigits(port) {
		return Quote(a) + " includes a port", fmt.Sprintf("write the host alone (%s) and the port as winrm.port: %s", host, port)
	}
	if !isDNSName(a) {
		return Quote(a) + " is not an IP address or DNS name", "write an IP address such as 192.168.56.20 or a DNS name such as win-2022-a.lab"
	}
	return "", ""
}

// checkNodeIP checks a node's address: one unicast IP address, which the
// machine holds (--node-ip takes no name and no list here).
func checkNodeIP(v string) (msg, fix string) {
	const fixIP = "write the IP address the machine has on the cluster's network, such as 192.168.56.20 (ipconfig on the machine lists them)"
	a, err := netip.ParseAddr(v)
	switch {
	case err != nil && strings.Contains(v, ","):
		return Quote(v) + " is a list", "write one IP address: dual-stack node addresses are not supported"
	case err != nil && isDNSName(v):
		return Quote(v) + " is a name, not an IP address", fixIP
	case err != nil:
		return Quote(v) + " is not an IP address", fixIP
	case a.Zone() != "":
		return Quote(v) + " has a zone", "write the address without %" + a.Zone()
	case a.IsUnspecified(), a.IsLoopback(), a.IsMulticast(), a.IsLinkLocalUnicast():
		return Quote(v) + " is not an address another node can reach (unspecified, loopback, multicast or link-local)", fixIP
	}
	return "", ""
}

// isDNSName reports whether v is a DNS name (any case, an optional final
// dot). A name of numbers only, such as 192.168.56.300, is a wrong IP
// address rather than a name.
func isDNSName(v string) bool {
	name := strings.ToLower(strings.TrimSuffix(v, "."))
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if !isDigits(label) {
			return true
		}
	}
	return false
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func checkShape(v string) (msg, fix string) {
	if slices.Contains([]string{"routed", "same-host", "none"}, v) {
		return "", ""
	}
	return Quote(v) + " is not an underlay shape",
		"use routed (the machine routes to the kind network through the kind host: lab machines, cloud VMs), same-host (a VM on the kind network's own bridge) or none (the path is made by others; the harness only checks it)"
}

// kubeletLabels are labels the kubelet sets on its node itself; setting
// them in the inventory would contradict it. The value is the fix.
var kubeletLabels = map[string]string{
	corev1.LabelHostname:           "remove it: the kubelet sets it to the node name",
	corev1.LabelOSStable:           "remove it: the kubelet sets it to windows",
	corev1.LabelArchStable:         "remove it: the kubelet sets it from the machine",
	"beta.kubernetes.io/os":        "remove it: the kubelet sets it to windows",
	"beta.kubernetes.io/arch":      "remove it: the kubelet sets it from the machine",
	corev1.LabelWindowsBuild:       "remove it: the kubelet sets it from the machine's build; set expectedBuild to require a build",
	corev1.LabelInstanceTypeStable: "remove it: it belongs to cloud providers",
}

func checkLabelKey(k string) (msg, fix string) {
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return Quote(k) + " is not a valid label key: " + k8sMessages(errs),
			"use an optional DNS-subdomain prefix and '/', then a name of at most 63 letters, digits, '-', '_' or '.' that starts and ends with a letter or digit, such as topology.kubernetes.io/zone"
	}
	if fix, ok := kubeletLabels[k]; ok {
		return "the kubelet sets this label itself", fix
	}
	return "", ""
}

const fixLabelValue = "use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"

func checkLabelValue(v string) (msg, fix string) {
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return Quote(v) + " is not a valid label value: " + k8sMessages(errs), fixLabelValue + " (or an empty value)"
	}
	return "", ""
}

// k8sMessages joins apimachinery's validation messages without their
// examples and regular expressions.
func k8sMessages(errs []string) string {
	for i, e := range errs {
		errs[i], _, _ = strings.Cut(e, " (e.g. ")
	}
	return strings.Join(errs, ", and ")
}

// Taint is a node taint, written key=value:Effect or key:Effect, as
// kubectl taint and the kubelet's --register-with-taints write it.
type Taint corev1.Taint

// MarshalText writes the taint as key=value:Effect.
func (t Taint) MarshalText() ([]byte, error) {
	kv := t.Key
	if t.Value != "" {
		kv += "=" + t.Value
	}
	return []byte(kv + ":" + string(t.Effect)), nil
}

// UnmarshalText parses key=value:Effect or key:Effect; its error says the
// fix after "; ".
func (t *Taint) UnmarshalText(text []byte) error {
	const form = "write key=value:Effect or key:Effect, with Effect NoSchedule, PreferNoSchedule or NoExecute, such as os=windows:NoSchedule"
	s := string(text)
	effects := []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return fmt.Errorf("%s has no effect; %s", Quote(s), form)
	}
	kv, effect := s[:i], corev1.TaintEffect(s[i+1:])
	key, value, _ := strings.Cut(kv, "=")
	if !slices.Contains(effects, effect) {
		fix := "use NoSchedule, PreferNoSchedule or NoExecute"
		for _, e := range effects {
			if strings.EqualFold(string(e), string(effect)) {
				fix = fmt.Sprintf("write the effect as %s (effects are case-sensitive)", e)
			}
		}
		return fmt.Errorf("%s has the effect %s, which is not a taint effect; %s", Quote(s), Quote(string(effect)), fix)
	}
	switch {
	case key == "":
		return fmt.Errorf("%s has no key; %s", Quote(s), form)
	case len(validation.IsQualifiedName(key)) > 0:
		return fmt.Errorf("%s: the key %s is not valid: %s; use a label-style key such as os or example.com/dedicated; %s",
			Quote(s), Quote(key), k8sMessages(validation.IsQualifiedName(key)), form)
	case len(validation.IsValidLabelValue(value)) > 0:
		return fmt.Errorf("%s: the value %s is not valid: %s; %s", Quote(s), Quote(value), k8sMessages(validation.IsValidLabelValue(value)), fixLabelValue)
	}
	*t = Taint{Key: key, Value: value, Effect: effect}
	return nil
}

// checkComponent checks a binaries key: a component name.
func checkComponent(k string) (msg, fix string) {
	if len(validation.IsDNS1123Label(k)) > 0 {
		return Quote(k) + " is not a component name", "use a lower-case name such as containerd, kubelet or kube-proxy"
	}
	return "", ""
}

var (
	windowsAbs    = regexp.MustCompile(`^([A-Za-z]:[\\/]|\\\\[^\\/]+[\\/][^\\/]+)`)
	driveRelative = regexp.MustCompile(`^[A-Za-z]:[^\\/]`)
)

// checkSource checks where a component's binaries come from: an http(s)
// URL, or an absolute path on the Windows machine (a drive path or UNC).
func checkSource(v string) (msg, fix string) {
	const fixSource = `write an http(s) URL such as https://example.com/containerd.zip, or an absolute path on the machine such as C:\install\containerd.zip or \\server\share\containerd.zip`
	switch {
	case v == "":
		return "is empty", fixSource
	case windowsAbs.MatchString(v):
		return "", ""
	case driveRelative.MatchString(v):
		return Quote(v) + " is not an absolute path (it lacks a '\\' after the drive)", fixSource
	}
	u, err := url.Parse(v)
	switch {
	case err != nil || u.Scheme == "":
		return Quote(v) + " is neither an http(s) URL nor an absolute path on the machine (paths are on the Windows machine, not relative to the inventory)", fixSource
	case u.Scheme != "http" && u.Scheme != "https":
		return Quote(v) + " is a " + u.Scheme + ": URL, which the harness does not fetch", fixSource
	case u.Host == "":
		return Quote(v) + " has no host", fixSource
	}
	return "", ""
}

var (
	kubeletVersionForm    = regexp.MustCompile(`^v?1\.(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})(-(alpha|beta|rc)\.(0|[1-9]\d{0,3}))?$`)
	containerdVersionForm = regexp.MustCompile(`^v?(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})$`)
)

// checkKubeletVersion checks the form of a kubelet version; whether the
// join takes it (its line, its skew) is checked at the join.
func checkKubeletVersion(v string) (msg, fix string) {
	if kubeletVersionForm.MatchString(v) {
		return "", ""
	}
	return Quote(v) + " is not a Kubernetes version", "write a release as v1.MINOR.PATCH, such as v1.36.3 (not a line alone), or a pre-release such as v1.38.0-rc.1, or remove it for the version binaries.kubelet names, else the cluster's"
}

// checkContainerdVersion checks the form of a containerd version.
func checkContainerdVersion(v string) (msg, fix string) {
	if containerdVersionForm.MatchString(v) {
		return "", ""
	}
	return Quote(v) + " is not a containerd version", "write a release as MAJOR.MINOR.PATCH, such as 2.3.7, or remove it for the version binaries.containerd names, else the harness's default"
}

// normalVersion writes a version with the prefix (v, or none) the harness
// uses for it.
func normalVersion(v, prefix string) string {
	if v == "" {
		return ""
	}
	return prefix + strings.TrimPrefix(v, "v")
}
