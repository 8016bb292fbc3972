package hyperv_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/vms/lifecycle"
	"github.com/winconform/winconform/testing/hypervhost"
	"github.com/winconform/winconform/testing/lifecycletest"
	"github.com/winconform/winconform/testing/standin"
)

// The provider under the shared lifecycle, as `winconform vms up` and
// `down` drive it: up makes the VM file's two VMs on the Hyper-V host and
// readies each through the ladder (KVP reports nothing while the guest
// boots, then its link-local addresses, then its lease; WinRM's port;
// Identify; one command, each against the guest's WinRM, a stand-in on the
// lease), writes the inventory of their leases and the host's record of
// each as its console log; down deletes the VMs and their disks.
func TestLifecycleUpDown(t *testing.T) {
	guests, port := newGuests(t, "127.0.0.2", "127.0.0.3")
	r := newRig(t,
		withHost(hypervhost.Config{Boot: 100 * time.Millisecond, DHCP: 300 * time.Millisecond, Leases: []string{"127.0.0.2", "127.0.0.3"}}),
		withMachine(fmt.Sprintf("  user: %s\n  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}\n  winrm: {port: %d}\n", standin.DefaultUser, port)))
	p := r.open(t)
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var log strings.Builder
	dir := t.TempDir()
	res, err := lifecycle.Up(c, r.file, p, lifecycle.Options{RunID: "hv-life", Dir: dir, Settle: 150 * time.Millisecond, Poll: 20 * time.Millisecond,
		ReadyTimeout: 20 * time.Second, Log: &log})
	if err != nil {
		t.Fatalf("Up: %v\n%s", err, log.String())
	}
	var addrs []string
	for _, m := range res.Inventory.Machines {
		addrs = append(addrs, m.Address)
	}
	slices.Sort(addrs)
	if !slices.Equal(addrs, []string{"127.0.0.2", "127.0.0.3"}) {
		t.Errorf("the inventory's addresses are %v, want the two leases (never a 169.254 one)\n%s", addrs, log.String())
	}
	for _, g := range guests {
		if standin.Identifies(g) == 0 {
			t.Errorf("the guest at %s was never asked Identify", g.Host())
		}
	}
	for _, m := range res.Machines {
		data, err := os.ReadFile(filepath.Join(dir, lifecycle.ConsoleDir, m.Name+".log"))
		if err != nil || !strings.Contains(string(data), "Hyper-V keeps no console log") || !strings.Contains(string(data), "Heartbeat: OK") {
			t.Errorf("the console log of %s: %v\n%s", m.Name, err, data)
		}
	}
	if len(r.host.VMs()) != 2 {
		t.Errorf("the host has %d VMs after up, want 2", len(r.host.VMs()))
	}
	if err := lifecycle.Down(c, p, "hv-life", lifecycle.DownOptions{Log: &log}); err != nil {
		t.Fatalf("Down: %v\n%s", err, log.String())
	}
	if vs, left := r.host.VMs(), r.host.Paths(vhdxDir); len(vs) != 0 || len(left) != 0 {
		t.Errorf("after down the host has VMs %+v and files %v", vs, left)
	}
}

// Runs never touch each other's machines, on the Hyper-V host model
// (lifecycletest.Ownership): a second up of a live run's ID is refused
// before any VM is made, and its VMs still answer; a run that fails half
// way deletes its own VMs, by the IDs its Creates returned, and not another
// invocation's of its run ID.
func TestRunsNeverTouchEachOther(t *testing.T) {
	_, port := newGuests(t, "127.0.0.2", "127.0.0.3")
	r := newRig(t,
		withHost(hypervhost.Config{Boot: 100 * time.Millisecond, DHCP: 300 * time.Millisecond, Leases: []string{"127.0.0.2", "127.0.0.3"}}),
		withMachine(fmt.Sprintf("  user: %s\n  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}\n  winrm: {port: %d}\n", standin.DefaultUser, port)))
	p := r.open(t)
	lifecycletest.Ownership(t, lifecycletest.Rig{
		Provider: p,
		File:     func(*testing.T, string, int) *vms.File { return r.file },
		Options:  lifecycle.Options{Settle: 150 * time.Millisecond, Poll: 20 * time.Millisecond, ReadyTimeout: 20 * time.Second, CleanupTimeout: 20 * time.Second},
		Timeout:  2 * time.Minute,
	})
	if vs := r.host.VMs(); len(vs) != 0 {
		t.Errorf("the host has VMs %+v after the runs", vs)
	}
}

// newGuests starts a stand-in on each host (127.0.0.x), all on one port, as
// VMs on a network each have their address and WinRM on the same port.
func newGuests(t *testing.T, hosts ...string) ([]*standin.Server, int) {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		first, err := standin.Start(standin.WithAddr(hosts[0] + ":0"))
		if err != nil {
			t.Fatal(err)
		}
		servers := []*standin.Server{first}
		for _, h := range hosts[1:] {
			s, err := standin.Start(standin.WithAddr(net.JoinHostPort(h, strconv.Itoa(first.Port()))))
			if err != nil {
				break
			}
			servers = append(servers, s)
		}
		if len(servers) == len(hosts) {
			for _, s := range servers {
				t.Cleanup(s.Close)
			}
			return servers, first.Port()
		}
		for _, s := range servers {
			s.Close()
		}
	}
	t.Fatal("no port free on every host")
	return nil, 0
}
