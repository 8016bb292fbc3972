package simmachine

import (
	"slices"
	"strings"
)

// A Windows service keeps the environment it started with: setting the
// machine's PATH (the registry, machine scope) reaches the processes
// started afterwards by Explorer, not those a service starts, until the
// service restarts (ansible-collections/ansible.windows#348: "all running
// processes will not be affected", the services under svchost included;
// chef-boneyard/windows#111: commands put on the PATH are not found by a
// service until it restarts). A WinRM shell is started by the WinRM
// service, and inherits its environment: the PATH the service read at
// boot. The facts: path:DIR is the machine's PATH, winrm-path:DIR what a
// new shell inherits.

// bootEnv is the WinRM service starting at boot with the machine's PATH.
// m.mu must be held.
func (m *Machine) bootEnv() {
	for k := range m.facts {
		if strings.HasPrefix(k, "winrm-path:") {
			delete(m.facts, k)
		}
	}
	for k := range m.facts {
		if dir, ok := strings.CutPrefix(k, "path:"); ok {
			m.facts["winrm-path:"+dir] = "present"
		}
	}
}

// lookPath returns the directory holding program that a program run by a
// step finds through its PATH: the machine's when the step refreshed its
// session's PATH from it, else the one the WinRM shell inherited; "" when
// none holds it. m.mu must be held.
func (m *Machine) lookPath(program string, refreshed bool) string {
	kind := "winrm-path:"
	if refreshed {
		kind = "path:"
	}
	var dirs []string
	for k := range m.facts {
		if dir, ok := strings.CutPrefix(k, kind); ok {
			dirs = append(dirs, dir)
		}
	}
	slices.Sort(dirs)
	for _, dir := range dirs {
		if m.fact("file:"+dir+`\`+program) != "" {
			return dir
		}
	}
	return ""
}

// preflightFails is what kubeadm join prints when its preflight checks
// fail (k8s.io/kubernetes v1.37.2, cmd/kubeadm/app/preflight/checks.go):
// ContainerRuntimeCheck, which asks the CRI for its status ([ERROR CRI],
// "container runtime is not running", util/runtime IsRunning), comes
// first; KubeletVersionCheck runs "kubelet --version" by name
// (utils.go GetKubeletVersion). Each failure is an error, not a warning
// (RunChecks, handleError), all are listed, and the phase stops the join.
func preflightFails(cri string, noKubelet bool) []string {
	out := []string{"[preflight] Some fatal errors occurred:"}
	if cri != "" {
		out = append(out, "\t[ERROR CRI]: container runtime is not running: "+cri)
	}
	if noKubelet {
		out = append(out, "\t[ERROR KubeletVersion]: couldn't get kubelet version: cannot execute 'kubelet --version': exec: \"kubelet\": executable file not found in %PATH%")
	}
	return append(out,
		"[preflight] If you know what you are doing, you can make a check non-fatal with `--ignore-preflight-errors=...`",
		"error execution phase preflight: preflight checks failed",
		"To see the stack trace of this error execute with --v=5 or higher")
}
