package docker

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestMissingCapabilities(t *testing.T) {
	for _, tc := range []struct {
		mask    string
		lastCap int
		want    []string
	}{
		// A host whose bounding set lacks CAP_SYS_RESOURCE (24), as on the
		// machines where Docker 20.10 cannot start --privileged containers.
		{"000001fffeffffff", 40, []string{"SYS_RESOURCE"}},
		{"000001fffeffffff\n", 40, []string{"SYS_RESOURCE"}},
		{" 000001ffffffffff ", 40, nil},
		// Capabilities above lastCap do not count, present or not.
		{"000000fffeffffff", 39, []string{"SYS_RESOURCE"}},
		{"000000ffffffffff", 40, []string{"CHECKPOINT_RESTORE"}},
		{"0", 2, []string{"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH"}},
		// CAP_SYS_ADMIN (21) and CAP_NET_ADMIN (12) missing.
		{strconv.FormatUint(0x1ffffffffff&^(1<<21|1<<12), 16), 40, []string{"NET_ADMIN", "SYS_ADMIN"}},
		// A kernel newer than the name table: numbers without names.
		{"1ffffffffff", 42, []string{"CAP_41", "CAP_42"}},
	} {
		got, err := MissingCapabilities(tc.mask, tc.lastCap)
		if err != nil {
			t.Errorf("MissingCapabilities(%q, %d): %v", tc.mask, tc.lastCap, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("MissingCapabilities(%q, %d) = %q, want %q", tc.mask, tc.lastCap, got, tc.want)
		}
	}
}

func TestMissingCapabilitiesNamesEveryBit(t *testing.T) {
	// With nothing in the mask, every capability up to lastCap is missing,
	// each exactly once and in numeric order.
	got, err := MissingCapabilities("0", 40)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 41 {
		t.Fatalf("got %d names, want 41: %q", len(got), got)
	}
	for i, want := range map[int]string{0: "CHOWN", 7: "SETUID", 12: "NET_ADMIN", 21: "SYS_ADMIN", 24: "SYS_RESOURCE", 27: "MKNOD", 38: "PERFMON", 39: "BPF", 40: "CHECKPOINT_RESTORE"} {
		if got[i] != want {
			t.Errorf("capability %d = %s, want %s", i, got[i], want)
		}
	}
	// lastCap beyond 63 stops at the 64 bits of the mask.
	got, err = MissingCapabilities("0", 100)
	if err != nil || len(got) != 64 || got[63] != "CAP_63" {
		t.Errorf("lastCap 100: %d names (%v), last %q", len(got), err, got[len(got)-1])
	}
}

func TestMissingCapabilitiesBadMask(t *testing.T) {
	for _, mask := range []string{"", "xyz", "0x1f", "11111111111111111"} {
		if got, err := MissingCapabilities(mask, 40); err == nil {
			t.Errorf("MissingCapabilities(%q) = %q, want an error", mask, got)
		} else if !strings.Contains(err.Error(), "capability mask") {
			t.Errorf("error %q does not name the mask", err)
		}
	}
}

func TestPrivilegedSubstitute(t *testing.T) {
	base := []string{
		"--cap-add", "ALL",
		"--security-opt", "systempaths=unconfined",
		"--device-cgroup-rule", "a *:* rwm",
		"--device", "/dev/kmsg",
	}
	if got := PrivilegedSubstitute(nil); !slices.Equal(got, base) {
		t.Errorf("PrivilegedSubstitute(nil) = %q, want %q", got, base)
	}
	got := PrivilegedSubstitute([]string{"SYS_RESOURCE", "SYS_TIME"})
	want := []string{
		"--cap-add", "ALL",
		"--cap-drop", "SYS_RESOURCE", "--cap-drop", "SYS_TIME",
		"--security-opt", "systempaths=unconfined",
		"--device-cgroup-rule", "a *:* rwm",
		"--device", "/dev/kmsg",
	}
	if !slices.Equal(got, want) {
		t.Errorf("PrivilegedSubstitute = %q, want %q", got, want)
	}
	if slices.Contains(got, "--privileged") {
		t.Error("the stand-in for --privileged contains --privileged")
	}
}

// hostMissing reads this host's bounding set as the test's own expectation
// of what DetectQuirks finds.
func hostMissing(t *testing.T) []string {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		last, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	var mask uint64
	found := false
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "CapBnd:" {
			mask, err = strconv.ParseUint(f[1], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			found = true
		}
	}
	if !found {
		t.Skip("no CapBnd in /proc/self/status")
	}
	var missing []int
	for i := 0; i <= last && i < 64; i++ {
		if mask&(1<<i) == 0 {
			missing = append(missing, i)
		}
	}
	names, err := MissingCapabilities(strconv.FormatUint(mask, 16), last)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(missing) {
		t.Fatalf("MissingCapabilities named %q for missing bits %v", names, missing)
	}
	return names
}

func TestHostMissingCapabilitiesMatchesProc(t *testing.T) {
	want := hostMissing(t)
	got, err := hostMissingCapabilities()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("hostMissingCapabilities = %q, /proc/self/status says %q", got, want)
	}
}

const capsErr = `docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container process caused: unable to apply caps: operation not permitted: unknown.`

func TestDetectQuirksPrivilegedWorks(t *testing.T) {
	log := newCallLog(t)
	bin := fakeDocker(t, log.record())
	q, err := (&Client{Bin: bin}).DetectQuirks(context.Background(), "node:img")
	if err != nil {
		t.Fatalf("DetectQuirks: %v", err)
	}
	if q.NoPrivileged || q.CapDrop != nil || q.Detail != "" {
		t.Errorf("quirks on a host that runs --privileged: %+v", q)
	}
	calls := log.calls(t)
	want := []string{"run", "--rm", "--entrypoint", "/bin/true", "--privileged", "node:img"}
	if len(calls) != 1 || !slices.Equal(calls[0], want) {
		t.Errorf("probes = %q, want one: %q", calls, want)
	}
}

func TestDetectQuirksNoPrivileged(t *testing.T) {
	log := newCallLog(t)
	// --privileged fails the way Docker 20.10 does without a capability in
	// the bounding set; the stand-in (--cap-add ALL ...) works.
	bin := fakeDocker(t, log.record()+`
for a in "$@"; do
  if [ "$a" = --privileged ]; then
    echo '`+capsErr+`' >&2
    echo "See 'docker run --help'." >&2
    exit 126
  fi
done
exit 0`)
	missing := hostMissing(t)
	q, err := (&Client{Bin: bin}).DetectQuirks(context.Background(), "node:img")
	if len(missing) == 0 {
		// With a full bounding set nothing explains the failure: an error.
		if err == nil {
			t.Fatalf("DetectQuirks = %+v, want an error on a host with every capability", q)
		}
		for _, want := range []string{"cannot run a --privileged container", "no missing capability explains it", "unable to apply caps"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		return
	}
	if err != nil {
		t.Fatalf("DetectQuirks: %v", err)
	}
	if !q.NoPrivileged {
		t.Error("NoPrivileged not set")
	}
	if !slices.Equal(q.CapDrop, missing) {
		t.Errorf("CapDrop = %q, want the host's missing capabilities %q", q.CapDrop, missing)
	}
	if q.Detail != capsErr {
		t.Errorf("Detail = %q, want the first line of the daemon's error", q.Detail)
	}
	calls := log.calls(t)
	if len(calls) != 2 {
		t.Fatalf("probes = %q, want --privileged then the stand-in", calls)
	}
	want := append(append([]string{"run", "--rm", "--entrypoint", "/bin/true"}, PrivilegedSubstitute(missing)...), "node:img")
	if !slices.Equal(calls[1], want) {
		t.Errorf("second probe = %q, want %q", calls[1], want)
	}
}

func TestDetectQuirksNeitherWorks(t *testing.T) {
	missing := hostMissing(t)
	if len(missing) == 0 {
		t.Skip("this host's bounding set is full: DetectQuirks stops before trying the stand-in")
	}
	bin := fakeDocker(t, `
for a in "$@"; do
  if [ "$a" = --privileged ]; then echo '`+capsErr+`' >&2; exit 126; fi
done
echo "docker: Error response from daemon: device-cgroup-rule refused." >&2
exit 125`)
	q, err := (&Client{Bin: bin}).DetectQuirks(context.Background(), "node:img")
	if err == nil {
		t.Fatalf("DetectQuirks = %+v, want an error", q)
	}
	if q.NoPrivileged {
		t.Errorf("quirks returned with the error: %+v", q)
	}
	for _, want := range []string{
		"cannot run a --privileged container (" + capsErr + ")",
		"nor one with every capability but " + strings.Join(missing, ","),
		"device-cgroup-rule refused",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
