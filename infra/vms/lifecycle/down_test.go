package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/testing/vmstest"
)

// sweep --older-than deletes every tagged machine made before the cutoff,
// of any run, but those tagged keep, and leaves the younger ones.
func TestSweep(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	fake := vmstest.New()
	old1 := fake.Put("win-a-1", "a", now.Add(-48*time.Hour), false)
	old2 := fake.Put("win-a-2", "a", now.Add(-47*time.Hour), false)
	kept := fake.Put("win-b-1", "b", now.Add(-72*time.Hour), true)
	young := fake.Put("win-c-1", "c", now.Add(-time.Hour), false)
	untimed := fake.Put("win-d-1", "d", time.Time{}, false)
	var log bytes.Buffer
	res, err := Sweep(t.Context(), fake, 24*time.Hour, now, DownOptions{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(ms []vms.Machine) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		slices.Sort(out)
		return out
	}
	want := []string{old1.ID, old2.ID, untimed.ID}
	slices.Sort(want)
	if got := ids(res.Deleted); !slices.Equal(got, want) {
		t.Errorf("deleted %v, want %v", got, want)
	}
	if got := ids(left(t, fake)); !slices.Equal(got, []string{kept.ID, young.ID}) {
		t.Errorf("left %v, want the kept %s and the young %s", got, kept.ID, young.ID)
	}
	if len(res.Kept) != 1 || len(res.Young) != 1 || !strings.Contains(log.String(), "winconform-keep=true, left") {
		t.Errorf("result %+v\n%s", res, log.String())
	}
	if _, err := Sweep(t.Context(), fake, -time.Hour, now, DownOptions{}); err == nil {
		t.Error("a negative --older-than was taken")
	}
}

// A run still going (its heartbeat renewed) keeps its old machines; a
// dry run deletes nothing and lists what a sweep would.
func TestSweepLiveAndDryRun(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	fake := vmstest.New()
	dead := fake.Put("win-a-1", "a", now.Add(-48*time.Hour), false)
	going := fake.Put("win-b-1", "b", now.Add(-48*time.Hour), false)
	live := func(run string) bool { return run == "b" }
	var log bytes.Buffer
	res, err := Sweep(t.Context(), fake, time.Hour, now, DownOptions{Live: live, DryRun: true, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) != 1 || res.Deleted[0].ID != dead.ID || len(res.Live) != 1 || res.Live[0].ID != going.ID {
		t.Errorf("dry run: %+v", res)
	}
	if got := left(t, fake); len(got) != 2 || !strings.Contains(log.String(), "would be deleted") {
		t.Errorf("a dry run deleted: %v\n%s", got, log.String())
	}
	res, err = Sweep(t.Context(), fake, time.Hour, now, DownOptions{Live: live})
	if err != nil || len(res.Deleted) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if got := left(t, fake); len(got) != 1 || got[0].ID != going.ID {
		t.Errorf("left %v, want the live run's %s", got, going.ID)
	}
}

// down by run ID deletes that run's machines and no other's; a second
// down finds nothing and succeeds.
func TestDownByRunID(t *testing.T) {
	fake := vmstest.New()
	fake.Put("win-x-1", "x", time.Now(), false)
	fake.Put("win-x-2", "x", time.Now(), true) // keep is for sweep: down deletes the run
	other := fake.Put("win-y-1", "y", time.Now(), false)
	var log bytes.Buffer
	for i := 0; i < 2; i++ {
		if err := Down(t.Context(), fake, "x", DownOptions{Log: &log}); err != nil {
			t.Fatalf("down #%d: %v", i+1, err)
		}
	}
	if !strings.Contains(log.String(), "vms: win-x-1: deleted (") {
		t.Errorf("down of a provider that makes machines does not say it deleted them:\n%s", log.String())
	}
	if ms := left(t, fake); len(ms) != 1 || ms[0].ID != other.ID {
		t.Errorf("left %v", ms)
	}
	fake.Put("win-z-1", "z", time.Now(), false)
	fake.Stuck = func(string) bool { return true }
	if err := Down(t.Context(), fake, "z", DownOptions{}); !errors.Is(err, ErrLeftBehind) {
		t.Errorf("down of a machine that stays: %v, want ErrLeftBehind", err)
	}
	if err := Down(context.Background(), fake, "Not_A_Run", DownOptions{}); err == nil {
		t.Error("a bad run ID was taken")
	}
}

func TestPickAddress(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"169.254.3.4"}, ""},
		{[]string{"fe80::1", "169.254.3.4"}, ""},
		{[]string{"169.254.3.4", "10.0.0.5"}, "10.0.0.5"},
		{[]string{"fd00::5", "10.0.0.5"}, "10.0.0.5"},
		{[]string{"fd00::5"}, "fd00::5"},
		{[]string{"::ffff:10.0.0.7"}, "10.0.0.7"},
		{[]string{"0.0.0.0", "224.0.0.1", " 10.1.1.1 "}, "10.1.1.1"},
		{[]string{"win-a.lab"}, "win-a.lab"},
	} {
		if got := pickAddress(tc.in); got != tc.want {
			t.Errorf("pickAddress(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
