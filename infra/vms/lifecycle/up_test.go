package lifecycle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/testing/standin"
	"github.com/winconform/winconform/testing/vmstest"
)

// Two machines whose addresses start link-local, as Windows's own
// (169.254.0.0/16, APIPA) while DHCP has not answered, then settle; one
// of them changes address once more before it settles (sysprep's
// specialize pass and the first logon renew the lease: CAPZ and Packer
// users meet the VM at one address and WinRM at another). Up waits for
// each to keep its address for the settle time, then climbs TCP, the
// unauthenticated Identify and one authenticated command, and writes an
// inventory that the inventory package loads.
func TestUpReadiesThroughTheLadder(t *testing.T) {
	lab := newLab(t, "127.0.0.2", "127.0.0.3")
	fake := vmstest.New()
	fake.Console = func(name string) string { return "console of " + name + ": password " + standin.DefaultPassword + "\n" }
	fake.Plan = plan{
		1: {{0, []string{"169.254.7.9"}}, {200 * time.Millisecond, []string{"169.254.7.9", "127.0.0.2"}}},
		2: {{0, nil}, {50 * time.Millisecond, []string{"fe80::1", "127.0.0.9"}}, {250 * time.Millisecond, []string{"127.0.0.3"}}},
	}.of()
	o, log := testOptions(t, "r1")
	start := time.Now()
	res, err := Up(t.Context(), lab.vmFile(2), fake, o)
	if err != nil {
		t.Fatalf("Up: %v\n%s", err, log)
	}
	if took := time.Since(start); took < 250*time.Millisecond+testSettle {
		t.Errorf("Up took %v: machine 2 settled at 250ms and needs %v more", took, testSettle)
	}
	inv, err := config.Parse[config.Inventory](res.InventoryPath, mustRead(t, res.InventoryPath), func(string) (string, bool) { return standin.DefaultPassword, true })
	if err != nil {
		t.Fatalf("the inventory written: %v", err)
	}
	got := map[string]string{}
	for _, m := range inv.Machines {
		got[m.Name] = m.Address
	}
	if got["win-r1-1"] != "127.0.0.2" || got["win-r1-2"] != "127.0.0.3" || len(got) != 2 {
		t.Errorf("inventory machines %v, want win-r1-1 at 127.0.0.2 and win-r1-2 at 127.0.0.3", got)
	}
	for host, s := range lab.hosts {
		if standin.Identifies(s) != 1 || len(s.Calls()) != 1 {
			t.Errorf("%s: %d Identify, %d commands, want one of each", host, standin.Identifies(s), len(s.Calls()))
		}
		if len(s.OpenShells()) != 0 {
			t.Errorf("%s: shells left open: %v", host, s.OpenShells())
		}
	}
	st, _, err := LoadState(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Phase != PhaseReady || st.RunID != "r1" || len(st.IDs()) != 2 || !st.Machines[0].Ready || st.Inventory != res.InventoryPath {
		t.Errorf("state %+v", st)
	}
	console := string(mustRead(t, filepath.Join(o.Dir, ConsoleDir, "win-r1-1.log")))
	if !strings.Contains(console, "console of win-r1-1") || strings.Contains(console, standin.DefaultPassword) {
		t.Errorf("console log %q: want the console, the password redacted", console)
	}
	if !strings.Contains(log.String(), "vms: win-r1-1: created (") {
		t.Errorf("up of a provider that makes machines does not say it created them:\n%s", log)
	}
	if !strings.Contains(log.String(), "win-r1-2: its address changed") && !strings.Contains(log.String(), "address 127.0.0.3") {
		t.Errorf("log:\n%s", log)
	}
	if len(left(t, fake)) != 2 {
		t.Errorf("the ready machines are gone: %v", left(t, fake))
	}
	// The spec the provider got.
	sp, _ := fake.Spec(res.Machines[0].ID)
	if sp.Image != "golden" || sp.CPUs != config.DefaultCPUs || sp.MemoryMiB != config.DefaultMemoryMiB || sp.RunID != "r1" || sp.Tags()[vms.TagRun] != "r1" {
		t.Errorf("spec %+v", sp)
	}
}

// A machine whose address changes after the ladder got past the first
// rung goes back to it (Windows renews its lease during sysprep): the
// address in the inventory is the last one.
func TestLadderStartsAgainWhenTheAddressChanges(t *testing.T) {
	lab := newLab(t, "127.0.0.2")
	lab.mute("127.0.0.4") // the first address accepts, but never answers WinRM
	fake := vmstest.New()
	fake.Plan = plan{1: {{0, []string{"127.0.0.4"}}, {600 * time.Millisecond, []string{"127.0.0.2"}}}}.of()
	o, log := testOptions(t, "r2")
	res, err := Up(t.Context(), lab.vmFile(1), fake, o)
	if err != nil {
		t.Fatalf("Up: %v\n%s", err, log)
	}
	if a := res.Inventory.Machines[0].Address; a != "127.0.0.2" {
		t.Errorf("address %s, want 127.0.0.2", a)
	}
	if !strings.Contains(log.String(), "its address changed from 127.0.0.4") {
		t.Errorf("log does not say the address changed:\n%s", log)
	}
}

// An image that never answers WinRM (nothing listens on the port): Up
// fails naming the machine, the rung it stopped on (tcp) and the console
// log, which it kept; the machine is deleted, and the state file says so.
func TestUpImageNeverAnswersWinRM(t *testing.T) {
	lab := newLab(t, "127.0.0.2")
	fake := vmstest.New()
	// The unattend file echoes the administrator password: the log keeps
	// the console, not the password (nor the provider's credentials).
	fake.Console = func(name string) string {
		return "Windows Boot Manager: 0xc000000e\nunattend: AdministratorPassword=" + standin.DefaultPassword + "\n"
	}
	fake.Plan = plan{1: {{0, []string{"127.0.0.5"}}}}.of()
	o, log := testOptions(t, "r3")
	o.ReadyTimeout = time.Second
	_, err := Up(t.Context(), lab.vmFile(1), fake, o)
	var nr *NotReadyError
	if !errors.As(err, &nr) || nr.Rung != RungTCP || nr.Machine != "win-r3-1" || nr.Address != "127.0.0.5" {
		t.Fatalf("Up = %v, want a NotReadyError at rung tcp\n%s", err, log)
	}
	console := filepath.Join(o.Dir, ConsoleDir, "win-r3-1.log")
	for _, want := range []string{"rung 2 of 4, tcp", "WinRM's port", console, "refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if got := string(mustRead(t, console)); !strings.Contains(got, "0xc000000e") || strings.Contains(got, standin.DefaultPassword) {
		t.Errorf("console log %q: want the console, the password redacted", got)
	}
	if ms := left(t, fake); len(ms) != 0 {
		t.Errorf("machines left: %v", ms)
	}
	st, _, _ := LoadState(o.Dir)
	if st.Phase != PhaseDeleted || !st.Machines[0].Deleted || !strings.Contains(st.Machines[0].Error, "tcp") {
		t.Errorf("state %+v", st)
	}
}

// A port that accepts connections and never answers (a forwarded port
// before the guest's service is up: we measured one accepting 0.02 s after
// the VM process started): TCP is no readiness, the ladder stops at
// identify.
func TestUpPortOpenButNoIdentify(t *testing.T) {
	lab := newLab(t, "127.0.0.2")
	lab.mute("127.0.0.6")
	fake := vmstest.New()
	fake.Plan = plan{1: {{0, []string{"127.0.0.6"}}}}.of()
	o, log := testOptions(t, "r4")
	o.ReadyTimeout = 1500 * time.Millisecond
	start := time.Now()
	_, err := Up(t.Context(), lab.vmFile(1), fake, o)
	var nr *NotReadyError
	if !errors.As(err, &nr) || nr.Rung != RungIdentify {
		t.Fatalf("Up = %v, want a NotReadyError at rung identify\n%s", err, log)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Up took %v with a budget of %v", took, o.ReadyTimeout)
	}
	if !strings.Contains(err.Error(), "rung 3 of 4, identify") || len(left(t, fake)) != 0 {
		t.Errorf("Up = %v; machines left %v", err, left(t, fake))
	}
}

// A wrong password: WinRM answers Identify, and the login is refused for
// longer than the grace: the ladder stops at command, naming the account's
// fields.
func TestUpWrongPassword(t *testing.T) {
	lab := newLab(t, "127.0.0.2")
	fake := vmstest.New()
	fake.Plan = plan{1: {{0, []string{"127.0.0.2"}}}}.of()
	o, log := testOptions(t, "r5")
	o.authGrace = 200 * time.Millisecond
	_, err := Up(t.Context(), lab.vmFileWith(1, "not-the-password"), fake, o)
	var nr *NotReadyError
	if !errors.As(err, &nr) || nr.Rung != RungCommand || !strings.Contains(err.Error(), "machine.passwordFrom") {
		t.Fatalf("Up = %v, want a NotReadyError at rung command naming machine.passwordFrom\n%s", err, log)
	}
	if strings.Contains(err.Error(), "not-the-password") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// --keep-on-failure keeps the machine that failed and deletes the others.
func TestUpKeepOnFailure(t *testing.T) {
	lab := newLab(t, "127.0.0.2")
	fake := vmstest.New()
	fake.Plan = plan{1: {{0, []string{"127.0.0.2"}}}, 2: {{0, []string{"127.0.0.7"}}}}.of()
	o, log := testOptions(t, "r6")
	o.ReadyTimeout = time.Second
	o.KeepOnFailure = true
	_, err := Up(t.Context(), lab.vmFile(2), fake, o)
	if err == nil {
		t.Fatal("Up succeeded with a machine that never answers")
	}
	ms := left(t, fake)
	if len(ms) != 1 || ms[0].Name != "win-r6-2" {
		t.Errorf("machines left %v, want the failed win-r6-2 only\n%s", ms, log)
	}
	st, _, _ := LoadState(o.Dir)
	if st.Phase != PhaseKept || !st.Machines[1].Kept || !st.Machines[0].Deleted {
		t.Errorf("state %+v", st)
	}
	if !strings.Contains(log.String(), "down --run-id r6") {
		t.Errorf("the log does not say how to delete the kept machine:\n%s", log)
	}
}

// Ctrl-C in the middle of up: the creates in flight stop, the run deletes
// every machine it made (those whose Create had not returned too: the
// provider tagged them), and fails saying it was interrupted.
func TestUpInterruptedTearsDown(t *testing.T) {
	lab := newLab(t, "127.0.0.2")
	fake := vmstest.New()
	fake.CreateDelay = 30 * time.Second // the clone is slow
	fake.Plan = plan{1: {{0, []string{"127.0.0.2"}}}}.of()
	o, log := testOptions(t, "r7")
	o.Parallel = 2
	ctx, cancel := context.WithCancelCause(t.Context())
	go func() {
		for fake.Creates() < 2 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel(errors.New("interrupt"))
	}()
	start := time.Now()
	_, err := Up(ctx, lab.vmFile(3), fake, o)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("Up = %v, want interrupted\n%s", err, log)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("the interrupt took %v", time.Since(start))
	}
	if ms := left(t, fake); len(ms) != 0 {
		t.Errorf("machines left after the interrupt: %v", ms)
	}
	if fake.Creates() != 2 || len(fake.Deletes()) != 2 {
		t.Errorf("%d creates, deletes %v: want the two in flight made and deleted, the third never started", fake.Creates(), fake.Deletes())
	}
}

// A machine that Delete reports gone but that is still there (a resource
// group stuck deleting) fails the run: nothing may be left behind.
func TestUpFailsWhenAMachineIsLeftBehind(t *testing.T) {
	lab := newLab(t, "127.0.0.2")
	fake := vmstest.New()
	fake.Plan = plan{1: {{0, []string{"127.0.0.8"}}}}.of()
	fake.Stuck = func(string) bool { return true }
	o, _ := testOptions(t, "r8")
	o.ReadyTimeout = 500 * time.Millisecond
	_, err := Up(t.Context(), lab.vmFile(1), fake, o)
	if !errors.Is(err, ErrLeftBehind) || !strings.Contains(err.Error(), "win-r8-1") || !strings.Contains(err.Error(), "vms down --run-id r8") {
		t.Fatalf("Up = %v, want ErrLeftBehind naming win-r8-1 and the fix", err)
	}
	st, _, _ := LoadState(o.Dir)
	if st.Phase != PhaseFailed {
		t.Errorf("phase %s", st.Phase)
	}
}

// A failed Create fails the run and deletes the machines made.
func TestUpCreateFails(t *testing.T) {
	lab := newLab(t, "127.0.0.2")
	fake := vmstest.New()
	fake.Plan = plan{1: {{0, []string{"127.0.0.2"}}}}.of()
	fake.CreateDelay = 100 * time.Millisecond
	fake.CreateErr = func(s vms.Spec) error {
		if strings.HasSuffix(s.Name, "-2") {
			return errors.New("the template's snapshot does not exist")
		}
		return nil
	}
	o, _ := testOptions(t, "r9")
	_, err := Up(t.Context(), lab.vmFile(2), fake, o)
	if err == nil || !strings.Contains(err.Error(), "creating machine win-r9-2: the template's snapshot does not exist") {
		t.Fatalf("Up = %v", err)
	}
	if ms := left(t, fake); len(ms) != 0 {
		t.Errorf("machines left: %v", ms)
	}
}

// A crashed run: its state file is written before the first Create
// returns, so that another process can tear the run down from it, and
// down finds by its tag the machine whose Create never returned; sweep
// finds it too.
func TestCrashedRunIsTornDownFromItsStateFile(t *testing.T) {
	lab := newLab(t, "127.0.0.2")
	for _, how := range []string{"down", "sweep"} {
		t.Run(how, func(t *testing.T) {
			fake := vmstest.New()
			fake.CreateDelay = time.Hour // the run "crashes" while its Create hangs
			o, _ := testOptions(t, "crashed")
			upCtx, stopUp := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = Up(upCtx, lab.vmFile(1), fake, o)
			}()
			defer func() { stopUp(); wg.Wait() }()
			for fake.Creates() < 1 {
				time.Sleep(5 * time.Millisecond)
			}
			// What another process finds: the state file, naming the run
			// and the machine, with no provider ID yet.
			st, path, err := LoadState(o.Dir)
			if err != nil {
				t.Fatalf("no state file while the first Create runs: %v", err)
			}
			if st.RunID != "crashed" || len(st.Machines) != 1 || st.Machines[0].Name != "win-crashed-1" || st.Machines[0].ID != "" {
				t.Fatalf("state %+v", st)
			}
			// Another run's machine, which must stay.
			other := fake.Put("win-other-1", "other", time.Now(), false)
			switch how {
			case "down":
				err = Down(t.Context(), fake, st.RunID, DownOptions{State: st, StatePath: path})
			case "sweep":
				_, err = Sweep(t.Context(), fake, 0, time.Now().Add(time.Second), DownOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			ms := left(t, fake)
			wantLeft := 1
			if how == "sweep" {
				wantLeft = 0 // sweep --older-than 0 takes every run's machines
			}
			if len(ms) != wantLeft || (wantLeft == 1 && ms[0].ID != other.ID) {
				t.Errorf("%s left %v", how, ms)
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A run ID is free again once its run ended with every machine deleted:
// by down (which retires the state file), or by up's own teardown after a
// failure (phase deleted, which the next up retires). A run that kept
// machines, or is ready, keeps its ID.
func TestRunIDFreedOnlyWhenItsMachinesAreGone(t *testing.T) {
	lab := newLab(t, "127.0.0.2")
	fake := vmstest.New()
	fake.Plan = plan{1: {{0, []string{"127.0.0.2"}}}}.of()
	o, log := testOptions(t, "again")
	if _, err := Up(t.Context(), lab.vmFile(1), fake, o); err != nil {
		t.Fatalf("Up: %v\n%s", err, log)
	}
	if _, err := Up(t.Context(), lab.vmFile(1), fake, o); !errors.Is(err, ErrRunInUse) || !strings.Contains(err.Error(), "run again is ready") {
		t.Fatalf("a second up of a ready run: %v", err)
	}
	st, path, _ := LoadState(o.Dir)
	if err := Down(t.Context(), fake, "again", DownOptions{State: st, StatePath: path}); err != nil {
		t.Fatal(err)
	}
	if _, err := Up(t.Context(), lab.vmFile(1), fake, o); err != nil {
		t.Fatalf("up after down: %v", err)
	}
	st, path, _ = LoadState(o.Dir)
	if err := Down(t.Context(), fake, "again", DownOptions{State: st, StatePath: path}); err != nil {
		t.Fatal(err)
	}
	// A failed up tears its machines down (phase deleted): the next up of
	// the ID goes ahead.
	fake.CreateErr = func(vms.Spec) error { return errors.New("no capacity") }
	if _, err := Up(t.Context(), lab.vmFile(1), fake, o); err == nil {
		t.Fatal("an up whose Create fails succeeded")
	}
	fake.CreateErr = nil
	if _, err := Up(t.Context(), lab.vmFile(1), fake, o); err != nil {
		t.Fatalf("up after a failed up of the same ID: %v", err)
	}
	st, path, _ = LoadState(o.Dir)
	_ = Down(t.Context(), fake, "again", DownOptions{State: st, StatePath: path})
}
