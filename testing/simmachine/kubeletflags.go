package simmachine

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// removedKubeletFlags are kubelet flags a release removed, by the first
// minor without them. A kubelet given a flag it does not know exits at once
// ("unknown flag"), so its service stops as soon as it starts.
//
// --pod-infra-container-image: deprecated in 1.34 ("will be removed in
// 1.35", k8s.io/kubernetes v1.34.4 cmd/kubelet/app/server.go), gone from
// v1.35.4's kubelet; kubeadm writes it into kubeadm-flags.env up to 1.34
// only (cmd/kubeadm/app/phases/kubelet/flags.go: v1.34.4 has it, v1.35.4
// and v1.37.2 write --hostname-override, --register-with-taints and the
// kubeletExtraArgs).
var removedKubeletFlags = map[string]int{
	"--pod-infra-container-image": 35,
}

var kubeletExe = regexp.MustCompile(`(?i)"([^"]*\\kubelet\.exe)"`)

// kubeletRefuses returns why a kubelet started with command would exit at
// once: a flag its version no longer has. "" when it would run, or when
// the machine does not know the kubelet's version. m.mu must be held.
func (m *Machine) kubeletRefuses(command string) string {
	exe := kubeletExe.FindStringSubmatch(command)
	if exe == nil {
		return ""
	}
	version := m.fact("file:" + exe[1])
	minor, ok := kubeletMinor(version)
	if !ok {
		return ""
	}
	for _, word := range strings.Fields(command) {
		name, _, _ := strings.Cut(word, "=")
		if since, removed := removedKubeletFlags[name]; removed && minor >= since {
			return fmt.Sprintf("kubelet %s: unknown flag: %s (removed in 1.%d)", version, name, since)
		}
	}
	return ""
}

var kubeletVersion = regexp.MustCompile(`^v?1\.(\d+)\.`)

func kubeletMinor(version string) (int, bool) {
	m := kubeletVersion.FindStringSubmatch(version)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}
