package docker

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// kindRun is a `docker run` line as kind writes it for a node: --privileged
// among the flags, the image last.
var kindRun = []string{
	"run", "--name", "wc-control-plane", "--hostname", "wc-control-plane",
	"--label", "io.x-k8s.kind.role=control-plane", "--privileged",
	"--security-opt", "seccomp=unconfined", "--restart=on-failure:1",
	"--tmpfs", "/run", "--detach", "-e", "container=docker", "kindest/node:v1.34.4",
}

var nodeEntrypoint = []string{"/usr/local/bin/entrypoint", "/sbin/init"}

func TestRewriteArgsRun(t *testing.T) {
	in := slices.Clone(kindRun)
	var asked []string
	got, err := RewriteArgs(in, []string{"SYS_RESOURCE"}, func(image string) ([]string, error) {
		asked = append(asked, image)
		return nodeEntrypoint, nil
	})
	if err != nil {
		t.Fatalf("RewriteArgs: %v", err)
	}
	if !slices.Equal(asked, []string{"kindest/node:v1.34.4"}) {
		t.Errorf("entrypoint looked up for %q, want the image (the last argument)", asked)
	}
	want := []string{
		"run", "--name", "wc-control-plane", "--hostname", "wc-control-plane",
		"--label", "io.x-k8s.kind.role=control-plane",
		"--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE",
		"--security-opt", "systempaths=unconfined", "--device-cgroup-rule", "a *:* rwm", "--device", "/dev/kmsg",
		"--security-opt", "seccomp=unconfined", "--restart=on-failure:1",
		"--tmpfs", "/run", "--detach", "-e", "container=docker",
		"--entrypoint", "/bin/sh", "kindest/node:v1.34.4", "-c", preEntrypoint, "winconform-entrypoint",
		"/usr/local/bin/entrypoint", "/sbin/init",
	}
	if !slices.Equal(got, want) {
		t.Errorf("RewriteArgs =\n%q\nwant\n%q", got, want)
	}
	if slices.Contains(got, "--privileged") {
		t.Error("--privileged survived the rewrite")
	}
	if !slices.Equal(in, kindRun) {
		t.Errorf("RewriteArgs modified its input: %q", in)
	}
	// The image is the first non-flag after --entrypoint /bin/sh: what comes
	// after it are the container's arguments, the script then its $0 and "$@".
	i := slices.Index(got, "kindest/node:v1.34.4")
	if got[i-2] != "--entrypoint" || got[i-1] != "/bin/sh" || got[i+1] != "-c" || got[i+3] != "winconform-entrypoint" {
		t.Errorf("image not started through the pre-entrypoint script: %q", got[i-2:])
	}
	if !slices.Equal(got[i+4:], nodeEntrypoint) {
		t.Errorf("original entrypoint not appended: %q", got[i+4:])
	}
}

func TestRewriteArgsExec(t *testing.T) {
	in := []string{"exec", "--privileged", "-i", "wc-control-plane", "ctr", "--privileged-arg", "images", "import", "-"}
	orig := slices.Clone(in)
	got, err := RewriteArgs(in, []string{"SYS_RESOURCE"}, func(string) ([]string, error) {
		t.Error("exec looked up an entrypoint")
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"exec", "-i", "wc-control-plane", "ctr", "--privileged-arg", "images", "import", "-"}
	if !slices.Equal(got, want) {
		t.Errorf("RewriteArgs(exec) = %q, want %q", got, want)
	}
	if !slices.Equal(in, orig) {
		t.Errorf("RewriteArgs modified its input: %q", in)
	}
}

func TestRewriteArgsLeavesOtherCommandsAlone(t *testing.T) {
	never := func(string) ([]string, error) {
		t.Error("entrypoint looked up")
		return nil, errors.New("no")
	}
	for _, args := range [][]string{
		nil,
		{},
		{"ps", "-a", "--format", "{{.Names}}"},
		{"run", "--rm", "--detach", "busybox"}, // no --privileged
		{"inspect", "--privileged", "x"},       // not run or exec
		{"create", "--privileged", "img"},
	} {
		got, err := RewriteArgs(args, []string{"SYS_RESOURCE"}, never)
		if err != nil {
			t.Errorf("RewriteArgs(%q): %v", args, err)
		}
		if !slices.Equal(got, args) {
			t.Errorf("RewriteArgs(%q) = %q, want it unchanged", args, got)
		}
	}
}

func TestRewriteArgsErrors(t *testing.T) {
	ep := func(string) ([]string, error) { return nodeEntrypoint, nil }
	_, err := RewriteArgs([]string{"run", "--privileged", "--detach"}, nil, ep)
	if err == nil || !strings.Contains(err.Error(), "expected the image as the last argument") {
		t.Errorf("last argument a flag: %v", err)
	}

	lookup := errors.New("Error: No such image: img")
	_, err = RewriteArgs([]string{"run", "--privileged", "img"}, nil, func(string) ([]string, error) { return nil, lookup })
	if !errors.Is(err, lookup) {
		t.Errorf("entrypoint lookup failure not returned: %v", err)
	}

	_, err = RewriteArgs([]string{"run", "--privileged", "img"}, nil, func(string) ([]string, error) { return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "image img has neither entrypoint nor command") {
		t.Errorf("image without entrypoint: %v", err)
	}
}

// TestPreEntrypointScript runs the script kind's node is started through,
// with mount, findmnt and sed replaced by loggers, and checks that it remounts
// /sys and every cgroup hierarchy read-write and then execs the original
// entrypoint with its arguments.
func TestPreEntrypointScript(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	tool := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tool("mount", `echo "mount $*" >> `+log+`; [ "$3" != /sys/fs/cgroup/memory ]`)
	tool("findmnt", `echo /sys/fs/cgroup/cpu; echo /sys/fs/cgroup/memory`)
	tool("sed", `echo "sed $*" >> `+log)
	tool("entry", `echo "entry $0 $*" >> `+log)

	cmd := exec.Command(sh, "-c", preEntrypoint, "winconform-entrypoint", filepath.Join(dir, "entry"), "/sbin/init", "--log-level=info")
	cmd.Env = []string{"PATH=" + dir}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pre-entrypoint script: %v: %s", err, stderr.String())
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var mounts, seds []string
	var entry string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "mount "):
			mounts = append(mounts, l)
		case strings.HasPrefix(l, "sed "):
			seds = append(seds, l)
		case strings.HasPrefix(l, "entry "):
			entry = l
		}
	}
	wantMounts := []string{
		"mount -o remount,rw /sys",
		"mount -o remount,bind,rw /sys/fs/cgroup",
		"mount -o remount,bind,rw /sys/fs/cgroup/cpu",
		"mount -o remount,bind,rw /sys/fs/cgroup/memory",
	}
	if !slices.Equal(mounts, wantMounts) {
		t.Errorf("mounts = %q, want %q", mounts, wantMounts)
	}
	if !strings.Contains(stderr.String(), "could not remount /sys/fs/cgroup/memory read-write") {
		t.Errorf("a failed remount is not reported: %q", stderr.String())
	}
	if want := "entry " + filepath.Join(dir, "entry") + " /sbin/init --log-level=info"; entry != want {
		t.Errorf("entrypoint ran as %q, want %q", entry, want)
	}
	if lines[len(lines)-1] != entry {
		t.Errorf("the original entrypoint is not the last thing run: %q", lines)
	}
	// The containerd edit happens when the node has the file (this host may too).
	if _, err := os.Stat("/etc/containerd/config.toml"); err == nil {
		if len(seds) != 1 || !strings.Contains(seds[0], "s/restrict_oom_score_adj = false/restrict_oom_score_adj = true/") ||
			!strings.HasSuffix(seds[0], "/etc/containerd/config.toml") {
			t.Errorf("sed = %q", seds)
		}
	} else if len(seds) != 0 {
		t.Errorf("sed ran without a containerd config: %q", seds)
	}
}

func TestEntrypointLookup(t *testing.T) {
	log := newCallLog(t)
	bin := fakeDocker(t, log.record()+`
case "$5" in
  node) echo '["/usr/local/bin/entrypoint","/sbin/init"]'; echo null ;;
  cmdonly) echo null; echo '["/pause"]' ;;
  both) echo '["/bin/tini","--"]'; echo '["/app","-v"]' ;;
  broken) echo 'not json'; echo null ;;
  *) echo "Error: No such image: $5" >&2; exit 1 ;;
esac`)
	c := &Client{Bin: bin}
	for image, want := range map[string][]string{
		"node":    {"/usr/local/bin/entrypoint", "/sbin/init"},
		"cmdonly": {"/pause"},
		"both":    {"/bin/tini", "--", "/app", "-v"},
	} {
		got, err := c.entrypoint(image)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("entrypoint(%s) = %q, %v; want %q", image, got, err, want)
		}
	}
	if _, err := c.entrypoint("broken"); err == nil || !strings.Contains(err.Error(), `"not json"`) {
		t.Errorf("unparsable inspect output: %v", err)
	}
	if _, err := c.entrypoint("missing"); err == nil || !strings.Contains(err.Error(), "No such image") {
		t.Errorf("missing image: %v", err)
	}
	calls := log.calls(t)
	if len(calls) == 0 {
		t.Fatal("docker not called")
	}
	if want := []string{"image", "inspect", "--format", "{{json .Config.Entrypoint}}", "{{json .Config.Cmd}}"}; !slices.Equal(calls[0][:5], want) {
		// The format holds a newline, so the log shows it on two lines.
		t.Errorf("inspect call = %q", calls[0])
	}
}

func TestIsShim(t *testing.T) {
	t.Setenv(envRealDocker, "")
	if IsShim("/tmp/shim/docker") {
		t.Error("IsShim without WINCONFORM_REAL_DOCKER")
	}
	t.Setenv(envRealDocker, "/usr/bin/docker")
	for argv0, want := range map[string]bool{
		"docker":              true,
		"/tmp/shim/docker":    true,
		"/usr/bin/winconform": false,
		"/tmp/docker/wc":      false,
		"docker-compose":      false,
	} {
		if got := IsShim(argv0); got != want {
			t.Errorf("IsShim(%q) = %v, want %v", argv0, got, want)
		}
	}
}

func TestActivateNoQuirk(t *testing.T) {
	path, real := os.Getenv("PATH"), os.Getenv(envRealDocker)
	dir := filepath.Join(t.TempDir(), "shim")
	restore, err := (&Client{Bin: "/usr/bin/docker"}).Activate(Quirks{}, dir, "/bin/self")
	if err != nil {
		t.Fatal(err)
	}
	if restore == nil {
		t.Fatal("nil restore")
	}
	restore()
	if os.Getenv("PATH") != path {
		t.Error("PATH changed on a host without quirks")
	}
	if os.Getenv(envRealDocker) != real {
		t.Error("WINCONFORM_REAL_DOCKER changed on a host without quirks")
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("shim directory made on a host without quirks: %v", err)
	}
}

func TestActivate(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	oldPath := "/usr/local/bin:/usr/bin:/bin"
	t.Setenv("PATH", oldPath)
	t.Setenv(envRealDocker, "")
	t.Setenv(envCapDrop, "stale")
	dir := filepath.Join(t.TempDir(), "cache", "shim")
	// A stale link from an earlier run is replaced.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ShimName), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}

	c := &Client{Bin: "/usr/bin/real-docker"}
	restore, err := c.Activate(Quirks{NoPrivileged: true, CapDrop: []string{"SYS_RESOURCE", "SYS_TIME"}}, dir, self)
	if err != nil {
		t.Fatalf("Activate: %v", err)
	}
	link := filepath.Join(dir, ShimName)
	if target, err := os.Readlink(link); err != nil || target != self {
		t.Errorf("shim link -> %q (%v), want %q", target, err, self)
	}
	if got := os.Getenv("PATH"); got != dir+string(os.PathListSeparator)+oldPath {
		t.Errorf("PATH = %q, want the shim directory first", got)
	}
	if got, err := exec.LookPath("docker"); err != nil || got != link {
		t.Errorf("docker on PATH = %q (%v), want the shim %q", got, err, link)
	}
	if got := os.Getenv(envRealDocker); got != c.Bin {
		t.Errorf("%s = %q, want %q", envRealDocker, got, c.Bin)
	}
	if got := os.Getenv(envCapDrop); got != "SYS_RESOURCE,SYS_TIME" {
		t.Errorf("%s = %q", envCapDrop, got)
	}
	if !IsShim(link) {
		t.Error("a process started as the shim link would not act as the shim")
	}

	restore()
	if got := os.Getenv("PATH"); got != oldPath {
		t.Errorf("PATH after restore = %q, want %q", got, oldPath)
	}
	if got := os.Getenv(envRealDocker); got != "" {
		t.Errorf("%s after restore = %q", envRealDocker, got)
	}
	if got := os.Getenv(envCapDrop); got != "stale" {
		t.Errorf("%s after restore = %q, want its old value", envCapDrop, got)
	}
	if IsShim(link) {
		t.Error("IsShim after restore")
	}
}

func TestActivateRestoreUnsetsWhatWasUnset(t *testing.T) {
	t.Setenv(envRealDocker, "")
	os.Unsetenv(envRealDocker)
	restore, err := (&Client{Bin: "/usr/bin/docker"}).Activate(Quirks{NoPrivileged: true}, t.TempDir(), "/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	restore()
	if v, ok := os.LookupEnv(envRealDocker); ok {
		t.Errorf("%s=%q after restore; it was unset before Activate", envRealDocker, v)
	}
}

func TestActivateFails(t *testing.T) {
	t.Setenv("PATH", os.Getenv("PATH"))
	t.Setenv(envRealDocker, "")
	t.Setenv(envCapDrop, "")
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("PATH")
	_, err := (&Client{Bin: "/usr/bin/docker"}).Activate(Quirks{NoPrivileged: true}, filepath.Join(file, "shim"), "/bin/true")
	if err == nil {
		t.Fatal("Activate succeeded with a shim directory under a regular file")
	}
	if os.Getenv("PATH") != path || os.Getenv(envRealDocker) != "" {
		t.Error("a failed Activate changed the environment")
	}
}

// shimRun runs this test binary as the docker shim (through a symlink named
// docker), with real as the real docker CLI.
type shimRun struct {
	stdout, stderr string
	exitCode       int
}

func runShim(t *testing.T, real, capDrop, stdin string, extraEnv []string, args ...string) shimRun {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), ShimName)
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := &exec.Cmd{
		Path:   link,
		Args:   append([]string{"docker"}, args...),
		Env:    append(append(os.Environ(), envRealDocker+"="+real, envCapDrop+"="+capDrop), extraEnv...),
		Stdin:  strings.NewReader(stdin),
		Stdout: &stdout,
		Stderr: &stderr,
	}
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running the shim: %v", err)
	}
	return shimRun{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// fakeRealDocker is a real docker CLI stand-in: `image inspect` answers with
// a kind node's entrypoint and command (and records its arguments in
// dir/inspect), anything else records its arguments in dir/args and its
// standard input in dir/stdin and exits $FAKE_EXIT.
func fakeRealDocker(t *testing.T) (bin, dir string) {
	t.Helper()
	dir = t.TempDir()
	bin = filepath.Join(dir, "real-docker")
	script := `#!/bin/sh
if [ "$1" = image ] && [ "$2" = inspect ]; then
  printf '%s\n' "$@" > '` + dir + `/inspect'
  case "$5" in
    missing*) echo "Error: No such image: $5" >&2; exit 1 ;;
  esac
  echo '["/usr/local/bin/entrypoint","/sbin/init"]'
  echo 'null'
  exit 0
fi
printf '%s\n' "$@" > '` + dir + `/args'
cat > '` + dir + `/stdin'
echo "real docker ran"
exit ${FAKE_EXIT:-0}
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, dir
}

func readLines(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the real docker did not record %s: %v", filepath.Base(path), err)
	}
	return string(data)
}

func joinLines(args []string) string { return strings.Join(args, "\n") + "\n" }

func TestShimRun(t *testing.T) {
	real, dir := fakeRealDocker(t)
	res := runShim(t, real, "SYS_RESOURCE,SYS_TIME", "", nil, kindRun...)
	if res.exitCode != 0 {
		t.Fatalf("shim exited %d: %s", res.exitCode, res.stderr)
	}
	if res.stdout != "real docker ran\n" {
		t.Errorf("stdout = %q, want the real docker's", res.stdout)
	}
	wantInspect := []string{"image", "inspect", "--format", "{{json .Config.Entrypoint}}\n{{json .Config.Cmd}}", "kindest/node:v1.34.4"}
	if got := readLines(t, filepath.Join(dir, "inspect")); got != joinLines(wantInspect) {
		t.Errorf("image inspect called with\n%s\nwant\n%s", got, joinLines(wantInspect))
	}
	want := []string{
		"run", "--name", "wc-control-plane", "--hostname", "wc-control-plane",
		"--label", "io.x-k8s.kind.role=control-plane",
		"--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE", "--cap-drop", "SYS_TIME",
		"--security-opt", "systempaths=unconfined", "--device-cgroup-rule", "a *:* rwm", "--device", "/dev/kmsg",
		"--security-opt", "seccomp=unconfined", "--restart=on-failure:1",
		"--tmpfs", "/run", "--detach", "-e", "container=docker",
		"--entrypoint", "/bin/sh", "kindest/node:v1.34.4", "-c", preEntrypoint, "winconform-entrypoint",
		"/usr/local/bin/entrypoint", "/sbin/init",
	}
	if got := readLines(t, filepath.Join(dir, "args")); got != joinLines(want) {
		t.Errorf("real docker received\n%s\nwant\n%s", got, joinLines(want))
	}
}

func TestShimRunWithoutCapDrop(t *testing.T) {
	real, dir := fakeRealDocker(t)
	res := runShim(t, real, "", "", nil, "run", "--privileged", "--detach", "img:1")
	if res.exitCode != 0 {
		t.Fatalf("shim exited %d: %s", res.exitCode, res.stderr)
	}
	got := readLines(t, filepath.Join(dir, "args"))
	if strings.Contains(got, "--cap-drop") || strings.Contains(got, "--privileged") {
		t.Errorf("real docker received\n%s", got)
	}
	if !strings.HasPrefix(got, joinLines([]string{"run", "--cap-add", "ALL", "--security-opt"})) {
		t.Errorf("real docker received\n%s", got)
	}
}

func TestShimExec(t *testing.T) {
	real, dir := fakeRealDocker(t)
	res := runShim(t, real, "SYS_RESOURCE", "", nil, "exec", "--privileged", "node", "true")
	if res.exitCode != 0 {
		t.Fatalf("shim exited %d: %s", res.exitCode, res.stderr)
	}
	if got := readLines(t, filepath.Join(dir, "args")); got != joinLines([]string{"exec", "node", "true"}) {
		t.Errorf("real docker received %q, want exec node true", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "inspect")); err == nil {
		t.Error("exec looked up an image entrypoint")
	}
}

func TestShimPassesStdinAndExitCode(t *testing.T) {
	real, dir := fakeRealDocker(t)
	res := runShim(t, real, "SYS_RESOURCE", "image archive bytes", []string{"FAKE_EXIT=3"},
		"exec", "--privileged", "-i", "node", "ctr", "--namespace=k8s.io", "images", "import", "-")
	if res.exitCode != 3 {
		t.Errorf("shim exit code = %d, want the real docker's 3 (stderr %q)", res.exitCode, res.stderr)
	}
	if got := readLines(t, filepath.Join(dir, "stdin")); got != "image archive bytes" {
		t.Errorf("real docker's stdin = %q", got)
	}
	if got := readLines(t, filepath.Join(dir, "args")); got != joinLines([]string{"exec", "-i", "node", "ctr", "--namespace=k8s.io", "images", "import", "-"}) {
		t.Errorf("real docker received %q", got)
	}
}

func TestShimOtherCommandsUnchanged(t *testing.T) {
	real, dir := fakeRealDocker(t)
	args := []string{"ps", "-a", "--filter", "label=io.x-k8s.kind.cluster=wc", "--format", "{{.Names}}"}
	res := runShim(t, real, "SYS_RESOURCE", "", nil, args...)
	if res.exitCode != 0 {
		t.Fatalf("shim exited %d: %s", res.exitCode, res.stderr)
	}
	if got := readLines(t, filepath.Join(dir, "args")); got != joinLines(args) {
		t.Errorf("real docker received %q, want %q", got, joinLines(args))
	}
}

func TestShimFailures(t *testing.T) {
	real, dir := fakeRealDocker(t)
	res := runShim(t, real, "SYS_RESOURCE", "", nil, "run", "--privileged", "missing:1")
	if res.exitCode != 125 {
		t.Errorf("exit code = %d, want 125", res.exitCode)
	}
	if !strings.Contains(res.stderr, "winconform docker shim:") || !strings.Contains(res.stderr, "No such image: missing:1") {
		t.Errorf("stderr = %q", res.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "args")); err == nil {
		t.Error("the real docker ran a run whose entrypoint could not be found")
	}

	res = runShim(t, real, "", "", nil, "run", "--privileged", "--detach")
	if res.exitCode != 125 || !strings.Contains(res.stderr, "expected the image as the last argument") {
		t.Errorf("run without image: exit %d, stderr %q", res.exitCode, res.stderr)
	}

	gone := filepath.Join(t.TempDir(), "no-docker")
	res = runShim(t, gone, "", "", nil, "exec", "--privileged", "node", "true")
	if res.exitCode != 125 || !strings.Contains(res.stderr, "winconform docker shim: exec "+gone) {
		t.Errorf("missing real docker: exit %d, stderr %q", res.exitCode, res.stderr)
	}
}

// TestActivatedShimEndToEnd activates the shim as the harness does and runs
// `docker` from PATH, as kind would.
func TestActivatedShimEndToEnd(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	real, dir := fakeRealDocker(t)
	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv(envRealDocker, "")
	t.Setenv(envCapDrop, "")
	restore, err := (&Client{Bin: real}).Activate(Quirks{NoPrivileged: true, CapDrop: []string{"SYS_RESOURCE"}}, filepath.Join(t.TempDir(), "shim"), self)
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	c := &Client{Bin: "docker"} // resolved on PATH, as kind does
	if _, err := c.Output(context.Background(), nil, "exec", "--privileged", "node", "true"); err != nil {
		t.Fatalf("docker through the shim: %v", err)
	}
	if got := readLines(t, filepath.Join(dir, "args")); got != joinLines([]string{"exec", "node", "true"}) {
		t.Errorf("real docker received %q", got)
	}
}

// A relative shim directory would put a relative entry on PATH, which
// os/exec refuses to run programs from: Activate makes it absolute.
func TestActivateMakesTheShimDirAbsolute(t *testing.T) {
	t.Chdir(t.TempDir())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	restore, err := (&Client{Bin: "/usr/bin/docker"}).Activate(Quirks{NoPrivileged: true, CapDrop: []string{"SYS_RESOURCE"}}, "shim", self)
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	first := strings.SplitN(os.Getenv("PATH"), string(os.PathListSeparator), 2)[0]
	if !filepath.IsAbs(first) || filepath.Base(first) != "shim" {
		t.Errorf("PATH starts with %q, want an absolute .../shim", first)
	}
	if _, err := exec.LookPath(ShimName); err != nil {
		t.Errorf("the shim is not found on PATH: %v", err)
	}
}

func TestRewriteExec(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"exec", "--privileged", "-i", "node", "tar", "-c"}, []string{"exec", "-i", "node", "tar", "-c"}},
		{[]string{"exec", "node", "true"}, []string{"exec", "node", "true"}},
		{kindRun, kindRun}, // run --privileged: left as it is
		{nil, nil},
	} {
		orig := slices.Clone(tc.in)
		if got := RewriteExec(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("RewriteExec(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !slices.Equal(tc.in, orig) {
			t.Errorf("RewriteExec modified its input: %q", tc.in)
		}
	}
}

// The exec-only shim (ActivateExec, for reading node logs) drops exec's
// --privileged and hands any other command line, a run --privileged too,
// to the real docker as it is, without looking up an entrypoint.
func TestShimExecOnly(t *testing.T) {
	real, dir := fakeRealDocker(t)
	only := []string{envExecOnly + "=1"}
	res := runShim(t, real, "", "", only, "exec", "--privileged", "wc-worker", "journalctl", "--no-pager")
	if res.exitCode != 0 {
		t.Fatalf("shim exited %d: %s", res.exitCode, res.stderr)
	}
	if got := readLines(t, filepath.Join(dir, "args")); got != joinLines([]string{"exec", "wc-worker", "journalctl", "--no-pager"}) {
		t.Errorf("real docker received %q", got)
	}
	res = runShim(t, real, "SYS_RESOURCE", "", only, kindRun...)
	if res.exitCode != 0 {
		t.Fatalf("shim exited %d: %s", res.exitCode, res.stderr)
	}
	if got := readLines(t, filepath.Join(dir, "args")); got != joinLines(kindRun) {
		t.Errorf("real docker received\n%s\nwant the run as it was", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "inspect")); err == nil {
		t.Error("the exec-only shim looked up an image entrypoint")
	}
}

// ActivateExec routes docker through the shim on a host without quirks
// too, in its exec-only form; Activate after it is the full shim again,
// and each restore puts back what was.
func TestActivateExec(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	real, dir := fakeRealDocker(t)
	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv(envRealDocker, "")
	t.Setenv(envCapDrop, "")
	t.Setenv(envExecOnly, "")
	os.Unsetenv(envExecOnly)
	shimDir := filepath.Join(t.TempDir(), "shim")
	restore, err := (&Client{Bin: real}).ActivateExec(shimDir, self)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := exec.LookPath("docker"); err != nil || got != filepath.Join(shimDir, ShimName) {
		t.Errorf("docker on PATH = %q (%v), want the shim", got, err)
	}
	if os.Getenv(envExecOnly) != "1" || os.Getenv(envRealDocker) != real {
		t.Errorf("%s=%q %s=%q", envExecOnly, os.Getenv(envExecOnly), envRealDocker, os.Getenv(envRealDocker))
	}
	c := &Client{Bin: "docker"} // resolved on PATH, as kind does
	if _, err := c.Output(context.Background(), nil, "exec", "--privileged", "wc-worker", "true"); err != nil {
		t.Fatalf("docker through the shim: %v", err)
	}
	if got := readLines(t, filepath.Join(dir, "args")); got != joinLines([]string{"exec", "wc-worker", "true"}) {
		t.Errorf("real docker received %q", got)
	}
	full, err := (&Client{Bin: real}).Activate(Quirks{NoPrivileged: true, CapDrop: []string{"SYS_RESOURCE"}}, shimDir, self)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := os.LookupEnv(envExecOnly); ok {
		t.Errorf("the full shim is exec-only: %s=%q", envExecOnly, v)
	}
	full()
	if os.Getenv(envExecOnly) != "1" {
		t.Error("restoring the full shim lost the exec-only form under it")
	}
	restore()
	if v, ok := os.LookupEnv(envExecOnly); ok || os.Getenv("PATH") != "/usr/bin:/bin" {
		t.Errorf("after restore: %s=%q (set %v), PATH %q", envExecOnly, v, ok, os.Getenv("PATH"))
	}
}

// The shim never runs itself. A shim left active in a process (kind's
// underlay sides route the rest of the process through it) made the docker
// on PATH the shim; a client made then took it for the real CLI, and a
// second shim (the exec-only one, for node logs) exec'd itself forever at
// 100% CPU (seen in CI: `docker ps -a` spinning for minutes). Now a client
// and a shim made under an active shim both run the real docker, and a
// shim told to run itself refuses.
func TestShimNeverRunsItself(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	real, dir := fakeRealDocker(t)
	t.Setenv(envRealDocker, "")
	t.Setenv(envCapDrop, "")
	t.Setenv(envExecOnly, "")
	os.Unsetenv(envRealDocker)
	os.Unsetenv(envExecOnly)
	t.Setenv("PATH", filepath.Dir(real)+":/usr/bin:/bin")
	first, err := (&Client{Bin: real}).Activate(Quirks{NoPrivileged: true, CapDrop: []string{"SYS_RESOURCE"}}, filepath.Join(t.TempDir(), "shim"), self)
	if err != nil {
		t.Fatal(err)
	}
	defer first()
	c, err := New() // the docker on PATH is the first shim now
	if err != nil {
		t.Fatal(err)
	}
	if c.Bin != real {
		t.Errorf("a client made under an active shim runs %s, want the real docker %s", c.Bin, real)
	}
	second, err := c.ActivateExec(filepath.Join(t.TempDir(), "shim2"), self)
	if err != nil {
		t.Fatal(err)
	}
	defer second()
	if got := os.Getenv(envRealDocker); got != real {
		t.Errorf("the second shim runs %s, want %s", got, real)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := (&Client{Bin: "docker"}).Output(ctx, nil, "ps", "-a"); err != nil {
		t.Fatalf("docker through the second shim: %v", err)
	}
	if got := readLines(t, filepath.Join(dir, "args")); got != joinLines([]string{"ps", "-a"}) {
		t.Errorf("real docker received %q", got)
	}
	// A shim whose real docker is itself refuses, at once.
	t.Setenv(envRealDocker, self)
	if code := ShimMain([]string{"ps"}); code != 125 {
		t.Errorf("a shim whose docker is itself: exit %d, want 125", code)
	}
}
