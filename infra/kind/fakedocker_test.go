package kind

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeDocker puts a docker CLI first on PATH that answers as a host with
// one kind cluster whose nodes run (kind's own docker commands, through
// sigs.k8s.io/kind, and the harness's): body is a shell case's branches,
// matched against the arguments ("$*"), tried before the defaults below.
// Every invocation is logged, one line each, to the returned file; an
// invocation no branch answers fails, saying so.
//
// The defaults are a host where `docker run --privileged` and `docker exec
// --privileged` fail (exit 126, as with Docker 20.10 on a host whose
// capability bounding set lacks a capability), cgroup v2, and the
// cluster "wc" of a control plane and a worker on kindest/node:v1.37.2.
func fakeDocker(t *testing.T, body string) (calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls.log")
	script := `#!/bin/sh
echo "$*" >> '` + calls + `'
case "$*" in
` + body + `
"version --format {{.Server.Version}}") echo 20.10.24 ;;
"info --format {{.CgroupVersion}}") echo 2 ;;
"ps -a --filter label=io.x-k8s.kind.cluster=wc --format {{.Names}}") printf 'wc-control-plane\nwc-worker\n' ;;
"inspect --format {{ index .Config.Labels \"io.x-k8s.kind.role\"}} wc-control-plane") echo control-plane ;;
"inspect --format {{ index .Config.Labels \"io.x-k8s.kind.role\"}} wc-worker") echo worker ;;
"inspect --format {{.Config.Image}} wc-control-plane") echo kindest/node:v1.37.2 ;;
"exec wc-control-plane cat /kind/version"|"exec wc-worker cat /kind/version") echo v1.37.2 ;;
"run --rm --entrypoint /bin/true --cap-add ALL "*) ;;
"exec --privileged "*|"run "*"--privileged"*)
	echo 'OCI runtime exec failed: exec failed: unable to start container process: apply caps: operation not permitted: unknown' >&2
	exit 126 ;;
*) echo "fake docker: unexpected: docker $*" >&2; exit 1 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

// dockerCalls returns the fake's invocations, each its arguments joined
// by spaces.
func dockerCalls(t *testing.T, calls string) []string {
	t.Helper()
	data, err := os.ReadFile(calls)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}
