package hyperv_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	_ "github.com/winconform/winconform/infra/vms/hyperv" // registers the provider
	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/testing/configtest"
	"github.com/winconform/winconform/testing/hypervhost"
	"github.com/winconform/winconform/testing/standin"
	"github.com/winconform/winconform/testing/vmstest"
)

// The lab the tests' host has: a golden image, a switch, the harness's
// directory.
const (
	golden  = `D:\golden\win2022.vhdx`
	vhdxDir = `D:\winconform`
	lab     = "k8s-lab"
)

// rig is a Hyper-V host behind the WS-Management stand-in, and a VM file
// that names it.
type rig struct {
	host *hypervhost.Host
	srv  *standin.Server
	file *vms.File
}

type rigOption func(*rigConfig)

type rigConfig struct {
	host     hypervhost.Config
	password string // the password the VM file's variable holds
	block    string // the hyperv block's own lines, beside winrm
	machine  string // the machine block's lines
}

func withPassword(pw string) rigOption { return func(c *rigConfig) { c.password = pw } }
func withHost(h hypervhost.Config) rigOption {
	return func(c *rigConfig) { c.host = h }
}
func withBlock(b string) rigOption   { return func(c *rigConfig) { c.block = b } }
func withMachine(m string) rigOption { return func(c *rigConfig) { c.machine = m } }

func newRig(t *testing.T, opts ...rigOption) *rig {
	t.Helper()
	cfg := rigConfig{password: standin.DefaultPassword, block: "  switch: " + lab + "\n  vhdxDir: '" + vhdxDir + "'\n",
		machine: "  user: Administrator\n  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}\n"}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.host.Password = standin.DefaultPassword
	host := hypervhost.New(cfg.host)
	host.AddFile(golden)
	host.AddDir(vhdxDir)
	host.AddSwitch(lab)
	srv := standin.New(t, standin.WithHandler(host.Handle))
	doc := fmt.Sprintf(`provider: hyperv
connection:
  endpoint: %s
  user: %s
  credentials:
    password: {env: HYPERV_PASSWORD}
image: '%s'
count: 2
machine:
%shyperv:
%s  winrm: {port: %d}
`, srv.Host(), srv.User(), golden, cfg.machine, cfg.block, srv.Port())
	env := map[string]string{"HYPERV_PASSWORD": cfg.password, "WINDOWS_ADMIN_PASSWORD": standin.DefaultPassword}
	path := filepath.Join(t.TempDir(), "vms.yaml")
	f, err := config.Parse[config.Machines](path, []byte(doc), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("the VM file does not load: %v\n%s", err, doc)
	}
	t.Cleanup(func() {
		if p := host.Problems(); len(p) > 0 {
			t.Errorf("the provider broke its contract with its scripts: %s", strings.Join(p, "; "))
		}
	})
	return &rig{host: host, srv: srv, file: f}
}

func (r *rig) open(t *testing.T) vms.Provider {
	t.Helper()
	p, err := vms.Open(context.Background(), r.file)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func (r *rig) spec(n int) vms.Spec {
	return vms.Spec{Name: vms.MachineName("win", "run-7", n), RunID: "run-7", Created: time.Now().UTC().Truncate(time.Second),
		Image: r.file.Image, CPUs: 2, MemoryMiB: 4096}
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// The provider passes the contract every provider passes, against a
// Hyper-V host over WinRM: Create tags the VM in its Notes, List finds it
// by the tag, Delete removes the VM and its disk, twice without error.
func TestConformance(t *testing.T) {
	r := newRig(t)
	p := r.open(t)
	spec := r.spec(1)
	vmstest.Conformance(t, p, spec)
	if vs := r.host.VMs(); len(vs) != 0 {
		t.Errorf("after Delete the host still has VMs %+v", vs)
	}
	if left := r.host.Paths(vhdxDir); len(left) != 0 {
		t.Errorf("after Delete the host still has %v under %s", left, vhdxDir)
	}
	if !r.host.Exists(golden) {
		t.Errorf("Delete removed the golden image %s", golden)
	}
}

// What Create makes is what Hyper-V's cmdlets make from the VM file: a
// differencing disk of the golden image in the machine's folder, a
// generation 2 VM on it with the spec's CPUs and memory, on the switch,
// secure boot with the Windows template, automatic checkpoints off, the run
// tag and the creation time in its Notes, started.
func TestCreateMakesTaggedVMOnDifferencingDisk(t *testing.T) {
	r := newRig(t)
	p := r.open(t)
	spec := r.spec(1)
	m, err := p.Create(ctx(t), spec)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	vs := r.host.VMs()
	if len(vs) != 1 {
		t.Fatalf("the host has %d VMs, want 1", len(vs))
	}
	vm := vs[0]
	folder := vhdxDir + `\run-7\` + spec.Name
	want := hypervhost.VM{ID: m.ID, Name: spec.Name, Generation: 2, MemoryBytes: 4 << 30, CPUs: 2, Switch: lab, SecureBoot: "MicrosoftWindows", State: "Running",
		Disks: []string{folder + `\` + spec.Name + ".vhdx"}, Config: folder, Lease: "192.168.50.21"}
	got := vm
	got.Notes, got.Created, got.Started, got.Plan = "", time.Time{}, time.Time{}, nil
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the VM is\n%+v\nwant\n%+v", got, want)
	}
	if vm.AutomaticCheckpoints {
		t.Errorf("automatic checkpoints are on: each start would put a checkpoint's .avhdx between the VM and its disk")
	}
	wantNotes := "winconform-created=" + spec.Created.Format(time.RFC3339) + "\r\nwinconform-run=run-7"
	if vm.Notes != wantNotes {
		t.Errorf("the VM's notes are %q, want %q", vm.Notes, wantNotes)
	}
	order := r.host.Cmdlets()
	tag, made := slices.Index(order, "Set-VM "+spec.Name), slices.Index(order, "New-VM "+spec.Name)
	if made < 0 || tag != made+1 {
		t.Errorf("the VM is not tagged right after New-VM in the same script: %v", order)
	}
}

// An address that is first link-local then settles: Hyper-V reports what
// the guest reports through KVP, nothing while it boots, its 169.254.x.y
// address until DHCP answers, then its lease. The provider reports each as
// it is (the lifecycle filters and settles). Sources: hashicorp/vagrant#9064
// (a Windows guest on Hyper-V reports 169.254.x.x while no DHCP server
// answers) and #9532 (Vagrant taking such an address on Hyper-V);
// hashicorp/packer-plugin-hyperv builder/hyperv/common/powershell/hyperv/
// hyperv.go (GetVirtualMachineNetworkAdapterAddress reads
// Get-VMNetworkAdapter's IPAddresses, else the KVP exchange's
// NetworkAddressIPv4).
func TestAddressFirstLinkLocalThenSettles(t *testing.T) {
	r := newRig(t)
	start := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	r.host.SetNow(start)
	p := r.open(t)
	m, err := p.Create(ctx(t), r.spec(1))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	for _, step := range []struct {
		at   time.Duration
		want []string
	}{
		{0, nil},
		{10 * time.Second, nil},
		{25 * time.Second, []string{"169.254.83.10", "fe80::5d1:2a3b:4c5d:6e7f"}},
		{45 * time.Second, []string{"192.168.50.21", "fe80::5d1:2a3b:4c5d:6e7f"}},
		{5 * time.Minute, []string{"192.168.50.21", "fe80::5d1:2a3b:4c5d:6e7f"}},
	} {
		r.host.SetNow(start.Add(step.at))
		got, err := p.Addresses(ctx(t), m.ID)
		if err != nil {
			t.Fatalf("Addresses at %s: %v", step.at, err)
		}
		if !slices.Equal(got, step.want) {
			t.Errorf("Addresses %s after start: %q, want %q", step.at, got, step.want)
		}
	}
}

// A New-VM that fails because the volume is full surfaces as one clear
// error: the machine, the host, the cmdlet, Hyper-V's message and the fix
// (free space in vhdxDir); and the differencing disk New-VHD made before
// is gone, with the machine's folder: nothing for sweep to find. New-VM's
// error is the shape jamesstringer90/Easy-GPU-PV#406 and #449 show ("Failed
// to create a new virtual machine." / "'<name>' failed to realize. (Virtual
// machine ID ...)" / "Failed to access configuration store: ... (0x8007...)."),
// with ERROR_DISK_FULL's text and code; microsoft/devhome#3656 counts "There
// is not enough space on the disk" as 22.5% of its Hyper-V creation failures.
func TestCreateNewVMDiskFull(t *testing.T) {
	r := newRig(t)
	p := r.open(t)
	r.host.FailNext("New-VM", hypervhost.NewVMDiskFull)
	spec := r.spec(1)
	_, err := p.Create(ctx(t), spec)
	if err == nil {
		t.Fatal("Create succeeded on a full volume")
	}
	for _, want := range []string{spec.Name, r.srv.Host(), "New-VM failed", "failed to realize", "There is not enough space on the disk. (0x80070070)",
		`the volume of hyperv.vhdxDir (D:\winconform) is full`, "nothing of it is left"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("the error spans lines (Hyper-V's message is multi-line):\n%v", err)
	}
	if left := r.host.Paths(vhdxDir); len(left) != 0 {
		t.Errorf("a failed Create left %v", left)
	}
	if ms, err := p.List(ctx(t)); err != nil || len(ms) != 0 {
		t.Errorf("List after the failed Create: %v, %v; want nothing", ms, err)
	}
}

// A host that refuses the credentials fails Open, before any machine is
// made, with the field to fix and the class of failure, and the error does
// not hold the password.
func TestOpenCredentialsRefused(t *testing.T) {
	const wrong = "not-the-Passw0rd"
	r := newRig(t, withPassword(wrong))
	_, err := vms.Open(ctx(t), r.file)
	configtest.Refused(t, err, "connection.credentials[password]", "refused the credentials")
	if !errors.Is(err, remote.ErrAuth) {
		t.Errorf("the error is not remote.ErrAuth: %v", err)
	}
	if !strings.Contains(err.Error(), "refused the credentials of "+r.srv.User()) {
		t.Errorf("the error does not say the host refused the user: %v", err)
	}
	if strings.Contains(err.Error(), wrong) {
		t.Errorf("the error holds the password: %v", err)
	}
	if n := len(r.host.Cmdlets()); n != 0 {
		t.Errorf("the host ran %d cmdlets for a client it refused", n)
	}
}

// Open checks the host before any machine is made, and names the VM
// file's field at fault.
func TestOpenChecksHost(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []rigOption
		field string
		says  string
	}{
		{"no Hyper-V", []rigOption{withHost(hypervhost.Config{NoHyperV: true})}, "connection.endpoint", "has no Hyper-V module"},
		{"no right to Hyper-V", []rigOption{withHost(hypervhost.Config{AccessDenied: true})}, "connection.user", "You do not have the required permission"},
		{"no such switch", []rigOption{withBlock("  switch: k8s\n  vhdxDir: '" + vhdxDir + "'\n")}, "hyperv.switch", `"k8s" is not a virtual switch`},
		{"no such directory", []rigOption{withBlock("  switch: " + lab + "\n  vhdxDir: 'E:\\vms'\n")}, "hyperv.vhdxDir", `E:\vms is not a directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.opts...)
			_, err := vms.Open(ctx(t), r.file)
			configtest.Refused(t, err, tc.field, tc.says)
		})
	}
}

// List returns the harness's VMs only: a VM without notes, with notes of
// its own, or with the tag's text inside a line is someone else's, and so
// is a VM whose disk is outside vhdxDir. A user's keep tag is read.
func TestListIgnoresVMsWithoutTag(t *testing.T) {
	r := newRig(t)
	p := r.open(t)
	r.host.AddVM(hypervhost.VM{Name: "dc01", State: "Running", Disks: []string{`D:\vms\dc01.vhdx`}})
	r.host.AddVM(hypervhost.VM{Name: "build-agent", Notes: "owner: ci team\r\nrebuild monthly", Disks: []string{`D:\vms\agent.vhdx`}})
	r.host.AddVM(hypervhost.VM{Name: "win-old-1", Notes: "copied from a winconform-run=nightly-3 machine", Disks: []string{`D:\vms\old.vhdx`}})
	kept := r.host.AddVM(hypervhost.VM{Name: "win-nightly-3-1", Notes: "winconform-run=nightly-3\r\nwinconform-created=2026-02-01T03:00:00Z\r\nwinconform-keep=true\r\nfor the flake in #123",
		Created: time.Date(2026, 2, 1, 3, 0, 5, 0, time.UTC)})
	m, err := p.Create(ctx(t), r.spec(1))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	got, err := p.List(ctx(t))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	want := []vms.Machine{
		{ID: kept, Name: "win-nightly-3-1", RunID: "nightly-3", Created: time.Date(2026, 2, 1, 3, 0, 5, 0, time.UTC), Keep: true},
		{ID: m.ID, Name: m.Name, RunID: "run-7", Created: m.Created},
	}
	slices.SortFunc(got, func(a, b vms.Machine) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(want, func(a, b vms.Machine) int { return strings.Compare(a.Name, b.Name) })
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List:\n%+v\nwant\n%+v", got, want)
	}
}

// A Create cut short (the harness killed) after New-VHD leaves a disk, and
// after New-VM a VM not yet tagged: List finds each by its folder in
// vhdxDir, and Delete of that ID removes the untagged VM and the folder;
// a VM of someone else stays.
func TestCreateCutShortIsFoundAndDeleted(t *testing.T) {
	for _, after := range []string{"New-VHD", "New-VM"} {
		t.Run("after "+after, func(t *testing.T) {
			r := newRig(t)
			p := r.open(t)
			other := r.host.AddVM(hypervhost.VM{Name: "dc01", State: "Running", Disks: []string{`D:\vms\dc01.vhdx`}})
			r.host.CutAfter(after)
			spec := r.spec(2)
			if _, err := p.Create(ctx(t), spec); !errors.Is(err, remote.ErrConnLost) {
				t.Fatalf("Create cut short: %v, want remote.ErrConnLost", err)
			}
			ms, err := p.List(ctx(t))
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if len(ms) != 1 || ms[0].Name != spec.Name || ms[0].RunID != "run-7" || ms[0].Created.IsZero() {
				t.Fatalf("List after a Create cut short: %+v, want the machine %s of run-7", ms, spec.Name)
			}
			if _, err := p.Addresses(ctx(t), ms[0].ID); !errors.Is(err, vms.ErrNotFound) {
				t.Errorf("Addresses of a folder left: %v, want vms.ErrNotFound", err)
			}
			if err := p.Delete(ctx(t), ms[0].ID); err != nil {
				t.Fatalf("Delete(%s): %v", ms[0].ID, err)
			}
			if err := p.Delete(ctx(t), ms[0].ID); err != nil {
				t.Errorf("a second Delete(%s): %v", ms[0].ID, err)
			}
			if left := r.host.Paths(vhdxDir); len(left) != 0 {
				t.Errorf("Delete left %v", left)
			}
			if vs := r.host.VMs(); len(vs) != 1 || vs[0].ID != other {
				t.Errorf("after Delete the host has %+v, want only dc01", vs)
			}
			if ms, _ := p.List(ctx(t)); len(ms) != 0 {
				t.Errorf("List after Delete: %+v", ms)
			}
		})
	}
}

// Delete turns a running VM off before removing it, and removes its folder
// only then (a running VM holds its disk); it never touches the golden
// image, nor a disk outside vhdxDir that the VM also has.
func TestDeleteOrder(t *testing.T) {
	r := newRig(t)
	p := r.open(t)
	m, err := p.Create(ctx(t), r.spec(1))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := p.Delete(ctx(t), m.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	cmds := r.host.Cmdlets()
	stop, remove, rm := slices.Index(cmds, "Stop-VM "+m.Name), slices.Index(cmds, "Remove-VM "+m.Name), slices.Index(cmds, `Remove-Item D:\winconform\run-7\`+m.Name)
	if stop < 0 || remove < stop || rm < remove {
		t.Errorf("Delete ran %v: want Stop-VM, then Remove-VM, then Remove-Item of the machine's folder", cmds)
	}
	if !r.host.Exists(golden) || r.host.Exists(vhdxDir+`\run-7`) || !r.host.Exists(vhdxDir) {
		t.Errorf("after Delete: golden image %v, run folder %v, vhdxDir %v; want true, false, true",
			r.host.Exists(golden), r.host.Exists(vhdxDir+`\run-7`), r.host.Exists(vhdxDir))
	}
}

// Create refuses, before any remote work, an image the host cannot use.
func TestCreateRefusesBadImage(t *testing.T) {
	r := newRig(t)
	p := r.open(t)
	for _, tc := range []struct{ image, says string }{
		{`\\files\golden\win2022.vhdx`, "network path"},
		{`golden/win2022.vhdx`, "not the path of a VHDX on the host"},
		{`D:\golden\win2022.qcow2`, "not the path of a VHDX on the host"},
		{`D:\golden\win2019.vhd`, "a generation 2 VM boots only from a VHDX"},
	} {
		spec := r.spec(1)
		spec.Image = tc.image
		before := len(r.host.Cmdlets())
		_, err := p.Create(ctx(t), spec)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Create with image %s: %v, want it to say %q", tc.image, err, tc.says)
		}
		if len(r.host.Cmdlets()) != before {
			t.Errorf("Create with image %s ran cmdlets on the host", tc.image)
		}
	}
	spec := r.spec(1)
	spec.Image = `D:\golden\missing.vhdx`
	if _, err := p.Create(ctx(t), spec); err == nil || !strings.Contains(err.Error(), `the golden image D:\golden\missing.vhdx is not a file on this host`) {
		t.Errorf("Create from an image the host lacks: %v", err)
	}
}

// The console log, which Hyper-V does not keep, is what the host knows:
// the state, the heartbeat (No Contact: the guest never ran its
// integration services), the addresses, and the Hyper-V events about the
// VM, a boot failure named. The logs, the filter on the VM's ID and the
// boot event IDs (18601-18605) are microsoft/openvmm's
// petri/src/vm/hyperv/powershell.rs (hyperv_event_logs, hyperv_boot_events),
// and so is "No Contact" (VmShutdownIcStatus).
func TestConsoleLog(t *testing.T) {
	r := newRig(t)
	start := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	r.host.SetNow(start)
	p := r.open(t)
	m, err := p.Create(ctx(t), r.spec(1))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	var id string
	for _, v := range r.host.VMs() {
		id = v.ID
	}
	r.host.AddEvent(hypervhost.Event{Time: start.Add(3 * time.Second), ID: 18604, Level: "Error", Log: hypervhost.WorkerLog,
		Message: fmt.Sprintf("'%s' failed to boot: the image's signature is not trusted. (Virtual machine ID %s)", m.Name, strings.ToUpper(id))})
	r.host.AddEvent(hypervhost.Event{Time: start.Add(4 * time.Second), ID: 18604, Level: "Error", Log: hypervhost.WorkerLog,
		Message: "'dc01' failed to boot. (Virtual machine ID 11111111-2222-4333-8444-555555555555)"})
	r.host.SetNow(start.Add(5 * time.Second))
	cl, ok := p.(vms.ConsoleLogger)
	if !ok {
		t.Fatal("the provider is not a vms.ConsoleLogger")
	}
	var b strings.Builder
	if err := cl.ConsoleLog(ctx(t), m.ID, &b); err != nil {
		t.Fatalf("ConsoleLog: %v", err)
	}
	out := b.String()
	for _, want := range []string{"Hyper-V keeps no console log", "state Running", "Heartbeat: No Contact", "Addresses (KVP): (none)",
		"18604", "failed to boot: the image's signature", "secure boot"} {
		if !strings.Contains(out, want) {
			t.Errorf("the console log does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "dc01") {
		t.Errorf("the console log has another VM's events:\n%s", out)
	}
	if err := p.Delete(ctx(t), m.ID); err != nil {
		t.Fatal(err)
	}
	if err := cl.ConsoleLog(ctx(t), m.ID, &b); !errors.Is(err, vms.ErrNotFound) {
		t.Errorf("ConsoleLog of a deleted machine: %v, want vms.ErrNotFound", err)
	}
}

// The VM file's hyperv block reaches the host: generation 1 and secure
// boot off are what New-VM and Set-VMFirmware get.
func TestSettingsReachHost(t *testing.T) {
	r := newRig(t, withBlock("  switch: "+lab+"\n  vhdxDir: '"+vhdxDir+"'\n  generation: 1\n"))
	p := r.open(t)
	spec := r.spec(1)
	spec.Image = `D:\golden\win2019.vhd`
	r.host.AddFile(spec.Image)
	if _, err := p.Create(ctx(t), spec); err != nil {
		t.Fatalf("Create: %v", err)
	}
	vm := r.host.VMs()[0]
	if vm.Generation != 1 || vm.SecureBoot != "" || !strings.HasSuffix(vm.Disks[0], spec.Name+".vhd") {
		t.Errorf("the VM is generation %d, secure boot %q, disk %s; want 1, none, a .vhd (a differencing disk has its parent's format)", vm.Generation, vm.SecureBoot, vm.Disks[0])
	}

	r = newRig(t, withBlock("  switch: "+lab+"\n  vhdxDir: '"+vhdxDir+"'\n  secureBootTemplate: 'off'\n"))
	p = r.open(t)
	if _, err := p.Create(ctx(t), r.spec(1)); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if vm := r.host.VMs()[0]; vm.Generation != 2 || vm.SecureBoot != "" {
		t.Errorf("with secureBootTemplate off: generation %d, secure boot %q; want 2 and off", vm.Generation, vm.SecureBoot)
	}
}

// The provider's methods may run at once: three Creates side by side make
// three VMs in one run's folder, each with its own ID, all listed, all
// deleted, and the run's folder goes with the last.
func TestConcurrentCreates(t *testing.T) {
	r := newRig(t)
	p := r.open(t)
	ids := make([]string, 3)
	errs := make(chan error, 3)
	for i := range ids {
		go func() {
			m, err := p.Create(ctx(t), r.spec(i+1))
			ids[i] = m.ID
			errs <- err
		}()
	}
	for range ids {
		if err := <-errs; err != nil {
			t.Fatalf("Create: %v", err)
		}
	}
	ms, err := p.List(ctx(t))
	if err != nil || len(ms) != 3 {
		t.Fatalf("List: %v, %+v; want 3 machines", err, ms)
	}
	for _, id := range ids {
		go func() { errs <- p.Delete(ctx(t), id) }()
	}
	for range ids {
		if err := <-errs; err != nil {
			t.Errorf("Delete: %v", err)
		}
	}
	if left := r.host.Paths(vhdxDir); len(left) != 0 {
		t.Errorf("after the Deletes the host has %v", left)
	}
}

// An ID that is not one of the provider's is refused before it reaches the
// host: a folder outside the run's machines above all.
func TestDeleteRefusesForeignIDs(t *testing.T) {
	r := newRig(t)
	p := r.open(t)
	for _, id := range []string{"dc01", `folder:run-7\..\..\golden`, `folder:run-7\dc01`, "0f8fad5b-d9cb-469f-a165-70867728950e' ; Remove-VM *"} {
		if err := p.Delete(ctx(t), id); err == nil || !strings.Contains(err.Error(), "is not a machine ID of this provider") {
			t.Errorf("Delete(%q): %v", id, err)
		}
	}
	if n := len(r.host.Cmdlets()); n != 0 {
		t.Errorf("the host ran %d cmdlets for IDs that are not the provider's", n)
	}
}

// A host whose WinRM does not answer fails Open on connection.endpoint,
// with the fix, before any machine is made.
func TestOpenHostUnreachable(t *testing.T) {
	r := newRig(t)
	r.srv.Close()
	_, err := vms.Open(ctx(t), r.file)
	// The fix says what to check.
	configtest.Refused(t, err, "connection.endpoint", "; check the host's name, that it is up, and that its WinRM listener answers")
	// A port nothing listens on refuses the connection, or, closed a moment
	// ago, resets it: remote says ErrUnreachable or ErrConnLost.
	if !errors.Is(err, remote.ErrUnreachable) && !errors.Is(err, remote.ErrConnLost) {
		t.Fatalf("Open of a host that does not answer: %v, want remote.ErrUnreachable or remote.ErrConnLost", err)
	}
}
