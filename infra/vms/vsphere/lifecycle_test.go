package vsphere_test

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/find"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/vms/lifecycle"
	"github.com/winconform/winconform/testing/lifecycletest"
	"github.com/winconform/winconform/testing/standin"
)

// The shared lifecycle over the vsphere provider: up clones two machines,
// whose VMware Tools report first nothing, then the link-local address
// Windows has before DHCP answers, then the leased one, where WinRM
// answers (the WS-Management stand-in, one per machine on its own
// loopback address); up settles each address, climbs the ladder and
// writes their inventory; down deletes them, and nothing of the run is
// left in the vCenter.
func TestLifecycleUpAndDown(t *testing.T) {
	withVCenter(t, func(v *vcenter) {
		hosts := []string{"127.0.0.2", "127.0.0.3"}
		port := standins(t, hosts)
		src := strings.Replace(v.file(stdBlock), "  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}\n",
			fmt.Sprintf("  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}\n  winrm: {port: %d}\n", port), 1)
		f, err := config.Parse[config.Machines]("vms.yaml", []byte(src), func(k string) (string, bool) {
			if k == "WINDOWS_ADMIN_PASSWORD" {
				return standin.DefaultPassword, true
			}
			return env(k)
		})
		if err != nil {
			t.Fatal(err)
		}
		p, err := vms.Open(v.ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()

		// VMware Tools in each clone, as the machine boots.
		stop := make(chan struct{})
		var tools sync.WaitGroup
		for i, host := range hosts {
			tools.Add(1)
			go func() {
				defer tools.Done()
				v.toolsReport(stop, vms.MachineName("win", "e2e", i+1),
					[]string{fmt.Sprintf("169.254.10.%d", i+2)}, []string{host})
			}()
		}
		defer func() { close(stop); tools.Wait() }()

		var log strings.Builder
		var mu sync.Mutex
		o := lifecycle.Options{RunID: "e2e", Dir: t.TempDir(), Settle: 150 * time.Millisecond, Poll: 20 * time.Millisecond,
			ReadyTimeout: 20 * time.Second, CleanupTimeout: 20 * time.Second, Log: writerFunc(func(b []byte) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				return log.Write(b)
			})}
		start := time.Now()
		res, err := lifecycle.Up(v.ctx, f, p, o)
		if err != nil {
			t.Fatalf("Up: %v\n%s", err, log.String())
		}
		if took := time.Since(start); took < 400*time.Millisecond+o.Settle {
			t.Errorf("Up took %s: the leased addresses came at 400ms and had to stay %s", took, o.Settle)
		}
		got := map[string]string{}
		for _, m := range res.Inventory.Machines {
			got[m.Name] = m.Address
		}
		if len(got) != 2 || got["win-e2e-1"] != "127.0.0.2" || got["win-e2e-2"] != "127.0.0.3" {
			t.Errorf("inventory %v, want win-e2e-1 at 127.0.0.2 and win-e2e-2 at 127.0.0.3", got)
		}
		if err := lifecycle.Down(v.ctx, p, "e2e", lifecycle.DownOptions{}); err != nil {
			t.Fatalf("Down: %v", err)
		}
		for name := range got {
			if v.exists(name) {
				t.Errorf("%s is left after down", name)
			}
		}
	})
}

// Runs never touch each other's machines, on vcsim (lifecycletest.Ownership):
// a second up of a live run's ID is refused before any clone, and its
// machines still answer; a run that fails half way deletes its own clones,
// by the references its Creates returned, and not another invocation's of
// its run ID.
func TestRunsNeverTouchEachOther(t *testing.T) {
	withVCenter(t, func(v *vcenter) {
		hosts := []string{"127.0.0.2", "127.0.0.3"}
		port := standins(t, hosts)
		src := strings.Replace(v.file(stdBlock), "  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}\n",
			fmt.Sprintf("  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}\n  winrm: {port: %d}\n", port), 1)
		f, err := config.Parse[config.Machines]("vms.yaml", []byte(src), func(k string) (string, bool) {
			if k == "WINDOWS_ADMIN_PASSWORD" {
				return standin.DefaultPassword, true
			}
			return env(k)
		})
		if err != nil {
			t.Fatal(err)
		}
		p, err := vms.Open(v.ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		stop := make(chan struct{})
		var tools sync.WaitGroup
		defer func() { close(stop); tools.Wait() }()
		first := true
		lifecycletest.Ownership(t, lifecycletest.Rig{
			Provider: p,
			File: func(_ *testing.T, runID string, count int) *vms.File {
				if first { // the first run's clones report the stand-ins' addresses
					first = false
					for i, host := range hosts[:count] {
						tools.Add(1)
						go func() {
							defer tools.Done()
							v.toolsReport(stop, vms.MachineName("win", runID, i+1), []string{fmt.Sprintf("169.254.10.%d", i+2)}, []string{host})
						}()
					}
				}
				return f
			},
			Options: lifecycle.Options{Settle: 150 * time.Millisecond, Poll: 20 * time.Millisecond, ReadyTimeout: 20 * time.Second, CleanupTimeout: 20 * time.Second},
			Timeout: 2 * time.Minute,
		})
	})
}

// toolsReport plays what VMware Tools reports in the VM called name once
// the vCenter has it: nothing, then the addresses of before DHCP, then
// those after.
func (v *vcenter) toolsReport(stop <-chan struct{}, name string, before, after []string) {
	var id string
	for id == "" {
		select {
		case <-stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
		vm, err := find.NewFinder(v.c).VirtualMachine(v.ctx, "/DC0/vm/"+name)
		if err == nil {
			id = vm.Reference().Value
		}
	}
	for _, addrs := range [][]string{before, after} {
		select {
		case <-stop:
			return
		case <-time.After(200 * time.Millisecond):
		}
		v.guest(id, addrs[0], addrs...)
	}
}

// standins starts a WS-Management stand-in on each host, all on one port,
// and returns the port.
func standins(t *testing.T, hosts []string) int {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		first, err := standin.Start(standin.WithAddr(hosts[0] + ":0"))
		if err != nil {
			t.Fatal(err)
		}
		started := []*standin.Server{first}
		for _, h := range hosts[1:] {
			s, err := standin.Start(standin.WithAddr(net.JoinHostPort(h, strconv.Itoa(first.Port()))))
			if err != nil {
				break
			}
			started = append(started, s)
		}
		if len(started) == len(hosts) {
			for _, s := range started {
				t.Cleanup(s.Close)
			}
			return first.Port()
		}
		for _, s := range started {
			s.Close()
		}
	}
	t.Fatal("no port free on every host")
	return 0
}

type writerFunc func([]byte) (int, error)

func (w writerFunc) Write(b []byte) (int, error) { return w(b) }
