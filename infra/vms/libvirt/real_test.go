package libvirt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/vms/lifecycle"
	"github.com/winconform/winconform/testing/configtest"
	"github.com/winconform/winconform/testing/vmstest"
)

// TestOrphansAreListedAndDeleted: what a run leaves without a domain (one
// killed between making the overlay and the domain; a guest whose QEMU
// exited, which ends a transient domain) is still listed, with its run, and
// Delete removes it with its address.
func TestOrphansAreListedAndDeleted(t *testing.T) {
	p, disk := openStandin(t, standinSettings())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := "lv-orphan-" + suffix()
	t.Cleanup(func() { _ = lifecycle.Down(context.Background(), p, run, lifecycle.DownOptions{}) })
	golden, err := p.hostPath(ctx, disk)
	if err != nil {
		t.Fatal(err)
	}
	// A run killed after it held an address and made the overlay.
	addr, err := p.holdAddress(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vn := volumeName{runID: run, created: time.Now().UTC().Truncate(time.Second), uuid: newUUID(), name: "win-" + run + "-1", address: addr.String()}
	if err := p.createOverlay(ctx, vn, golden); err != nil {
		t.Fatal(err)
	}
	// A guest whose QEMU went away: its transient domain is gone.
	m2, err := p.Create(ctx, vms.Spec{Name: "win-" + run + "-2", RunID: run, Created: time.Now().UTC().Truncate(time.Second), Image: disk, CPUs: 1, MemoryMiB: 256})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := parseUUID(m2.ID)
	dom, err := p.lv.DomainLookupByUUID(u)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.lv.DomainDestroy(dom); err != nil {
		t.Fatal(err)
	}
	if _, err := p.lv.DomainLookupByUUID(u); !isLibvirt(err, golibvirt.ErrNoDomain) {
		t.Fatalf("the transient domain is still there after its QEMU went: %v", err)
	}
	ms := ofRun(t, p, run)
	if len(ms) != 2 {
		t.Fatalf("List has %v of run %s, want the two machines without a domain", ms, run)
	}
	for _, m := range ms {
		if m.Created.IsZero() || !strings.HasPrefix(m.Name, "win-"+run) {
			t.Errorf("List has %+v, want its name and creation time from the overlay", m)
		}
		if _, err := p.Addresses(ctx, m.ID); !errors.Is(err, vms.ErrNotFound) {
			t.Errorf("Addresses of %s without a domain: %v, want ErrNotFound", m.Name, err)
		}
		if err := p.Delete(ctx, m.ID); err != nil {
			t.Errorf("Delete(%s): %v", m.Name, err)
		}
	}
	assertNothingLeft(t, p, run)
}

// TestUpInterruptedLeavesNothing: an up interrupted (Ctrl-C) while its
// guests boot deletes them all, and nothing of the run is left.
func TestUpInterruptedLeavesNothing(t *testing.T) {
	p, disk := openStandin(t, standinSettings())
	f, vp := loadVMFile(t, writeVMFile(t, p, disk, 2))
	run := "lv-int-" + suffix()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) && len(ofRun(t, p, run)) < 2 {
			time.Sleep(100 * time.Millisecond)
		}
		cancel() // Ctrl-C
	}()
	var log bytes.Buffer
	_, err := lifecycle.Up(ctx, f, vp, lifecycle.Options{RunID: run, Dir: t.TempDir(), ReadyTimeout: readyTimeout, Settle: testSettle, CleanupTimeout: 2 * time.Minute, Log: &log})
	t.Logf("up:\n%s", log.String())
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("an interrupted up returned %v, want an error saying it was interrupted", err)
	}
	assertNothingLeft(t, p, run)
}

// muteWait is how long the mute image is given: its guest says why it
// cannot go on about 10 s after it starts under TCG here, but under load
// (20 and more on 2 cores) it had said nothing after 25 s.
const muteWait = time.Minute

// TestImageThatNeverAnswersWinRM: a golden image whose guest boots but
// whose WinRM never comes up (here: a disk without the stand-in) stops the
// ladder at a named rung, and the console log, kept in the run's
// directory, shows why.
func TestImageThatNeverAnswersWinRM(t *testing.T) {
	// Parallel, with the other tests of one run that sweep nothing
	// (Go runs them after every sequential test, so never beside
	// TestKilledRunIsSweptExactly's sweep): its minute of waiting for a
	// WinRM that never comes overlaps theirs.
	parallel(t)
	p, _ := openStandin(t, standinSettings())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	blank := filepath.Join(t.TempDir(), "blank.qcow2")
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", blank, "1M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v: %s", err, out)
	}
	if _, err := p.Import(ctx, blank, "blank-1m.qcow2"); err != nil {
		t.Fatal(err)
	}
	path := writeVMFile(t, p, "blank-1m.qcow2", 1)
	f, vp := loadVMFile(t, path)
	run := "lv-mute-" + suffix()
	dir := t.TempDir()
	_, err := lifecycle.Up(ctx, f, vp, lifecycle.Options{RunID: run, Dir: dir, ReadyTimeout: muteWait, Settle: testSettle, CleanupTimeout: 2 * time.Minute})
	var nr *lifecycle.NotReadyError
	if !errors.As(err, &nr) {
		t.Fatalf("up of a mute image returned %v, want a *lifecycle.NotReadyError", err)
	}
	if nr.Rung != lifecycle.RungTCP || nr.Address == "" || nr.ConsoleLog == "" {
		t.Errorf("the ladder stopped at rung %v (address %q, console %q), want the TCP rung at the machine's address, with its console log", nr.Rung, nr.Address, nr.ConsoleLog)
	}
	console, _ := os.ReadFile(nr.ConsoleLog)
	if !strings.Contains(string(console), "cannot unpack the stand-in from the disk") {
		t.Errorf("the kept console log does not say why:\n%s", console)
	}
	assertNothingLeft(t, p, run)
}

// TestOpenRefusesBeforeAnyMachine: settings naming what the host does not
// have fail Open (or Create, for the image) with the field and a fix, and
// make nothing.
func TestOpenRefusesBeforeAnyMachine(t *testing.T) {
	need(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := docker.New()
	if err != nil {
		t.Fatal(err)
	}
	plain := "winconform-vmtest-plain"
	_ = d.Run(ctx, "network", "rm", plain)
	if err := d.Run(ctx, "network", "create", plain); err != nil {
		t.Fatal(err)
	}
	defer d.Run(context.WithoutCancel(ctx), "network", "rm", plain)
	base := standinSettings()
	for _, c := range []struct {
		name  string
		edit  func(*Settings)
		field string
		says  string
	}{
		{"a Docker network without ip-range", func(s *Settings) { s.DockerNetwork = plain }, "libvirt.dockerNetwork", "no ip-range"},
		{"a Docker network that is not there", func(s *Settings) { s.DockerNetwork = "winconform-no-such-network" }, "libvirt.dockerNetwork", "cannot inspect"},
		{"a libvirt network that is not there", func(s *Settings) { s.DockerNetwork, s.Network = "", "winconform-no-such-network" }, "libvirt.network", "no network"},
		{"a kernel that is not there", func(s *Settings) { s.Kernel = "no-such.vmlinuz" }, "libvirt.kernel", "no volume"},
		{"a block that holds a container's range", func(s *Settings) { s.Addresses = secondBlock(testSubnet(t)).String() }, "libvirt.addresses", "overlaps"},
	} {
		s := base
		c.edit(&s)
		_, err := Open(ctx, "", s)
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Detail, c.says) {
			t.Errorf("%s: Open = %v, want a problem of %s saying %q", c.name, err, c.field, c.says)
		}
	}
	p, err := Open(ctx, "", base)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Create(ctx, vms.Spec{Name: "win-lv-noimage-1", RunID: "lv-noimage", Created: time.Now(), Image: "no-such-image.qcow2"})
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "image" {
		t.Errorf("Create from an image the pool does not have: %v, want a problem of image", err)
	}
	assertNothingLeft(t, p, "lv-noimage")

	// The golden image is checked at Open, as QEMU's user would see it:
	// a directory, and a file in a directory only root may enter, are
	// refused with the path, the reason and the fix (before: qemu-img's
	// error, or "Permission denied" from the domain's start).
	dir := openDir(t)
	private := filepath.Join(dir, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join(private, "golden.qcow2")
	if err := os.WriteFile(golden, []byte("QFI\xfb"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ image, says string }{
		{dir, "is a directory"},
		{golden, "cannot read " + golden + ": it may not enter " + private},
		{filepath.Join(dir, "absent.qcow2"), "does not exist"},
	} {
		err := p.CheckImage(ctx, c.image)
		configtest.Refused(t, err, "image", c.says)
		configtest.Refused(t, err, "image", "volume of pool")
	}
	if err := os.Chmod(private, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := p.CheckImage(ctx, golden); err != nil {
		t.Errorf("a golden image QEMU can read: %v", err)
	}
}

func testSubnet(t *testing.T) netip.Prefix {
	t.Helper()
	n, err := inspectDockerNetwork(context.Background(), testEnv.network)
	if err != nil {
		t.Fatal(err)
	}
	return n.Subnet
}

// TestConformanceLibvirtNetwork runs the contract on libvirt's default NAT
// network, whose DHCP gives the guest its address: Addresses reports the
// lease once the guest has one, and WinRM answers there.
func TestConformanceLibvirtNetwork(t *testing.T) {
	parallel(t) // see TestImageThatNeverAnswersWinRM
	need(t)
	stop := startNetwork(t, DefaultNetwork)
	defer stop()
	s := standinSettings()
	s.DockerNetwork, s.Network = "", DefaultNetwork
	p, disk := openStandin(t, s)
	vmstest.Conformance(t, p, vms.Spec{RunID: "conf-nat", Image: disk, CPUs: 1, MemoryMiB: 256})

	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	run := "lv-nat-" + suffix()
	m, err := p.Create(ctx, vms.Spec{Name: "win-" + run + "-1", RunID: run, Created: time.Now().UTC().Truncate(time.Second), Image: disk, CPUs: 1, MemoryMiB: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Delete(context.WithoutCancel(ctx), m.ID); err != nil {
			t.Error(err)
		}
		assertNothingLeft(t, p, run)
	}()
	var addr string
	for addr == "" {
		addrs, err := p.Addresses(ctx, m.ID)
		if err != nil {
			t.Fatalf("Addresses: %v", err)
		}
		if len(addrs) > 0 {
			addr = addrs[0]
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no DHCP lease for %s within %v", m.Name, readyTimeout)
		case <-time.After(500 * time.Millisecond):
		}
	}
	identify(ctx, t, m.Name, addr)
	if got := hostname(ctx, t, m.Name, addr); got != m.Name {
		t.Errorf("hostname on %s (%s) printed %q", m.Name, addr, got)
	}
}

// startNetwork starts the libvirt network name when it is defined but not
// active, and returns what stops it again.
func startNetwork(t *testing.T, name string) func() {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u, _ := urlParse(DefaultEndpoint)
	lv, err := connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	net, err := lv.NetworkLookupByName(name)
	if err != nil {
		lv.Disconnect()
		t.Skipf("libvirt has no network %s: %v", name, err)
	}
	if active, _ := lv.NetworkIsActive(net); active == 1 {
		lv.Disconnect()
		return func() {}
	}
	if err := lv.NetworkCreate(net); err != nil {
		lv.Disconnect()
		t.Fatalf("starting libvirt network %s: %v", name, err)
	}
	return func() {
		if err := lv.NetworkDestroy(net); err != nil {
			t.Errorf("stopping libvirt network %s: %v", name, err)
		}
		lv.Disconnect()
	}
}

func urlParse(s string) (*url.URL, error) { return url.Parse(s) }

// secondBlock is the second /28 of a subnet: inside Docker's range.
func secondBlock(p netip.Prefix) netip.Prefix {
	a := p.Addr()
	for range 16 {
		a = a.Next()
	}
	return netip.PrefixFrom(a, 28)
}

// TestStreamsAreWhole uploads volumes of a few sizes and downloads each
// many times: every transfer must move exactly the volume's bytes, within
// a bound. go-libvirt's stream handling races with libvirtd's
// (digitalocean/go-libvirt#241; see stream): before transfers were
// metered and made again, about one download in a hundred here returned at
// once with no byte and no error, or never returned (2 of 400 in the run
// that found it; a CI run's ConsoleLog waited 10 minutes).
func TestStreamsAreWhole(t *testing.T) {
	need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	p, err := Open(ctx, "", standinSettings())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer p.Close()
	p.idle = 2 * time.Second // a stall costs this, not streamIdle, per attempt
	const downloads = 150
	for _, size := range []int{1, 5000, 300000} {
		want := make([]byte, size)
		for i := range want {
			want[i] = byte('a' + i%26)
		}
		local := filepath.Join(t.TempDir(), "vol")
		if err := os.WriteFile(local, want, 0o644); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("streamtest-%d-%s", size, suffix())
		t.Cleanup(func() {
			_ = p.deleteVolume(context.Background(), name)
			_ = p.deleteVolume(context.Background(), name+".done")
		})
		for i := 0; i < 10; i++ { // an upload each time: no .done marker
			_ = p.deleteVolume(ctx, name+".done")
			if _, err := p.Import(ctx, local, name); err != nil {
				t.Fatalf("upload %d of %d bytes: %v", i, size, err)
			}
		}
		v, err := do(ctx, func() (golibvirt.StorageVol, error) { return p.lv.StorageVolLookupByName(p.pool, name) })
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < downloads; i++ {
			var got bytes.Buffer
			dctx, dcancel := context.WithTimeout(ctx, 30*time.Second)
			err := p.download(dctx, v, &got)
			dcancel()
			if err != nil {
				t.Fatalf("download %d of %d bytes: %v", i, size, err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("download %d of %d bytes returned %d bytes, not the volume's", i, size, got.Len())
			}
		}
	}
}

// TestCreateInterruptedAnywhereLeavesNothing times an uninterrupted Create,
// then cuts Create at 16 points spread over that time: each Create cut
// must leave nothing of its run (no lease, no overlay, no console log, no
// domain), and one that finished all the same is the caller's to delete.
// Before, a call Create gave up on when its context ended went on in
// libvirtd: an up interrupted while the overlay was being made left it
// behind, a machine no Create had returned (CI: TestUpInterruptedLeavesNothing,
// "not made by this invocation: left alone").
func TestCreateInterruptedAnywhereLeavesNothing(t *testing.T) {
	p, disk := openStandin(t, standinSettings())
	create := func(ctx context.Context, run string) (vms.Machine, error) {
		return p.Create(ctx, vms.Spec{Name: "win-" + run + "-1", RunID: run, Created: time.Now().UTC().Truncate(time.Second), Image: disk, CPUs: 1, MemoryMiB: 256})
	}
	remove := func(run string, m vms.Machine) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Delete(ctx, m.ID); err != nil {
			t.Error(err)
		}
		assertNothingLeft(t, p, run)
	}
	run := "lv-cutfull-" + suffix()
	start := time.Now()
	m, err := create(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	whole := time.Since(start)
	remove(run, m)
	const points = 16
	for i := range points {
		delay := whole * time.Duration(i) / points
		run := fmt.Sprintf("lv-cut%d-%s", i, suffix())
		ctx, cancel := context.WithCancel(context.Background())
		cut := time.AfterFunc(delay, cancel)
		m, err := create(ctx, run)
		cut.Stop()
		cancel()
		if err == nil {
			remove(run, m) // finished before the cut
			continue
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Create cut after %s: %v, want the cut", delay, err)
		}
		assertNothingLeft(t, p, run)
		if t.Failed() {
			t.Fatalf("Create cut after %s of its %s left the above", delay, whole)
		}
	}
}
