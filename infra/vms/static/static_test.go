package static_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/vms/lifecycle"
	"github.com/winconform/winconform/infra/vms/static"
	"github.com/winconform/winconform/testing/configtest"
	"github.com/winconform/winconform/testing/lifecycletest"
	"github.com/winconform/winconform/testing/standin"
)

func env(k string) (string, bool) {
	if k == "WIN_PW" {
		return standin.DefaultPassword, true
	}
	return "", false
}

// write writes the files of a test's directory and returns it.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Today's inventory behind the interface: up climbs the ladder on each of
// its machines and hands the inventory itself on; down deletes nothing.
func TestStaticUpDown(t *testing.T) {
	srv := standin.New(t, standin.WithAddr("127.0.0.2:0"))
	dir := write(t, map[string]string{
		"machines.yaml": fmt.Sprintf(`defaults: {user: %s, passwordFrom: {env: WIN_PW}}
machines:
- {name: win-lab-a, address: 127.0.0.2, winrm: {port: %d}, labels: {zone: lab}}
`, standin.DefaultUser, srv.Port()),
		"vms.yaml": "provider: static\nstatic: {inventory: machines.yaml}\n",
	})
	f, err := config.Load[config.Machines](filepath.Join(dir, "vms.yaml"), env)
	if err != nil {
		t.Fatal(err)
	}
	p, err := vms.Open(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := lifecycle.Up(t.Context(), f, p, lifecycle.Options{RunID: "s1", Dir: t.TempDir(), Poll: 20 * time.Millisecond, ReadyTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.InventoryPath != filepath.Join(dir, "machines.yaml") || res.Inventory.Machines[0].Labels["zone"] != "lab" {
		t.Errorf("result %+v: want the inventory itself", res)
	}
	if standin.Identifies(srv) != 1 || len(srv.Calls()) != 1 {
		t.Errorf("the ladder did not reach the machine: %d Identify, %d commands", standin.Identifies(srv), len(srv.Calls()))
	}
	if err := lifecycle.Down(t.Context(), p, "s1", lifecycle.DownOptions{}); err != nil {
		t.Errorf("down: %v", err)
	}
}

// The lifecycle's log says what static does to a lab's machine: up lists
// it (it makes none) and down, by the run's state file as `vms down`
// goes, releases it (it deletes none); "created" and "deleted" are the
// words of the providers that make machines.
func TestStaticLogsListedReleased(t *testing.T) {
	srv := standin.New(t, standin.WithAddr("127.0.0.2:0"))
	dir := write(t, map[string]string{
		"machines.yaml": fmt.Sprintf("defaults: {user: %s, passwordFrom: {env: WIN_PW}}\nmachines:\n- {name: win-lab-a, address: 127.0.0.2, winrm: {port: %d}}\n", standin.DefaultUser, srv.Port()),
		"vms.yaml":      "provider: static\nstatic: {inventory: machines.yaml}\n",
	})
	f, err := config.Load[config.Machines](filepath.Join(dir, "vms.yaml"), env)
	if err != nil {
		t.Fatal(err)
	}
	p, err := vms.Open(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	runDir := t.TempDir()
	var log strings.Builder
	if _, err := lifecycle.Up(t.Context(), f, p, lifecycle.Options{RunID: "s2", Dir: runDir, Poll: 20 * time.Millisecond, ReadyTimeout: 5 * time.Second, Log: &log}); err != nil {
		t.Fatal(err)
	}
	st, path, err := lifecycle.LoadState(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := lifecycle.Down(t.Context(), p, "s2", lifecycle.DownOptions{State: st, StatePath: path, Dir: runDir, Log: &log}); err != nil {
		t.Fatalf("down: %v", err)
	}
	out := log.String()
	for _, want := range []string{"vms: win-lab-a: listed (win-lab-a)", "vms: win-lab-a: released (win-lab-a)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log has no %q:\n%s", want, out)
		}
	}
	for _, wrong := range []string{"created", "deleted"} {
		if strings.Contains(out, wrong) {
			t.Errorf("the log says %q of a machine static neither makes nor deletes:\n%s", wrong, out)
		}
	}
}

// An inventory's machines under two runs of one ID (lifecycletest.Ownership):
// the second up is refused by the run's state file before anything, and
// the machines still answer. (The provider lists nothing, makes nothing
// and deletes nothing: a second run from another directory is not its to
// tell.)
func TestRunsNeverTouchEachOther(t *testing.T) {
	srv := standin.New(t, standin.WithAddr("127.0.0.2:0"))
	dir := write(t, map[string]string{
		"machines.yaml": fmt.Sprintf("defaults: {user: %s, passwordFrom: {env: WIN_PW}}\nmachines:\n- {name: win-lab-a, address: 127.0.0.2, winrm: {port: %d}}\n", standin.DefaultUser, srv.Port()),
		"vms.yaml":      "provider: static\nstatic: {inventory: machines.yaml}\n",
	})
	f, err := config.Load[config.Machines](filepath.Join(dir, "vms.yaml"), env)
	if err != nil {
		t.Fatal(err)
	}
	p, err := vms.Open(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	lifecycletest.Ownership(t, lifecycletest.Rig{
		Provider: p,
		File:     func(*testing.T, string, int) *vms.File { return f },
		Options:  lifecycle.Options{Poll: 20 * time.Millisecond, ReadyTimeout: 5 * time.Second},
		Existing: true,
	})
}

// The static VM file refuses what makes machines, and checks the inventory
// as join does, before anything.
func TestStaticRefuses(t *testing.T) {
	for _, tc := range []struct{ name, vmFile, inventory, field, want string }{
		{"image", "provider: static\nimage: golden\nstatic: {inventory: machines.yaml}\n", "", "image", "not used"},
		{"count", "provider: static\ncount: 2\nstatic: {inventory: machines.yaml}\n", "", "count", "every machine of its inventory"},
		{"machine block", "provider: static\nmachine: {user: a}\nstatic: {inventory: machines.yaml}\n", "", "machine", "in the inventory file"},
		{"no inventory", "provider: static\n", "", "static.inventory", "is missing"},
		{"an endpoint", "provider: static\nconnection: {endpoint: x}\nstatic: {inventory: machines.yaml}\n", "", "connection.endpoint", "not used by static"},
		{"a bad inventory", "provider: static\nstatic: {inventory: machines.yaml}\n",
			"machines:\n- {name: win-a, address: 10.0.0.1, user: a, password: hunter2}\n", "static.inventory", "inline secret is refused"},
		{"a missing inventory", "provider: static\nstatic: {inventory: nowhere.yaml}\n", "", "static.inventory", "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := tc.inventory
			if inv == "" {
				inv = "machines:\n- {name: win-a, address: 10.0.0.1, user: a, passwordFrom: {env: WIN_PW}}\n"
			}
			dir := write(t, map[string]string{"vms.yaml": tc.vmFile, "machines.yaml": inv})
			_, err := config.Load[config.Machines](filepath.Join(dir, "vms.yaml"), env)
			configtest.Refused(t, err, tc.field, tc.want, "hunter2")
		})
	}
	_ = static.Name
}
