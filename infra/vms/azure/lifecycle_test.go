package azure

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/vms/lifecycle"
	"github.com/winconform/winconform/testing/lifecycletest"
	"github.com/winconform/winconform/testing/standin"
)

// The provider under the shared lifecycle, as `winconform vms up` and
// `down` drive it: up makes the VM file's two VMs in the stand-in Azure, in
// an existing subnet whose addresses are on this machine's loopback (the
// NICs get .4 and .5, Azure keeping a subnet's first four), readies each
// through the ladder against a WS-Management stand-in at the NIC's address
// (port, Identify, one command as the VM's administrator), writes the
// inventory and the serial log as each machine's console log; down deletes
// the machines and the run's group.
func TestLifecycleUpDown(t *testing.T) {
	const user, password = "winadmin", "Nightly-run-42!"
	guests, port := newGuests(t, user, password, "127.0.0.4", "127.0.0.5")
	c := stdCloud()
	subnet := "/subscriptions/" + testSub + "/resourceGroups/lab/providers/Microsoft.Network/virtualNetworks/lab/subnets/win"
	c.subnets[strings.ToLower(subnet)] = true
	c.subnetPrefix[strings.ToLower(subnet)] = netip.MustParsePrefix("127.0.0.0/24")
	blob := serveLog(t, "Windows Boot Manager\nSAC> id\n")
	c.serialLogURL = blob + "/serial.log?sv=2022-11-02&sig=s3cr3t"

	data := fmt.Sprintf(`provider: azure
image: %s
count: 2
machine:
  user: %s
  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}
  winrm: {port: %d}
azure:
  subscription: %s
  location: westeurope
  size: Standard_D2s_v3
  admin: {user: %s, password: {env: WINDOWS_ADMIN_PASSWORD}}
  network: {subnet: %s}
`, galleryVersion, user, port, testSub, user, subnet)
	env := func(k string) (string, bool) { return password, k == "WINDOWS_ADMIN_PASSWORD" }
	f, err := config.Parse[config.Machines](filepath.Join(t.TempDir(), "vms.yaml"), []byte(data), env)
	if err != nil {
		t.Fatal(err)
	}
	p, err := open(ctx(t), f, *f.Block.(*Settings), c.deps())
	if err != nil {
		t.Fatal(err)
	}
	cx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var log strings.Builder
	dir := t.TempDir()
	res, err := lifecycle.Up(cx, f, p, lifecycle.Options{RunID: "az-life", Dir: dir, Settle: 100 * time.Millisecond, Poll: 20 * time.Millisecond,
		ReadyTimeout: 20 * time.Second, Log: &log})
	if err != nil {
		t.Fatalf("Up: %v\n%s", err, log.String())
	}
	var addrs []string
	for _, m := range res.Inventory.Machines {
		addrs = append(addrs, m.Address)
	}
	slices.Sort(addrs)
	if !slices.Equal(addrs, []string{"127.0.0.4", "127.0.0.5"}) {
		t.Errorf("the inventory's addresses are %v, want the NICs' .4 and .5\n%s", addrs, log.String())
	}
	for _, g := range guests {
		if standin.Identifies(g) == 0 {
			t.Errorf("the guest at %s was never asked Identify", g.Host())
		}
	}
	for _, m := range res.Machines {
		data, err := os.ReadFile(filepath.Join(dir, lifecycle.ConsoleDir, m.Name+".log"))
		if err != nil || !strings.Contains(string(data), "SAC>") {
			t.Errorf("the console log of %s: %v\n%s", m.Name, err, data)
		}
	}
	if n := c.Count("winconform-az-life"); n["vm"] != 2 || n["vnet"] != 0 {
		t.Errorf("after up the run's group holds %v, want 2 VMs in the existing subnet", n)
	}
	if err := lifecycle.Down(cx, p, "az-life", lifecycle.DownOptions{Log: &log}); err != nil {
		t.Fatalf("Down: %v\n%s", err, log.String())
	}
	if _, ok := c.groups["winconform-az-life"]; ok {
		t.Errorf("after down the run's group is left: %v", c.Count("winconform-az-life"))
	}
	if strings.Contains(log.String(), password) || strings.Contains(log.String(), "s3cr3t") {
		t.Errorf("the log holds a secret:\n%s", log.String())
	}
}

// Runs never touch each other's machines, on the SDK's fakes
// (lifecycletest.Ownership): a second up of a live run's ID is refused
// before anything is made in its group, and its VMs still answer; a run
// that fails half way deletes its own VMs, by the resource IDs its Creates
// returned, and not another invocation's in its run's group.
func TestRunsNeverTouchEachOther(t *testing.T) {
	const user, password = "winadmin", "Nightly-run-42!"
	_, port := newGuests(t, user, password, "127.0.0.4", "127.0.0.5")
	c := stdCloud()
	subnet := "/subscriptions/" + testSub + "/resourceGroups/lab/providers/Microsoft.Network/virtualNetworks/lab/subnets/win"
	c.subnets[strings.ToLower(subnet)] = true
	c.subnetPrefix[strings.ToLower(subnet)] = netip.MustParsePrefix("127.0.0.0/24")
	data := fmt.Sprintf("provider: azure\nimage: %s\ncount: 2\nmachine:\n  user: %s\n  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}\n  winrm: {port: %d}\n"+
		"azure:\n  subscription: %s\n  location: westeurope\n  size: Standard_D2s_v3\n  admin: {user: %s, password: {env: WINDOWS_ADMIN_PASSWORD}}\n  network: {subnet: %s}\n",
		galleryVersion, user, port, testSub, user, subnet)
	env := func(k string) (string, bool) { return password, k == "WINDOWS_ADMIN_PASSWORD" }
	f, err := config.Parse[config.Machines](filepath.Join(t.TempDir(), "vms.yaml"), []byte(data), env)
	if err != nil {
		t.Fatal(err)
	}
	p, err := open(ctx(t), f, *f.Block.(*Settings), c.deps())
	if err != nil {
		t.Fatal(err)
	}
	lifecycletest.Ownership(t, lifecycletest.Rig{
		Provider: p,
		File:     func(*testing.T, string, int) *vms.File { return f },
		Options:  lifecycle.Options{Settle: 100 * time.Millisecond, Poll: 20 * time.Millisecond, ReadyTimeout: 20 * time.Second, CleanupTimeout: 20 * time.Second},
		Timeout:  2 * time.Minute,
	})
}

// newGuests starts a stand-in on each host (127.0.0.x), all on one port,
// accepting the VM's administrator.
func newGuests(t *testing.T, user, password string, hosts ...string) ([]*standin.Server, int) {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		first, err := standin.Start(standin.WithAddr(hosts[0]+":0"), standin.WithCredentials(user, password))
		if err != nil {
			t.Fatal(err)
		}
		servers := []*standin.Server{first}
		for _, h := range hosts[1:] {
			s, err := standin.Start(standin.WithAddr(net.JoinHostPort(h, strconv.Itoa(first.Port()))), standin.WithCredentials(user, password))
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
