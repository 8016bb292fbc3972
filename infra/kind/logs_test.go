package kind

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kinderrors "sigs.k8s.io/kind/pkg/errors"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// nodesAnswer are fake docker branches: the nodes of cluster "wc" answer a
// plain docker exec (their /var/log is varlog; the harness's Debian node
// has no crictl), docker logs and docker inspect.
func nodesAnswer(varlog string) string {
	return `"exec wc-control-plane "*|"exec wc-worker "*)
	node=$2; shift 2
	case "$*" in
	"sh -c tar "*) tar -C '` + varlog + `' -cf - . ;;
	"crictl images") echo 'OCI runtime exec failed: exec failed: unable to start container process: exec: "crictl": executable file not found in $PATH: unknown' >&2; exit 127 ;;
	*) echo "$* of $node" ;;
	esac ;;
"logs wc-control-plane"|"logs wc-worker") echo "serial of $2" ;;
"inspect wc-control-plane"|"inspect wc-worker") echo "[{\"Name\": \"/$2\"}]" ;;
"info") echo 'Server Version: 20.10.24' ;;
`
}

// After a failed run on a host where `docker exec --privileged` fails
// (exit 126), as kind runs it for every log it collects: the logs are
// collected all the same (the node containers' own capabilities are
// enough to read them), and what was not collected is one line per node.
func TestExportLogsWhereExecPrivilegedFails(t *testing.T) {
	varlog := t.TempDir()
	if err := os.MkdirAll(filepath.Join(varlog, "pods"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(varlog, "pods", "kube-apiserver.log"), []byte("apiserver says\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := fakeDocker(t, nodesAnswer(varlog))
	c, _ := newFakeCluster(t, "1.37")
	dir := filepath.Join(t.TempDir(), "nodes")
	lines, err := c.ExportLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"wc-control-plane", "wc-worker"} {
		for file, want := range map[string]string{
			"journal.log":             "journalctl --no-pager of " + node,
			"kubelet.log":             "journalctl --no-pager -u kubelet.service of " + node,
			"serial.log":              "serial of " + node,
			"pods/kube-apiserver.log": "apiserver says",
			"inspect.json":            `"/` + node + `"`,
		} {
			data, rerr := os.ReadFile(filepath.Join(dir, node, file))
			if rerr != nil || !strings.Contains(string(data), want) {
				t.Errorf("%s/%s: %q (%v), want %q", node, file, data, rerr, want)
			}
		}
	}
	// One line per node that was not collected whole: each names its
	// node and what failed (crictl, which the node lacks).
	t.Log(strings.Join(lines, "\n"))
	if len(lines) != 2 {
		t.Errorf("%d line(s), want one per node:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, node := range []string{"wc-control-plane", "wc-worker"} {
		if i < len(lines) && (!strings.Contains(lines[i], node) || !strings.Contains(lines[i], "crictl images")) {
			t.Errorf("line %d: %q, want %s's crictl images", i+1, lines[i], node)
		}
	}
	for _, call := range dockerCalls(t, calls) {
		if strings.HasPrefix(call, "run ") {
			t.Errorf("a container was run to collect logs: docker %s", call)
		}
	}
}

// kindFailure is a collector's failure as kind reports it: its command,
// wrapped with a stack.
func kindFailure(status string, command ...string) error {
	return kinderrors.WithStack(&kindexec.RunError{Command: command, Inner: errors.New(status)})
}

// Where every exec into the nodes fails, as on a host that refuses exec
// --privileged without the shim: one line per node, how many of its logs
// and the first (in order), never the wall of kind's aggregate; a failure
// that is no node's is a line of its own, once.
func TestMissedByNode(t *testing.T) {
	nodes := []string{"wc-control-plane", "wc-worker"}
	var perNode []error
	for _, n := range nodes {
		var fns []error
		for _, cmd := range [][]string{{"journalctl", "--no-pager"}, {"crictl", "images"}, {"cat", "/kind/version"}} {
			fns = append(fns, kindFailure("exit status 126", append([]string{"docker", "exec", "--privileged", n}, cmd...)...))
		}
		fns = append(fns, kinderrors.Wrapf(kinderrors.New("unexpected EOF"), "Untarring %q in %s", "/var/log", "/tmp/logs/"+n))
		perNode = append(perNode, kinderrors.NewAggregate(fns))
	}
	err := kinderrors.NewAggregate([]error{
		kinderrors.NewAggregate(perNode),
		kinderrors.NewAggregate([]error{kindFailure("exit status 1", "docker", "info"), kindFailure("exit status 1", "docker", "inspect", "wc-worker")}),
	})
	got := missedByNode(err, nodes)
	want := []string{
		"node wc-control-plane: 4 of its logs not collected, such as Untarring \"/var/log\" in /tmp/logs/wc-control-plane: unexpected EOF",
		"node wc-worker: 5 of its logs not collected, such as Untarring \"/var/log\" in /tmp/logs/wc-worker: unexpected EOF",
		"not collected: docker info (exit status 1)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("missedByNode =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	one := kinderrors.NewAggregate([]error{kindFailure("exit status 127", "docker", "exec", "--privileged", "wc-worker", "crictl", "images")})
	if got := missedByNode(one, nodes); len(got) != 1 || got[0] != "node wc-worker: not collected: crictl images (exit status 127)" {
		t.Errorf("one failure: %q", got)
	}
	if got := missedByNode(nil, nodes); got != nil {
		t.Errorf("no failure: %q", got)
	}
}
