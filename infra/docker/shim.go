package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// kind runs the `docker` it finds on PATH, with --privileged for every node
// container and every exec into one. Where the daemon cannot grant that, the
// harness puts a directory first on PATH whose `docker` is the harness binary
// itself; invoked under that name it rewrites the arguments (ShimMain) and
// executes the real CLI. Where the daemon can, nothing is put on PATH. What
// only reads in the nodes (their logs) runs through the shim's exec-only
// form on every host (ActivateExec).

const (
	envRealDocker = "WINCONFORM_REAL_DOCKER"
	envCapDrop    = "WINCONFORM_CAP_DROP"
	// envExecOnly set (to "1") is the shim's exec-only form (ActivateExec).
	envExecOnly = "WINCONFORM_SHIM_EXEC_ONLY"
	// ShimName is the name under which the harness binary acts as the shim.
	ShimName = "docker"
)

// preEntrypoint runs before a node image's own entrypoint when the node
// container could not be started --privileged: docker then mounts /sys and the
// cgroup v1 hierarchies read-only, and runc cannot lower oom_score_adj (which
// needs CAP_SYS_RESOURCE), so containerd is told to clamp it instead.
const preEntrypoint = `mount -o remount,rw /sys 2>/dev/null || true
for m in /sys/fs/cgroup $(findmnt -rn -t cgroup,cgroup2 -o TARGET); do
  mount -o remount,bind,rw "$m" 2>/dev/null || echo "winconform: could not remount $m read-write" >&2
done
if [ -f /etc/containerd/config.toml ]; then
  sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' /etc/containerd/config.toml
fi
exec "$@"`

// RewriteArgs turns a docker command line that asks for --privileged into
// one this host can run. For `run`, --privileged becomes the stand-in flags and
// the image (kind puts it last) is started through preEntrypoint, followed by
// the image's own entrypoint and command, which entrypoint looks up. For
// `exec`, --privileged is dropped: the container already holds every
// capability the host has. Any other command line is returned unchanged.
func RewriteArgs(args, capDrop []string, entrypoint func(image string) ([]string, error)) ([]string, error) {
	if len(args) == 0 || !slices.Contains(args, "--privileged") {
		return args, nil
	}
	switch args[0] {
	case "exec":
		return RewriteExec(args), nil
	case "run":
		image := args[len(args)-1]
		if strings.HasPrefix(image, "-") {
			return nil, fmt.Errorf("docker run %v: expected the image as the last argument", args[1:])
		}
		orig, err := entrypoint(image)
		if err != nil {
			return nil, err
		}
		if len(orig) == 0 {
			return nil, fmt.Errorf("image %s has neither entrypoint nor command to start after the read-write remounts", image)
		}
		out := []string{"run"}
		for _, a := range args[1 : len(args)-1] {
			if a == "--privileged" {
				out = append(out, PrivilegedSubstitute(capDrop)...)
				continue
			}
			out = append(out, a)
		}
		out = append(out, "--entrypoint", "/bin/sh", image, "-c", preEntrypoint, "winconform-entrypoint")
		return append(out, orig...), nil
	}
	return args, nil
}

// RewriteExec is the shim's exec-only form of RewriteArgs: `docker exec
// --privileged` loses --privileged, and any other command line (a `docker
// run --privileged` too) is returned unchanged.
func RewriteExec(args []string) []string {
	if len(args) == 0 || args[0] != "exec" {
		return args
	}
	return slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--privileged" })
}

// Activate makes kind, and anything else this process starts, run docker
// through the shim when q says the host needs it. dir is where the shim link
// goes; self is the harness executable. It returns a function that undoes it.
func (c *Client) Activate(q Quirks, dir, self string) (restore func(), err error) {
	if !q.NoPrivileged {
		return func() {}, nil
	}
	return c.activate(dir, self, map[string]string{envCapDrop: strings.Join(q.CapDrop, ","), envExecOnly: ""})
}

// ActivateExec makes this process's docker commands run through the shim's
// exec-only form, on any host: `docker exec --privileged` runs as a plain
// `docker exec`, and every other command as it is. It is for what only
// reads in a node container (kind's collection of its logs), for which the
// container's own capabilities are enough: it needs no probe of the host
// (DetectQuirks), and a host where exec --privileged fails (exit 126)
// collects as any other does. It returns a function that undoes it.
func (c *Client) ActivateExec(dir, self string) (restore func(), err error) {
	return c.activate(dir, self, map[string]string{envCapDrop: "", envExecOnly: "1"})
}

// activate links self as the shim in dir, puts dir first on PATH and sets
// the shim's environment: the real docker CLI and vars (a var set to ""
// is unset).
func (c *Client) activate(dir, self string, vars map[string]string) (restore func(), err error) {
	// PATH entries must be absolute: os/exec refuses programs found through
	// a relative one.
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	link := filepath.Join(dir, ShimName)
	_ = os.Remove(link)
	if err := os.Symlink(self, link); err != nil {
		return nil, fmt.Errorf("docker shim: %w", err)
	}
	type saved struct {
		value string
		set   bool
	}
	before := map[string]saved{}
	for _, k := range []string{"PATH", envRealDocker, envCapDrop, envExecOnly} {
		v, set := os.LookupEnv(k)
		before[k] = saved{v, set}
	}
	os.Setenv(envRealDocker, realDocker(c.Bin))
	for k, v := range vars {
		if v == "" {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, v)
		}
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() {
		for k, v := range before {
			if v.set {
				os.Setenv(k, v.value)
			} else {
				os.Unsetenv(k)
			}
		}
	}, nil
}

// realDocker is the docker CLI a shim made now runs: bin, unless a shim is
// active in this process already, whose own real docker it is (bin, found
// on PATH, may then be that shim, and a shim that ran itself would exec
// itself forever).
func realDocker(bin string) string {
	if real := os.Getenv(envRealDocker); real != "" {
		return real
	}
	return bin
}

// IsShim reports whether the running binary was invoked as the docker shim.
func IsShim(argv0 string) bool {
	return filepath.Base(argv0) == ShimName && os.Getenv(envRealDocker) != ""
}

// ShimMain is the whole life of the shim: rewrite args and replace this
// process with the real docker CLI. It returns only on failure.
func ShimMain(args []string) int {
	real := os.Getenv(envRealDocker)
	var capDrop []string
	if s := os.Getenv(envCapDrop); s != "" {
		capDrop = strings.Split(s, ",")
	}
	if self, err := os.Executable(); err == nil && sameFile(real, self) {
		fmt.Fprintf(os.Stderr, "winconform docker shim: its docker CLI %s is the shim itself: refusing to run itself\n", real)
		return 125
	}
	c := &Client{Bin: real}
	newArgs := RewriteExec(args)
	if os.Getenv(envExecOnly) == "" {
		var err error
		if newArgs, err = RewriteArgs(args, capDrop, c.entrypoint); err != nil {
			fmt.Fprintln(os.Stderr, "winconform docker shim:", err)
			return 125
		}
	}
	err := syscall.Exec(real, append([]string{"docker"}, newArgs...), os.Environ())
	fmt.Fprintln(os.Stderr, "winconform docker shim: exec", real+":", err)
	return 125
}

// sameFile says whether paths a and b are one file, links followed.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// entrypoint returns image's entrypoint followed by its command.
func (c *Client) entrypoint(image string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := c.Output(ctx, nil, "image", "inspect", "--format", "{{json .Config.Entrypoint}}\n{{json .Config.Cmd}}", image)
	if err != nil {
		return nil, err
	}
	var all []string
	for _, line := range strings.SplitN(strings.TrimSpace(string(out)), "\n", 2) {
		var part []string
		if err := json.Unmarshal([]byte(line), &part); err != nil {
			return nil, fmt.Errorf("image %s: entrypoint %q: %w", image, line, err)
		}
		all = append(all, part...)
	}
	return all, nil
}
