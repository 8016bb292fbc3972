// Package hypervhost is a Hyper-V host for the tests of the hyperv VM
// provider (infra/vms/hyperv), beside package standin, which opens the
// WS-Management stand-in to them. Its Handle plugs into the stand-in
// (standin.WithHandler; wsmantest in its stock mode: NTLM, every message
// sealed), so that the provider drives it through the real WinRM client, and it keeps
// the host's state: its VMs (name, ID, Notes, generation, state, disks,
// and the addresses their guests report through KVP), its files (the
// golden images, the differencing disks with their parents, the VMs'
// configuration folders), its virtual switches and its Hyper-V event logs.
//
// It answers each of the provider's scripts by reading what the script
// asks from its parameters (the prelude the provider renders: "$Name =
// '...'" lines, single-quoted as windows.QuotePS quotes), then doing on its
// state what the script does with the Hyper-V cmdlets, cmdlet by cmdlet in
// the script's order, and printing the status line the script prints. The
// Pester tests beside the scripts (infra/vms/hyperv/scripts) run the real
// scripts against mocks of the same cmdlets. What Hyper-V does on its own is
// the host's, as Windows documentedly does it:
//
//   - New-VHD -Differencing refuses a parent that is not there and a path
//     that is; New-VM makes a VM with a new ID (names need not be unique:
//     the ID is the VM), its configuration in <Path>\<Name>; Remove-VM
//     keeps the VM's disks (hashicorp/vagrant and microsoft/openvmm's petri
//     delete them on their own); a disk a running VM holds cannot be
//     removed.
//   - A VM's network adapters report no address until its guest's
//     integration services run, then what the guest has: a Windows guest
//     first gives itself a link-local 169.254.x.y address (and fe80::) and
//     keeps it until DHCP answers (hashicorp/vagrant#9064: "Windows VM
//     reports IP from range 169.254.x.x in case if there is no DHCP
//     server"; #9532: Vagrant picking a 169.x address on Hyper-V), then
//     its lease. A VM that is off reports none.
//   - Hyper-V's errors read as on Windows: New-VM on a full disk fails with
//     "Failed to create a new virtual machine." / "'<name>' failed to
//     realize. (Virtual machine ID <ID>)" / "Failed to access configuration
//     store: <the Win32 error's text> (0x800700NN)." (the shape of
//     jamesstringer90/Easy-GPU-PV#406 and #449, with ERROR_DISK_FULL's
//     text and code).
//
// Faults are injected per cmdlet (FailNext) or by cutting a script off
// after a cmdlet, its connection dropped as when the harness is killed
// (CutAfter). The host also records what breaks the provider's contract
// with its scripts: a script it does not know, parameters other than the
// script's, the password in a script (Problems).
package hypervhost

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/winconform/winconform/testing/wsmantest"
)

// Config describes the host.
type Config struct {
	// Computer is the host's computer name; HV01 when empty.
	Computer string
	// NoHyperV makes a Windows machine without the Hyper-V module.
	NoHyperV bool
	// AccessDenied makes the account one that may not use Hyper-V: not an
	// administrator nor in Hyper-V Administrators.
	AccessDenied bool
	// Password is the WinRM password: a script that holds it is a problem.
	Password string
	// Boot is how long a VM's guest reports no address after it starts
	// (20s when 0); DHCP how long it then reports its link-local ones
	// until its lease (20s more when 0).
	Boot, DHCP time.Duration
	// Leases are the addresses DHCP gives the VMs the scripts make, in
	// order (192.168.50.21, .22... when it runs out).
	Leases []string
}

// Host is the model of a Hyper-V host. Its methods are safe for concurrent
// use; Handle answers the provider's scripts.
type Host struct {
	mu       sync.Mutex
	cfg      Config
	now      time.Time
	clock    bool // now is set by the test
	switches []string
	entries  map[string]*entry // by key(path)
	vms      []*VM
	events   []Event
	faults   map[string]string
	cutAfter map[string]bool
	cmdlets  []string
	problems []string
	made     int // VMs the scripts made
}

// entry is a file or a directory.
type entry struct {
	path    string
	dir     bool
	parent  string // a differencing disk's parent
	created time.Time
}

// VM is a virtual machine of the host.
type VM struct {
	ID, Name    string
	Notes       string
	Generation  int
	MemoryBytes int64
	CPUs        int
	Switch      string
	// SecureBoot is the secure boot template, "" when off.
	SecureBoot string
	// AutomaticCheckpoints is on for a VM New-VM makes on Windows 10 1709
	// and later until Set-VM turns it off.
	AutomaticCheckpoints bool
	// State is "Off" or "Running".
	State   string
	Created time.Time
	// Started is when it last started.
	Started time.Time
	// Disks are the paths of its hard disk drives; Config its
	// configuration folder (<Path>\<Name>).
	Disks  []string
	Config string
	// Plan says what the guest reports through KVP at a time since the VM
	// started; when nil, what a Windows guest does (see Config.Boot).
	Plan func(sinceStart time.Duration) []string
	// Lease is the address DHCP gives its guest.
	Lease string
}

// Event is an entry of a Hyper-V event log.
type Event struct {
	Time    time.Time
	ID      int
	Level   string
	Log     string
	Message string
}

// The logs the provider reads.
const (
	WorkerLog = "Microsoft-Windows-Hyper-V-Worker-Admin"
	VMMSLog   = "Microsoft-Windows-Hyper-V-VMMS-Admin"
)

// DiskFull is the Win32 error of a full volume, as Hyper-V's messages end
// with it: ERROR_DISK_FULL (112), HRESULT 0x80070070.
const DiskFull = "There is not enough space on the disk. (0x80070070)"

// NewVMDiskFull is New-VM's error on a full volume, for FailNext("New-VM",
// ...): its configuration store cannot be written.
const NewVMDiskFull = "Failed to create a new virtual machine.\r\n'{name}' failed to realize. (Virtual machine ID {id})\r\nFailed to access configuration store: " + DiskFull + "."

// New returns a host with no VM, no switch and no file.
func New(cfg Config) *Host {
	if cfg.Computer == "" {
		cfg.Computer = "HV01"
	}
	return &Host{cfg: cfg, entries: map[string]*entry{}, faults: map[string]string{}, cutAfter: map[string]bool{}}
}

// guestAddresses is what a Windows guest with integration services
// reports through KVP: nothing while it boots (Config.Boot), then its
// link-local addresses while no DHCP server has answered (Config.DHCP),
// then its lease, its IPv6 link-local address staying.
func (h *Host) guestAddresses(vm *VM, since time.Duration) []string {
	boot, dhcp := h.cfg.Boot, h.cfg.DHCP
	if boot == 0 {
		boot = 20 * time.Second
	}
	if dhcp == 0 {
		dhcp = 20 * time.Second
	}
	switch {
	case since < boot:
		return nil
	case since < boot+dhcp:
		return []string{"169.254.83.10", "fe80::5d1:2a3b:4c5d:6e7f"}
	}
	return []string{vm.Lease, "fe80::5d1:2a3b:4c5d:6e7f"}
}

// SetNow fixes the host's clock at t (it runs with the wall clock until
// then); Advance moves it.
func (h *Host) SetNow(t time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now, h.clock = t, true
}

// Advance moves the clock SetNow fixed by d.
func (h *Host) Advance(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = h.now.Add(d)
}

func (h *Host) time() time.Time {
	if h.clock {
		return h.now
	}
	return time.Now()
}

// AddSwitch adds a virtual switch.
func (h *Host) AddSwitch(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.switches = append(h.switches, name)
}

// AddDir makes a directory (and its parents).
func (h *Host) AddDir(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mkdir(path)
}

// AddFile makes a file, such as a golden image (and its directory).
func (h *Host) AddFile(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mkdir(parentOf(path))
	h.entries[key(path)] = &entry{path: path, created: h.time()}
}

// AddVM adds a VM as someone else made it (its ID made when empty) and
// returns its ID.
func (h *Host) AddVM(vm VM) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if vm.ID == "" {
		vm.ID = newID()
	}
	if vm.State == "" {
		vm.State = "Off"
	}
	if vm.Created.IsZero() {
		vm.Created = h.time()
	}
	if vm.State == "Running" && vm.Started.IsZero() {
		vm.Started = h.time()
	}
	v := vm
	h.vms = append(h.vms, &v)
	return v.ID
}

// AddEvent logs an event.
func (h *Host) AddEvent(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

// FailNext makes the next call of cmdlet (New-VHD, New-VM, Set-VM,
// Set-VMFirmware, Start-VM, Remove-Item...) fail with message, in which
// {name}, {id} and {path} stand for the VM's name, its ID and the path at
// hand.
func (h *Host) FailNext(cmdlet, message string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.faults[cmdlet] = message
}

// CutAfter makes the next script that runs cmdlet stop right after it, its
// connection dropped without an answer: the harness killed, the network
// gone.
func (h *Host) CutAfter(cmdlet string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cutAfter[cmdlet] = true
}

// VMs returns copies of the host's VMs.
func (h *Host) VMs() []VM {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]VM, len(h.vms))
	for i, v := range h.vms {
		out[i] = *v
		out[i].Disks = slices.Clone(v.Disks)
	}
	return out
}

// Paths returns every file and directory of the host under dir (dir
// excluded), sorted.
func (h *Host) Paths(dir string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for k, e := range h.entries {
		if strings.HasPrefix(k, key(dir)+`\`) {
			out = append(out, e.path)
		}
	}
	sort.Strings(out)
	return out
}

// Exists reports whether path is a file or a directory of the host.
func (h *Host) Exists(path string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.entries[key(path)] != nil
}

// Cmdlets lists the cmdlets the scripts ran, in order, each with what it
// acted on ("New-VM win-r-1", "Remove-Item D:\...").
func (h *Host) Cmdlets() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.cmdlets)
}

// Problems lists what broke the provider's contract with its scripts.
func (h *Host) Problems() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.problems)
}

// ---------------------------------------------------------------- scripts

// The scripts the host answers, and the parameters each takes (the second
// line of infra/vms/hyperv/scripts/<name>.ps1).
var scriptParams = map[string][]string{
	"hyperv-host":      {"VhdxDir", "Switch"},
	"hyperv-create":    {"Name", "RunID", "Image", "VhdxDir", "Switch", "Generation", "SecureBootTemplate", "CPUs", "MemoryBytes", "Notes"},
	"hyperv-delete":    {"VMId", "Folder", "VhdxDir"},
	"hyperv-list":      {"VhdxDir"},
	"hyperv-addresses": {"VMId"},
	"hyperv-console":   {"VMId"},
}

// Scripts returns the scripts the host answers, each with the parameters
// it takes.
func Scripts() map[string][]string {
	out := map[string][]string{}
	for k, v := range scriptParams {
		out[k] = slices.Clone(v)
	}
	return out
}

const (
	stepMarker   = "# winconform-step: "
	preludeStart = "# parameters (generated by winconform):"
	preludeEnd   = "# end of parameters"
)

// cut is what a script cut short returns: no answer, its connection gone.
var cut = wsmantest.Reply{Drop: true}

// Handle answers one command: a script of the provider.
func (h *Host) Handle(c *wsmantest.Call) wsmantest.Reply {
	name, params, err := parseScript(c.Script)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.problems = append(h.problems, err.Error())
		return fail(err.Error())
	}
	if h.cfg.Password != "" && strings.Contains(c.Script, h.cfg.Password) {
		h.problems = append(h.problems, fmt.Sprintf("script %s holds the WinRM password", name))
	}
	want, ok := scriptParams[name]
	if !ok {
		h.problems = append(h.problems, fmt.Sprintf("script %s is not one of the provider's", name))
		return fail("The term '" + name + "' is not recognized")
	}
	var got []string
	for k := range params {
		if k != "StepName" {
			got = append(got, k)
		}
	}
	if !slices.Equal(sorted(want), sorted(got)) {
		h.problems = append(h.problems, fmt.Sprintf("script %s got parameters %v, wants %v", name, sorted(got), sorted(want)))
		return fail("The variable cannot be retrieved because it has not been set.")
	}
	if params["StepName"] != name {
		h.problems = append(h.problems, fmt.Sprintf("script %s has $StepName %q", name, params["StepName"]))
	}
	s := &run{h: h, p: params, name: name, script: c.Script}
	var status map[string]any
	switch name {
	case "hyperv-host":
		status = s.hostCheck()
	case "hyperv-create":
		status = s.create()
	case "hyperv-delete":
		status = s.delete()
	case "hyperv-list":
		status = s.list()
	case "hyperv-addresses":
		status = s.addresses()
	case "hyperv-console":
		status = s.console()
	}
	switch {
	case s.cut:
		return cut
	case s.thrown != "":
		return wsmantest.Reply{Stderr: clixmlError(s.thrown), ExitCode: 1}
	}
	out := map[string]any{"script": name}
	for k, v := range status {
		out[k] = v
	}
	data, _ := json.Marshal(out)
	return wsmantest.Reply{Stdout: string(data) + "\r\n"}
}

func fail(msg string) wsmantest.Reply { return wsmantest.Reply{Stderr: clixmlError(msg), ExitCode: 1} }

// clixmlError is an error record as powershell.exe writes it to stderr
// under WinRM.
func clixmlError(msg string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r\n", "_x000D__x000A_", "\n", "_x000A_")
	return `#< CLIXML` + "\r\n" + `<Objs Version="1.1.0.1" xmlns="http://schemas.microsoft.com/powershell/2004/04"><S S="Error">` + r.Replace(msg) + `_x000D__x000A_</S></Objs>`
}

// parseScript reads a rendered script's name (its marker line) and its
// parameters (the prelude).
func parseScript(script string) (string, map[string]string, error) {
	first, rest, _ := strings.Cut(script, "\n")
	name, ok := strings.CutPrefix(strings.TrimSuffix(first, "\r"), stepMarker)
	if !ok {
		return "", nil, fmt.Errorf("a script without the marker line %q: %q", stepMarker, first)
	}
	line, body, _ := strings.Cut(rest, "\n")
	if strings.TrimSuffix(line, "\r") != preludeStart {
		return name, nil, fmt.Errorf("script %s has no parameters prelude", name)
	}
	// The values are read as PowerShell reads them: a value's line breaks
	// (CRLF or LF) are its own.
	params := map[string]string{}
	for {
		if line, _, _ := strings.Cut(body, "\n"); strings.TrimSuffix(line, "\r") == preludeEnd {
			return name, params, nil
		}
		m := assignment.FindStringSubmatch(body)
		if m == nil {
			return name, nil, fmt.Errorf("script %s: a prelude line that is not $Name = '...': %q", name, firstOf(body))
		}
		value, n, err := unquote(body[len(m[0]):])
		if err != nil {
			return name, nil, fmt.Errorf("script %s: parameter %s: %v", name, m[1], err)
		}
		if _, dup := params[m[1]]; dup {
			return name, nil, fmt.Errorf("script %s: parameter %s given twice", name, m[1])
		}
		params[m[1]] = value
		body = strings.TrimPrefix(body[len(m[0])+n:], "\r")
		if !strings.HasPrefix(body, "\n") {
			return name, nil, fmt.Errorf("script %s: parameter %s: more after its value", name, m[1])
		}
		body = body[1:]
	}
}

var assignment = regexp.MustCompile(`^\$([A-Z][A-Za-z0-9]*) = `)

// The characters PowerShell takes as a single quote (the ASCII one and
// U+2018 to U+201B): in a single-quoted string, two of them stand for one.
const psQuotes = "'\u2018\u2019\u201a\u201b"

// unquote reads a PowerShell single-quoted string at the start of s and
// returns its value and the length read.
func unquote(s string) (string, int, error) {
	rs := []rune(s)
	if len(rs) == 0 || !strings.ContainsRune(psQuotes, rs[0]) {
		return "", 0, fmt.Errorf("not a single-quoted string: %q", firstOf(s))
	}
	var b strings.Builder
	for i := 1; i < len(rs); i++ {
		if strings.ContainsRune(psQuotes, rs[i]) {
			if i+1 < len(rs) && strings.ContainsRune(psQuotes, rs[i+1]) {
				b.WriteRune(rs[i])
				i++
				continue
			}
			return b.String(), len(string(rs[:i+1])), nil
		}
		b.WriteRune(rs[i])
	}
	return "", 0, fmt.Errorf("a string that does not end")
}

func firstOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 80 {
		line = line[:80]
	}
	return line
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// run is one script running on the host (h.mu held).
type run struct {
	h      *Host
	p      map[string]string
	name   string
	script string
	cut    bool   // cut short after a cmdlet: no answer
	thrown string // a terminating error outside the script's try: exit 1
}

// cmdlet records a cmdlet and returns the error injected for it, if any,
// with its placeholders filled in.
func (s *run) cmdlet(name, target string, vm *VM, path string) error {
	s.record(name, target)
	msg, ok := s.h.faults[name]
	if !ok {
		return nil
	}
	delete(s.h.faults, name)
	r := strings.NewReplacer("{path}", path)
	if vm != nil {
		r = strings.NewReplacer("{name}", vm.Name, "{id}", strings.ToUpper(vm.ID), "{path}", path)
	}
	return fmt.Errorf("%s", r.Replace(msg))
}

// record records a cmdlet. The host does what the script does: a cmdlet
// the script does not call (module-qualified, for Hyper-V's) is the
// model's mistake, and a problem.
func (s *run) record(name, target string) {
	s.h.cmdlets = append(s.h.cmdlets, name+" "+target)
	call := name
	if strings.Contains(name, "-VM") || strings.HasSuffix(name, "-VHD") {
		call = `Hyper-V\` + name
	}
	if !strings.Contains(s.script, call+" ") {
		s.h.problems = append(s.h.problems, fmt.Sprintf("the host ran %s for script %s, which does not call it", call, s.name))
	}
}

// after cuts the script short if CutAfter asked for it after cmdlet.
func (s *run) after(cmdlet string) bool {
	if s.h.cutAfter[cmdlet] {
		delete(s.h.cutAfter, cmdlet)
		s.cut = true
	}
	return s.cut
}

// hostCheck is hyperv-host.
func (s *run) hostCheck() map[string]any {
	h := s.h
	switches := []string{}
	access := ""
	if !h.cfg.NoHyperV {
		if h.cfg.AccessDenied {
			access = fmt.Sprintf("You do not have the required permission to complete this task. Contact the administrator of the authorization policy for the computer '%s'.", h.cfg.Computer)
		} else {
			switches = append(switches, h.switches...)
		}
	}
	e := h.entries[key(s.p["VhdxDir"])]
	return map[string]any{
		"computer":     h.cfg.Computer,
		"hyperV":       !h.cfg.NoHyperV,
		"access":       access,
		"switches":     switches,
		"switchFound":  containsFold(switches, s.p["Switch"]),
		"vhdxDirFound": e != nil && e.dir,
	}
}

// create is hyperv-create.
func (s *run) create() map[string]any {
	h, p := s.h, s.p
	name, image := p["Name"], p["Image"]
	folder := join(p["VhdxDir"], p["RunID"], name)
	disk := join(folder, name+strings.ToLower(ext(image)))
	if e := h.entries[key(image)]; e == nil || e.dir {
		return map[string]any{"stage": "image", "error": "the golden image " + image + " is not a file on this host"}
	}
	if h.entries[key(folder)] != nil {
		return map[string]any{"stage": "folder", "error": folder + " is there already: a machine of that name was made before"}
	}
	var vm *VM
	stage := "New-Item"
	err := func() error {
		if err := s.cmdlet("New-Item", folder, nil, folder); err != nil {
			return err
		}
		h.mkdir(folder)
		if s.after("New-Item") {
			return nil
		}
		stage = "New-VHD"
		if err := s.cmdlet("New-VHD", disk, nil, disk); err != nil {
			return err
		}
		if err := h.newDifferencingVHD(disk, image); err != nil {
			return err
		}
		if s.after("New-VHD") {
			return nil
		}
		stage = "New-VM"
		gen, mem := atoi(p["Generation"]), atoi64(p["MemoryBytes"])
		id := newID()
		if err := s.cmdlet("New-VM", name, &VM{Name: name, ID: id}, disk); err != nil {
			return err
		}
		if !containsFold(h.switches, p["Switch"]) {
			return fmt.Errorf("Hyper-V was unable to find a virtual switch with name %q.", p["Switch"])
		}
		vm = &VM{ID: id, Name: name, Generation: gen, MemoryBytes: mem, CPUs: 1, Switch: p["Switch"], State: "Off",
			Created: h.time(), Disks: []string{disk}, Config: join(parentOf(folder), name), AutomaticCheckpoints: true}
		if gen == 2 {
			vm.SecureBoot = "MicrosoftWindows"
		}
		if h.made < len(h.cfg.Leases) {
			vm.Lease = h.cfg.Leases[h.made]
		} else {
			vm.Lease = fmt.Sprintf("192.168.50.%d", 21+h.made)
		}
		h.made++
		h.mkdir(vm.Config)
		h.entries[key(join(vm.Config, "Virtual Machines", strings.ToUpper(id)+".vmcx"))] = &entry{path: join(vm.Config, "Virtual Machines", strings.ToUpper(id)+".vmcx"), created: h.time()}
		h.vms = append(h.vms, vm)
		if s.after("New-VM") {
			return nil
		}
		stage = "Set-VM"
		if err := s.cmdlet("Set-VM", name, vm, ""); err != nil {
			return err
		}
		vm.Notes, vm.CPUs, vm.AutomaticCheckpoints = p["Notes"], atoi(p["CPUs"]), false
		if s.after("Set-VM") {
			return nil
		}
		if gen == 2 {
			stage = "Set-VMFirmware"
			if err := s.cmdlet("Set-VMFirmware", name, vm, ""); err != nil {
				return err
			}
			vm.SecureBoot = p["SecureBootTemplate"]
		}
		stage = "Start-VM"
		if err := s.cmdlet("Start-VM", name, vm, ""); err != nil {
			return err
		}
		vm.State, vm.Started = "Running", h.time()
		h.events = append(h.events, Event{Time: h.time(), ID: 18500, Level: "Information", Log: VMMSLog,
			Message: fmt.Sprintf("'%s' started successfully. (Virtual machine ID %s)", name, strings.ToUpper(vm.ID))})
		s.after("Start-VM")
		return nil
	}()
	if s.cut {
		return nil
	}
	if err != nil {
		// The script's catch: the VM off and removed, the folder removed.
		if vm != nil {
			s.record("Stop-VM", vm.Name)
			s.record("Remove-VM", vm.Name)
			h.removeVM(vm)
		}
		s.record("Remove-Item", folder)
		_ = h.removeTree(folder)
		if run := parentOf(folder); h.entries[key(run)] != nil && len(h.children(run)) == 0 {
			s.record("Remove-Item", run)
			delete(h.entries, key(run))
		}
		return map[string]any{"stage": stage, "error": err.Error(), "left": h.entries[key(folder)] != nil}
	}
	return map[string]any{"id": vm.ID, "name": vm.Name, "created": vm.Created.UTC().Format(time.RFC3339Nano), "disk": disk}
}

// delete is hyperv-delete.
func (s *run) delete() map[string]any {
	h, p := s.h, s.p
	dir := p["VhdxDir"]
	var folders []string
	addFolder := func(f string) {
		if f != "" && !containsFold(folders, f) {
			folders = append(folders, f)
		}
	}
	var targets []*VM
	if p["VMId"] != "" {
		if vm := h.vm(p["VMId"]); vm != nil {
			targets = append(targets, vm)
		}
	}
	if p["Folder"] != "" {
		own := join(dir, p["Folder"])
		addFolder(own)
		for _, vm := range h.vms {
			for _, d := range vm.Disks {
				if strings.EqualFold(machineFolder(d, dir), own) {
					targets = append(targets, vm)
					break
				}
			}
		}
	}
	removedVMs := []string{}
	for _, vm := range targets {
		if slices.Contains(removedVMs, vm.ID) {
			continue
		}
		for _, d := range vm.Disks {
			addFolder(machineFolder(d, dir))
		}
		if vm.State != "Off" {
			if err := s.cmdlet("Stop-VM", vm.Name, vm, ""); err != nil {
				s.thrown = err.Error()
				return nil
			}
			vm.State = "Off"
		}
		if err := s.cmdlet("Remove-VM", vm.Name, vm, ""); err != nil {
			s.thrown = err.Error()
			return nil
		}
		h.removeVM(vm)
		removedVMs = append(removedVMs, vm.ID)
		if s.after("Remove-VM") {
			return nil
		}
	}
	removedPaths := []string{}
	for _, f := range folders {
		if h.entries[key(f)] != nil {
			if err := s.cmdlet("Remove-Item", f, nil, f); err != nil {
				s.thrown = err.Error()
				return nil
			}
			if err := h.removeTree(f); err != nil {
				s.thrown = err.Error()
				return nil
			}
			removedPaths = append(removedPaths, f)
		}
		run := parentOf(f)
		if e := h.entries[key(run)]; e != nil && len(h.children(run)) == 0 {
			s.record("Remove-Item", run)
			delete(h.entries, key(run))
			removedPaths = append(removedPaths, run)
		}
	}
	return map[string]any{"removedVMs": removedVMs, "removedPaths": removedPaths}
}

// list is hyperv-list.
func (s *run) list() map[string]any {
	h, dir := s.h, s.p["VhdxDir"]
	vms := []any{}
	for _, vm := range h.vms {
		if !tagged.MatchString(vm.Notes) {
			continue
		}
		vms = append(vms, map[string]any{"id": vm.ID, "name": vm.Name, "notes": vm.Notes,
			"created": vm.Created.UTC().Format(time.RFC3339Nano), "state": vm.State, "disks": slices.Clone(vm.Disks)})
	}
	folders := []any{}
	if e := h.entries[key(dir)]; e != nil && e.dir {
		for _, run := range h.children(dir) {
			if !run.dir {
				continue
			}
			for _, m := range h.children(run.path) {
				if m.dir {
					folders = append(folders, map[string]any{"run": baseName(run.path), "name": baseName(m.path), "path": m.path,
						"created": m.created.UTC().Format(time.RFC3339Nano)})
				}
			}
		}
	}
	return map[string]any{"vms": vms, "folders": folders}
}

// tagged is the script's -notmatch '(?m)^winconform-run=' (PowerShell's
// -match is case-insensitive).
var tagged = regexp.MustCompile(`(?mi)^winconform-run=`)

// addresses is hyperv-addresses.
func (s *run) addresses() map[string]any {
	vm := s.h.vm(s.p["VMId"])
	if vm == nil {
		return map[string]any{"found": false, "addresses": []string{}}
	}
	return map[string]any{"found": true, "state": vm.State, "addresses": s.h.kvp(vm)}
}

// kvp is what the VM's adapters report.
func (h *Host) kvp(vm *VM) []string {
	if vm.State != "Running" {
		return []string{}
	}
	since := h.time().Sub(vm.Started)
	if vm.Plan != nil {
		return append([]string{}, vm.Plan(since)...)
	}
	return h.guestAddresses(vm, since)
}

// console is hyperv-console.
func (s *run) console() map[string]any {
	h := s.h
	vm := h.vm(s.p["VMId"])
	if vm == nil {
		return map[string]any{"found": false}
	}
	addrs := h.kvp(vm)
	// The integration services: their status is "" while the VM is off,
	// "No Contact" until the guest runs them (microsoft/openvmm's
	// VmShutdownIcStatus), "OK" then. Guest Service Interface is off by
	// default.
	status := ""
	if vm.State == "Running" {
		status = "No Contact"
		if len(addrs) > 0 {
			status = "OK"
		}
	}
	var services []any
	for _, n := range []string{"Guest Service Interface", "Heartbeat", "Key-Value Pair Exchange", "Shutdown", "Time Synchronization", "VSS"} {
		enabled := n != "Guest Service Interface"
		st := status
		if !enabled {
			st = ""
		}
		services = append(services, map[string]any{"name": n, "enabled": enabled, "status": st})
	}
	events := []any{}
	for _, e := range h.events {
		if !e.Time.Before(vm.Created) && strings.Contains(strings.ToLower(e.Message), strings.ToLower(vm.ID)) {
			events = append(events, map[string]any{"time": e.Time.UTC().Format(time.RFC3339Nano), "id": e.ID, "level": e.Level, "log": e.Log, "message": e.Message})
		}
	}
	uptime := "00:00:00"
	if vm.State == "Running" {
		d := h.time().Sub(vm.Started).Truncate(time.Second)
		uptime = fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
	}
	return map[string]any{"found": true, "computer": h.cfg.Computer, "name": vm.Name, "state": vm.State, "status": "Operating normally",
		"uptime": uptime, "created": vm.Created.UTC().Format(time.RFC3339Nano), "services": services, "addresses": addrs,
		"events": events, "eventsError": ""}
}

// ---------------------------------------------------------------- state

func (h *Host) vm(id string) *VM {
	for _, v := range h.vms {
		if strings.EqualFold(v.ID, id) {
			return v
		}
	}
	return nil
}

// newDifferencingVHD is New-VHD -Path disk -ParentPath parent -Differencing.
func (h *Host) newDifferencingVHD(disk, parent string) error {
	if e := h.entries[key(parent)]; e == nil || e.dir {
		return fmt.Errorf("Failed to create the virtual hard disk.\r\nThe system failed to create '%s': The system cannot find the file specified. (0x80070002).", disk)
	}
	if h.entries[key(disk)] != nil {
		return fmt.Errorf("Failed to create the virtual hard disk.\r\nThe system failed to create '%s': The file exists. (0x80070050).", disk)
	}
	if h.entries[key(parentOf(disk))] == nil {
		return fmt.Errorf("Failed to create the virtual hard disk.\r\nThe system failed to create '%s': The system cannot find the path specified. (0x80070003).", disk)
	}
	h.entries[key(disk)] = &entry{path: disk, parent: parent, created: h.time()}
	return nil
}

// removeVM is Remove-VM: the VM and its configuration file go, its disks
// and folders stay.
func (h *Host) removeVM(vm *VM) {
	h.vms = slices.DeleteFunc(h.vms, func(v *VM) bool { return v == vm })
	delete(h.entries, key(join(vm.Config, "Virtual Machines", strings.ToUpper(vm.ID)+".vmcx")))
}

// removeTree is Remove-Item -Recurse -Force: it fails, removing nothing,
// on a disk a running VM holds.
func (h *Host) removeTree(path string) error {
	k := key(path)
	for _, vm := range h.vms {
		if vm.State != "Running" {
			continue
		}
		for _, d := range vm.Disks {
			if dk := key(d); dk == k || strings.HasPrefix(dk, k+`\`) {
				return fmt.Errorf("Cannot remove item %s: The process cannot access the file '%s' because it is being used by another process.", d, d)
			}
		}
	}
	for ek := range h.entries {
		if ek == k || strings.HasPrefix(ek, k+`\`) {
			delete(h.entries, ek)
		}
	}
	return nil
}

func (h *Host) mkdir(path string) {
	for p := path; p != "" && h.entries[key(p)] == nil; p = parentOf(p) {
		h.entries[key(p)] = &entry{path: p, dir: true, created: h.time()}
	}
}

// children are the entries right inside dir, sorted.
func (h *Host) children(dir string) []*entry {
	var out []*entry
	for _, e := range h.entries {
		if key(parentOf(e.path)) == key(dir) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// ---------------------------------------------------------------- paths

// key is a Windows path's identity: case does not count.
func key(path string) string { return strings.ToLower(strings.TrimRight(path, `\`)) }

func join(parts ...string) string {
	out := strings.TrimRight(parts[0], `\`)
	for _, p := range parts[1:] {
		out += `\` + strings.Trim(p, `\`)
	}
	return out
}

func parentOf(path string) string {
	path = strings.TrimRight(path, `\`)
	i := strings.LastIndex(path, `\`)
	if i <= 2 { // D:\x -> D: (the drive is no directory of its own here)
		return ""
	}
	return path[:i]
}

func baseName(path string) string {
	path = strings.TrimRight(path, `\`)
	return path[strings.LastIndex(path, `\`)+1:]
}

func ext(path string) string {
	b := baseName(path)
	if i := strings.LastIndex(b, "."); i >= 0 {
		return b[i:]
	}
	return ""
}

// machineFolder is the lib's Get-MachineFolder: the folder <dir>\<run>\<m>
// that holds path, or "".
func machineFolder(path, dir string) string {
	folder := parentOf(path)
	run := parentOf(folder)
	if folder == "" || run == "" || key(parentOf(run)) != key(dir) {
		return ""
	}
	return folder
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

func atoi64(s string) int64 {
	var n int64
	fmt.Sscan(s, &n)
	return n
}

// newID is a VM ID: a random GUID, as [guid].ToString() writes it.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
