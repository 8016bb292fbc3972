package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/winconform/winconform/internal/text"
)

// Quirks records what this host's Docker daemon cannot do that kind expects.
type Quirks struct {
	// NoPrivileged is set when `docker run --privileged` fails here, as it does
	// with Docker 20.10 on a host whose capability bounding set lacks a
	// capability (it asks runc for every capability).
	NoPrivileged bool `json:"noPrivileged"`
	// CapDrop lists the capabilities missing from the bounding set, which the
	// stand-in for --privileged drops.
	CapDrop []string `json:"capDrop,omitempty"`
	// Detail is the daemon's own words for the failure.
	Detail string `json:"detail,omitempty"`
}

// capNames are the Linux capabilities by number (linux/capability.h).
var capNames = []string{
	"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
	"SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
	"IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
	"SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD",
	"LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG",
	"WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
}

// MissingCapabilities parses a CapBnd mask (hex, as in /proc/PID/status) and
// returns the names of the capabilities up to lastCap that it lacks.
func MissingCapabilities(capBnd string, lastCap int) ([]string, error) {
	mask, err := strconv.ParseUint(strings.TrimSpace(capBnd), 16, 64)
	if err != nil {
		return nil, fmt.Errorf("capability mask %q: %w", capBnd, err)
	}
	var missing []string
	for i := 0; i <= lastCap && i < 64; i++ {
		if mask&(1<<uint(i)) != 0 {
			continue
		}
		if i < len(capNames) {
			missing = append(missing, capNames[i])
		} else {
			missing = append(missing, "CAP_"+strconv.Itoa(i))
		}
	}
	return missing, nil
}

// hostMissingCapabilities reads this process's bounding set, which on a local
// daemon is the daemon's too.
func hostMissingCapabilities() ([]string, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			return MissingCapabilities(v, last)
		}
	}
	return nil, errors.New("no CapBnd line in /proc/self/status")
}

// PrivilegedSubstitute returns the `docker run` flags that stand in for
// --privileged when the daemon cannot grant every capability: all capabilities
// but the missing ones, unmasked /proc and /sys paths, and every device.
func PrivilegedSubstitute(capDrop []string) []string {
	args := []string{"--cap-add", "ALL"}
	for _, c := range capDrop {
		args = append(args, "--cap-drop", c)
	}
	return append(args,
		"--security-opt", "systempaths=unconfined",
		"--device-cgroup-rule", "a *:* rwm",
		"--device", "/dev/kmsg",
	)
}

// DetectQuirks finds out whether the daemon can run image --privileged. It
// changes nothing where it can; where it cannot, it checks that the stand-in
// flags work, and reports the quirk. image must be present locally and have /bin/true.
func (c *Client) DetectQuirks(ctx context.Context, image string) (Quirks, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	probe := func(flags ...string) error {
		args := append([]string{"run", "--rm", "--entrypoint", "/bin/true"}, flags...)
		return c.Run(ctx, append(args, image)...)
	}
	privErr := probe("--privileged")
	if privErr == nil {
		return Quirks{}, nil
	}
	missing, err := hostMissingCapabilities()
	if err != nil || len(missing) == 0 {
		return Quirks{}, fmt.Errorf("docker cannot run a --privileged container (kind needs one) and no missing capability explains it: %v", privErr)
	}
	q := Quirks{NoPrivileged: true, CapDrop: missing, Detail: detail(privErr)}
	if err := probe(PrivilegedSubstitute(missing)...); err != nil {
		return Quirks{}, fmt.Errorf("docker cannot run a --privileged container (%s), nor one with every capability but %s: %v",
			q.Detail, strings.Join(missing, ","), err)
	}
	return q, nil
}

func detail(err error) string {
	var re *RunError
	if errors.As(err, &re) {
		if s := text.FirstLine(string(re.Stderr)); s != "" {
			return s
		}
	}
	return err.Error()
}
