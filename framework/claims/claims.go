// Package claims is the harness's catalogue of what the Windows-on-Kubernetes
// documents (and the upstream Windows e2e specs) promise: one entry per claim,
// under the same IDs as the shared catalogue (NET-03, LIM-07, ...), in the
// harness's own words, as data the harness reads.
//
// Each entry says what the claim is about (its OSes), what a spec needs to
// exercise it, where it comes from (documents with their eras), for
// limitations the server versions the limitation is expected to hold for,
// for network paths the matrix cells that evidence it, and above all its
// evidence level: what a passing spec must have run on for the claim to count
// as shown. Labels (framework/labels), the network matrix's claim mapping
// (framework/netmatrix), the limitation ledger (framework/ledger) and the
// reports derive from it.
package claims

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
)

// Kind says how a claim is checked.
type Kind string

const (
	// Path is a network path to probe.
	Path Kind = "path"
	// Feature is something that must work.
	Feature Kind = "feature"
	// Limit is a documented limitation: the harness checks the behaviour
	// expected of the server version and reports drift from the documents.
	Limit Kind = "limit"
)

// Level is an evidence level: what a result was obtained on. A claim's Level
// is the least a passing spec must have run on for the claim to be shown;
// a spec records the Level it ran at (framework/evidence).
type Level string

// Evidence levels.
const (
	// Linux: real Linux nodes of the cluster (a Linux twin of a Windows
	// claim included).
	Linux Level = "linux"
	// API: the real API server's validation or admission, no node involved.
	API Level = "api"
	// Scheduler: the real scheduler or controllers placing pods; simulated
	// (kwok) nodes are enough, because the decision is the control plane's.
	Scheduler Level = "scheduler"
	// WindowsNode: a real Windows node (its kubelet, runtime, HNS networking).
	WindowsNode Level = "windows-node"
	// WindowsMachine: a real Windows machine reached over WinRM.
	WindowsMachine Level = "windows-machine"
	// Domain: a real Windows node in an Active Directory domain.
	Domain Level = "domain"
)

// Levels lists every evidence level.
var Levels = []Level{Linux, API, Scheduler, WindowsNode, WindowsMachine, Domain}

// Valid says whether l is a known level.
func (l Level) Valid() bool { return slices.Contains(Levels, l) }

// OnWindows says whether l was obtained on real Windows.
func (l Level) OnWindows() bool {
	return l == WindowsNode || l == WindowsMachine || l == Domain
}

// Shows says whether a result obtained at level got shows a claim whose
// level is l. Every level but Linux went through the real API server; real
// Windows nodes show what simulated ones do; a joined machine is a node.
func (l Level) Shows(got Level) bool {
	switch l {
	case Linux:
		return got == Linux
	case API:
		return got.Valid()
	case Scheduler:
		return got == Scheduler || got == WindowsNode || got == WindowsMachine || got == Domain
	case WindowsNode:
		return got == WindowsNode || got == WindowsMachine || got == Domain
	case WindowsMachine:
		return got == WindowsMachine
	case Domain:
		return got == Domain
	}
	return false
}

// Below names a result at level got that supports, but does not show, a
// claim of level l: "linux twin", "simulated nodes", "API only", ...
func (l Level) Below(got Level) string {
	switch {
	case l.Shows(got):
		return ""
	case got == Linux:
		return "linux twin"
	case got == Scheduler:
		return "simulated nodes"
	case got == API:
		return "API only"
	case got == WindowsNode && l == WindowsMachine:
		return "Windows node, not the machine"
	case got.OnWindows() && l == Domain:
		return "Windows node without a domain"
	case got.OnWindows() && l == Linux:
		return "Windows, not Linux"
	}
	return string(got)
}

// Document is a source a claim comes from.
type Document struct {
	Key   string // how catalogue entries name it: a seed number, "docs", "upstream:<file>"
	Title string
	Era   string // the release (or time) it was written for
}

// Versions bounds the server versions a limitation is expected to hold for:
// [Since, Until), either open when empty. Never says the limitation is not
// expected to hold on any release the harness knows (it was documented, but
// lifted long ago or never enforced); it is still checked, and reported.
type Versions struct {
	Since, Until string
	Never        bool
}

// Limitation is what the documents say cannot be done, and when.
type Limitation struct {
	// Statement is the limitation as the documents put it.
	Statement string
	// Era is the release the statement was written for.
	Era string
	// Holds bounds the server versions it is expected to hold for.
	Holds Versions
	// CNI restricts it to clusters with that CNI ("flannel/host-gw").
	CNI string
	// Why the expectation is what it is (what lifted it, or why it stays).
	Why string
}

// Peer is one end of a network path, as the matrix's peers describe it:
// Kind is pod, node, service or external; OS the peer's (for a Service, its
// endpoints'; empty for any); ControlPlane asks for a control-plane node.
type Peer struct {
	Kind         string
	OS           corev1.OSName
	ControlPlane bool
}

// Where a path's target is, relative to its source.
const (
	SameNode  = "same-node"
	OtherNode = "other-node"
	// Local: a Service's endpoints run on the source node, or a NodePort
	// is reached through the source node's own address.
	Local = "local"
)

// Part is one part of a path claim: the matrix cells that match it. A path
// claim is shown only when every one of its parts was probed.
type Part struct {
	Name  string
	From  Peer
	To    Peer
	Modes []string // the target modes (pod-ip, service-dns, nodeport, ...)
	// Via is the OS of the node a NodePort is reached through.
	Via corev1.OSName
	// Where is SameNode, OtherNode, Local or empty (anywhere).
	Where string
	// Underlay is IntoUnderlay, OutOfUnderlay or empty (either side): which
	// way the path crosses the underlay between the kind network and a
	// node joined from outside it.
	Underlay string
}

// Which way a path crosses the underlay (infra/underlay).
const (
	// IntoUnderlay: the source is on the kind network, the target on a
	// node joined through the underlay (its pod, its node, a NodePort
	// through its address).
	IntoUnderlay = "into-underlay"
	// OutOfUnderlay: the source is on a node joined through the underlay,
	// the target on the kind network (a Service: its endpoints, or the
	// cluster's DNS, are there).
	OutOfUnderlay = "out-of-underlay"
)

// Claim is one documented behaviour.
type Claim struct {
	ID    string
	Kind  Kind
	Level Level
	// OSes are the OSes whose nodes the claim is about.
	OSes []corev1.OSName
	// Title is the claim in the harness's words.
	Title string
	// Docs are the keys of the documents it comes from.
	Docs []string
	// Also lists what a spec needs beyond what the level implies
	// (load-balancer, disruptive, ...).
	Also []string
	// Limitation is set for documented limitations (and for paths the
	// documents call broken in some releases).
	Limitation *Limitation
	// Parts are the matrix cells of a path claim.
	Parts []Part
	// Fix is an upstream fix the claim depends on: on a kubelet older
	// than the release that carries it, the claim is expected to fail as
	// the fixed bug did.
	Fix *Fix
}

// Fix is an upstream bug fix a feature claim depends on.
type Fix struct {
	// In is the first release with the fix, as 1.37.
	In string
	// Bug is the upstream issue, Change the pull request that fixed it
	// (owner/repo#number).
	Bug, Change string
	// Symptom is what fails without the fix.
	Symptom string
}

// Missing says whether a kubelet of version kubelet lacks the fix: it is
// older than In. Pre-release and vendor suffixes are taken as their
// release; a version that does not parse is not blamed.
func (f Fix) Missing(kubelet string) bool {
	v, err := version.ParseGeneric(kubelet)
	if err != nil {
		return false
	}
	return v.LessThan(version.MustParseGeneric(f.In))
}

// Explain says why a failure on a kubelet of version kubelet is expected,
// or nothing when the kubelet has the fix.
func (f Fix) Explain(kubelet string) string {
	if !f.Missing(kubelet) {
		return ""
	}
	return fmt.Sprintf("kubelet %s predates %s, which fixed %s in Kubernetes %s: %s", kubelet, f.Change, f.Bug, f.In, f.Symptom)
}

// Area is the part of the ID before the dash (NET, WEB, ...).
func (c Claim) Area() string { return strings.SplitN(c.ID, "-", 2)[0] }

// About says whether the claim is about nodes of os.
func (c Claim) About(os corev1.OSName) bool { return slices.Contains(c.OSes, os) }

// Needs is what a spec that exercises the claim on os needs beyond a
// cluster: from its level (a Windows node, a simulated one, an inventory of
// machines, a domain), then Also.
func (c Claim) Needs(os corev1.OSName) []string {
	var out []string
	if os == corev1.Windows {
		switch c.Level {
		case WindowsNode:
			out = append(out, NeedWindowsNode)
		case Scheduler:
			out = append(out, NeedKwok)
		case WindowsMachine:
			out = append(out, NeedInventory)
		case Domain:
			out = append(out, NeedWindowsNode, NeedActiveDirectory)
		}
	}
	for _, a := range c.Also {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// What specs may need (needs: labels).
const (
	NeedWindowsNode     = "windows-node"
	NeedKwok            = "kwok" // a real Windows node, or kwok to simulate one
	NeedInventory       = "inventory"
	NeedActiveDirectory = "active-directory"
	NeedLoadBalancer    = "load-balancer"
	NeedDisruptive      = "disruptive"
)

// Needs lists every known need.
var Needs = []string{NeedWindowsNode, NeedKwok, NeedInventory, NeedActiveDirectory, NeedLoadBalancer, NeedDisruptive}

// Documents returns the claim's documents.
func (c Claim) Documents() []Document {
	var out []Document
	for _, k := range c.Docs {
		if d, ok := documentsByKey[k]; ok {
			out = append(out, d)
		}
	}
	return out
}

// Cite names the claim's documents in one line: title (era); ...
func (c Claim) Cite() string {
	var parts []string
	for _, d := range c.Documents() {
		parts = append(parts, fmt.Sprintf("%s (%s)", d.Title, d.Era))
	}
	return strings.Join(parts, "; ")
}

var byID = map[string]Claim{}

func init() {
	for _, c := range catalogue {
		byID[c.ID] = c
	}
	if problems := Check(catalogue); len(problems) > 0 {
		panic("claims: the catalogue is malformed:\n" + strings.Join(problems, "\n"))
	}
}

// Get returns the claim with id.
func Get(id string) (Claim, bool) {
	c, ok := byID[id]
	return c, ok
}

// MustGet returns the claim with id, panicking on an unknown ID (for
// specs, whose IDs are fixed at compile time).
func MustGet(id string) Claim {
	c, ok := byID[id]
	if !ok {
		panic("claims: unknown claim " + id)
	}
	return c
}

// All returns every claim, ordered by area and number.
func All() []Claim {
	out := append([]Claim(nil), catalogue...)
	sort.SliceStable(out, func(i, j int) bool { return Less(out[i].ID, out[j].ID) })
	return out
}

// Less orders IDs by area, then numerically (NET-9 before NET-10).
func Less(a, b string) bool {
	aa, an := split(a)
	ba, bn := split(b)
	if aa != ba {
		return aa < ba
	}
	return an < bn
}

func split(id string) (string, int) {
	area, num, _ := strings.Cut(id, "-")
	var n int
	fmt.Sscanf(num, "%d", &n)
	return area, n
}

// Check lists what is wrong with a catalogue, naming the claim of each
// problem: a malformed or repeated ID, an unknown kind, evidence level, OS,
// need or document, a limitation without its data, a path without parts.
func Check(entries []Claim) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range entries {
		bad := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("claim %s: %s", c.ID, fmt.Sprintf(format, args...)))
		}
		if area, num, ok := strings.Cut(c.ID, "-"); !ok || area == "" || strings.ToUpper(area) != area || len(num) != 2 || strings.Trim(num, "0123456789") != "" {
			bad("the ID does not look like AREA-NN")
		}
		if seen[c.ID] {
			bad("listed twice")
		}
		seen[c.ID] = true
		switch c.Kind {
		case Path, Feature, Limit:
		default:
			bad("unknown kind %q (path, feature or limit)", c.Kind)
		}
		if !c.Level.Valid() {
			bad("unknown evidence level %q (one of %v)", c.Level, Levels)
		}
		if len(c.OSes) == 0 {
			bad("names no OS it is about")
		}
		for _, os := range c.OSes {
			if os != corev1.Linux && os != corev1.Windows {
				bad("unknown OS %q (linux or windows)", os)
			}
		}
		if c.Level.OnWindows() && !c.About(corev1.Windows) {
			bad("its evidence level %s is on Windows, but it is not about Windows", c.Level)
		}
		if c.Level == Linux && !c.About(corev1.Linux) {
			bad("its evidence level is linux, but it is not about Linux")
		}
		for _, n := range c.Also {
			if !slices.Contains(Needs, n) {
				bad("unknown need %q (one of %v)", n, Needs)
			}
		}
		if strings.TrimSpace(c.Title) == "" {
			bad("has no title")
		}
		if len(c.Docs) == 0 {
			bad("names no document")
		}
		for _, k := range c.Docs {
			if _, ok := documentsByKey[k]; !ok {
				bad("unknown document %q", k)
			}
		}
		if c.Kind == Limit && c.Limitation == nil {
			bad("is a limitation without its statement, era and versions")
		}
		if l := c.Limitation; l != nil {
			if l.Statement == "" || l.Era == "" || l.Why == "" {
				bad("limitation lacks its statement, era or why")
			}
			for _, v := range []string{l.Holds.Since, l.Holds.Until} {
				if v != "" && !validVersion(v) {
					bad("limitation version %q is not a version like 1.14", v)
				}
			}
			if l.Holds.Never && (l.Holds.Since != "" || l.Holds.Until != "") {
				bad("limitation holds never, yet has versions")
			}
		}
		if f := c.Fix; f != nil && (!validVersion(f.In) || f.Bug == "" || f.Change == "" || f.Symptom == "") {
			bad("upstream fix lacks its release (like 1.37), bug, change or symptom")
		}
		if c.Kind == Path && len(c.Parts) == 0 {
			bad("is a path with no parts for the matrix")
		}
		for _, p := range c.Parts {
			if p.Name == "" || p.From.Kind == "" || p.To.Kind == "" || len(p.Modes) == 0 {
				bad("part %q lacks a name, ends or modes", p.Name)
			}
		}
	}
	return out
}

func validVersion(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// Describe puts the versions in words: "before 1.14", "from 1.23", "all
// versions", "none".
func (v Versions) Describe() string {
	switch {
	case v.Never:
		return "no version"
	case v.Since != "" && v.Until != "":
		return "from " + v.Since + " until before " + v.Until
	case v.Since != "":
		return "from " + v.Since
	case v.Until != "":
		return "before " + v.Until
	}
	return "every version"
}
