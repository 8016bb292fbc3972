package kind

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	kinderrors "sigs.k8s.io/kind/pkg/errors"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/winconform/winconform/internal/text"
)

// ExportLogs puts kind's collection of the cluster's node logs (kubelet,
// containerd, pods, journal) into dir, as `kind export logs` does. kind
// runs every command in a node as `docker exec --privileged`, which a host
// that needs the docker shim refuses (exit 126): the collection only reads,
// so it runs through the shim's exec-only form on every host
// (docker.ActivateExec), as plain docker execs. kind fails when one of its
// many collectors does (the harness's Debian node has no crictl); what it
// did collect is kept, and missed says what it did not, one line per node
// (and one per failure that is no node's). err is set when nothing was
// collected.
func (c *Cluster) ExportLogs(dir string) (missed []string, err error) {
	self, err := os.Executable()
	if err == nil {
		var restore func()
		if restore, err = c.docker.ActivateExec(c.opts.ShimDir, self); err == nil {
			defer restore()
		}
	}
	if err != nil {
		missed = append(missed, fmt.Sprintf("the docker shim could not be set up (%v): the logs are collected with docker exec --privileged, as kind runs it", err))
	}
	nodes, _ := c.provider.ListNodes(c.cfg.Name)
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.String()
	}
	cerr := c.provider.CollectLogs(c.cfg.Name, dir)
	if _, statErr := os.Stat(dir); statErr != nil {
		return missed, fmt.Errorf("exporting the logs of cluster %q: %v", c.cfg.Name, cerr)
	}
	return append(missed, missedByNode(cerr, names)...), nil
}

// missedByNode sorts the failures of kind's log collection (an aggregate
// of aggregates) by the node each names, in nodes' order: one line per
// node some of whose logs were not collected, saying how many and the
// first; then each failure that names no node (docker info, the
// directory), a line of its own.
func missedByNode(err error, nodes []string) []string {
	if err == nil {
		return nil
	}
	byNode := map[string][]string{}
	var other []string
	for _, leaf := range leaves(err) {
		node, what := describeCollector(leaf, nodes)
		if node == "" {
			other = append(other, "not collected: "+what)
			continue
		}
		byNode[node] = append(byNode[node], what)
	}
	var out []string
	for _, n := range nodes {
		whats := byNode[n]
		switch slices.Sort(whats); len(whats) {
		case 0:
		case 1:
			out = append(out, fmt.Sprintf("node %s: not collected: %s", n, whats[0]))
		default:
			out = append(out, fmt.Sprintf("node %s: %d of its logs not collected, such as %s", n, len(whats), whats[0]))
		}
	}
	slices.Sort(other)
	return append(out, slices.Compact(other)...)
}

// leaves returns the errors an error of kind's holds: the members of its
// aggregates, however nested, else the error itself.
func leaves(err error) []error {
	var agg kinderrors.Aggregate
	if !errors.As(err, &agg) {
		return []error{err}
	}
	var out []error
	for _, e := range agg.Errors() {
		out = append(out, leaves(e)...)
	}
	return out
}

// describeCollector returns the node a failed collector names and what it
// ran: for a `docker exec` into the node, the command in it and how it
// failed ("crictl images (exit status 127)"); for another docker command,
// that command; else the error's first line.
func describeCollector(err error, nodes []string) (node, what string) {
	if re := kindexec.RunErrorForError(err); re != nil && len(re.Command) > 0 {
		args := re.Command[1:]
		for i, a := range args {
			if !slices.Contains(nodes, a) {
				continue
			}
			cmd := strings.Join(re.Command, " ")
			if len(args) > 0 && args[0] == "exec" && i+1 < len(args) {
				cmd = strings.Join(args[i+1:], " ")
			}
			return a, fmt.Sprintf("%s (%v)", cmd, re.Inner)
		}
		return "", fmt.Sprintf("%s (%v)", strings.Join(re.Command, " "), re.Inner)
	}
	msg := text.FirstLine(err.Error())
	best := ""
	for _, n := range nodes {
		if strings.Contains(msg, n) && len(n) > len(best) {
			best = n
		}
	}
	return best, msg
}
