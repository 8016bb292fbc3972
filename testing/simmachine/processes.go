package simmachine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/winconform/winconform/testing/steptest"
)

// What Windows does to the program of a running process. The process maps
// its program's image; while it runs, Windows refuses to overwrite the file
// ("The process cannot access the file ... because it is being used by
// another process") or to delete it (access denied), but lets it be renamed:
// a rename changes the directory entry, not the mapped data, and the process
// runs on from the file under its new name. The anchors show the refusal:
// kubernetes-sigs/windows-testing, capz/templates/windows-base.yaml
// (replace-containerd.ps1) stops the kubelet and containerd and then lists
// the files under C:\Program Files\containerd that are still locked before it
// unpacks a new containerd over them.
//
// The programs that run on a node: containerd.exe (the containerd service),
// containerd-shim-runhcs-v1.exe (one per running pod sandbox, which outlives
// a restart of containerd), and kube-proxy.exe and flanneld.exe, which the
// HostProcess DaemonSets run from C:\k. A step that stops one does not free
// its file for the step: Stop-Process ends a process asynchronously
// (Process.Kill returns before the process has exited, and TerminateProcess
// only starts the termination), and the kubelet starts a DaemonSet's
// container again as soon as it sees it gone. So the simulated machine
// credits no stop: only a rename frees a running program's name.
//
// A running program is a fact process:PATH (the program's path) whose value
// says what runs it: service:NAME, or pod (a container the kubelet keeps
// running).

// StartProcess makes a process run the program at path, as runner says
// (service:NAME or pod): a HostProcess DaemonSet's kube-proxy.exe on a joined
// node, a pod's containerd shim.
func (m *Machine) StartProcess(path, runner string) { m.SetFact("process:"+path, runner) }

// Processes lists the programs running, by path (lower case, as Windows
// paths compare), sorted.
func (m *Machine) Processes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k, v := range m.facts {
		if p, ok := strings.CutPrefix(k, "process:"); ok && v != "" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// heldFiles checks what a case does to the programs of running processes:
// a change of such a file (its content, or its removal) fails as Windows
// fails it, unless the case moved the file aside first, which shows in its
// sets as another file of the same volume that gets the running program's
// content; the process then runs from there. It returns the
// error the step fails with, "" when none. m.mu must be held.
func (r *run) heldFiles(c steptest.Case) string {
	m := r.m
	sets, err := steptest.ExpandMap(c.Sets, r.s.Params, m.fact)
	if err != nil {
		return "" // setAll reports it
	}
	norm, written := map[string]string{}, map[string]string{}
	for k, v := range sets {
		norm[normKey(k)] = v
		written[normKey(k)] = strings.TrimPrefix(k, "file:")
	}
	moves, taken := map[string]string{}, map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(m.facts)) {
		path, ok := strings.CutPrefix(k, "process:")
		if !ok || m.facts[k] == "" {
			continue
		}
		file := "file:" + path
		have := m.fact(file)
		want, changes := norm[file]
		if have == "" || !changes || want == have {
			continue
		}
		// The file it was moved to: one of its volume that gets its
		// content, named after it when several do (two programs of the
		// same version; Install-Program names the copy <name>.<n>), each
		// taken once.
		aside := ""
		for _, other := range slices.Sorted(maps.Keys(norm)) {
			p, ok := strings.CutPrefix(other, "file:")
			if !ok || other == file || taken[other] || volume(p) != volume(path) || norm[other] != have || m.fact(other) == have {
				continue
			}
			if named := strings.HasPrefix(leaf(p), leaf(path)+"."); aside == "" || named {
				aside = other
				if named {
					break
				}
			}
		}
		taken[aside] = true
		if aside == "" {
			name := written[file]
			if want == "" {
				return fmt.Sprintf("Cannot remove item %s: Access to the path '%s' is denied.", name, name)
			}
			return fmt.Sprintf("The process cannot access the file '%s' because it is being used by another process.", name)
		}
		moves[k] = "process:" + strings.TrimPrefix(aside, "file:")
	}
	for from, to := range moves {
		runner := m.facts[from]
		delete(m.facts, from)
		m.facts[to] = runner
	}
	return ""
}

// leaf is the last element of a Windows path.
func leaf(path string) string { return path[strings.LastIndexByte(path, '\\')+1:] }

// volume is the drive of a Windows path: a file moves without a copy only
// on its own volume.
func volume(path string) string {
	if i := strings.IndexByte(path, '\\'); i >= 0 {
		return path[:i]
	}
	return path
}
