package nodeconfig

import "strings"

// KubeletArgs are the kubelet service's arguments to kube-log-runner, before
// the node's name and address (--hostname-override, --node-ip) and the
// flags kubeadm join writes into kubeadm-flags.env join them on the machine:
// kube-log-runner's log file, the kubelet's path, then the kubelet's own
// flags: it runs as a Windows service (--windows-service, a flag of the
// Windows build only: cmd/kubelet/app/options/osflags_windows.go), with
// kubeadm's files. Everything else the kubelet reads is in its
// configuration file, which kubeadm join writes from the cluster's
// KubeletConfiguration and KubeletConfigPatch; the CRI socket among it
// (kubeadm writes nodeRegistration.criSocket as containerRuntimeEndpoint).
func KubeletArgs() []string {
	return append([]string{"--log-file=" + KubeletLogFile, InstallDir + `\kubelet.exe`}, KubeletFlags()...)
}

// KubeletFlags are the kubelet's own flags in KubeletArgs.
func KubeletFlags() []string {
	return []string{
		"--windows-service",
		`--cert-dir=C:\var\lib\kubelet\pki`,
		`--config=C:\var\lib\kubelet\config.yaml`,
		`--bootstrap-kubeconfig=C:\etc\kubernetes\bootstrap-kubelet.conf`,
		`--kubeconfig=C:\etc\kubernetes\kubelet.conf`,
		"--v=2",
	}
}

// KubeletCommand is the kubelet service's command line as the service
// control manager holds it: kube-log-runner.exe, quoted, then KubeletArgs.
// No argument holds a space, a tab or a quote, so each stands unquoted and
// Windows splits the line back into exactly these arguments
// (CommandLineToArgvW's rules).
func KubeletCommand() string {
	return `"` + InstallDir + `\kube-log-runner.exe" ` + strings.Join(KubeletArgs(), " ")
}

// KubeletConfigPatch is the patch kubeadm join applies to the cluster's
// KubeletConfiguration before it writes the node's config.yaml (target
// kubeletconfiguration, a JSON merge patch: KubeletPatchFile in the
// JoinConfiguration's patches directory; cmd/kubeadm/app/util/patches).
//
// The cluster's KubeletConfiguration is written for its Linux nodes: kind's
// turns image garbage collection and disk eviction off for nodes whose disk
// is the host's (imageGCHighThresholdPercent: 100, evictionHard at 0%) and
// puts the kubelet's cgroups under /kubelet (kind v0.33.0,
// pkg/cluster/internal/kubeadm/config.go). A Windows node has a disk of its
// own, on which multi-gigabyte Server Core images pile up across runs
// unless the kubelet collects them, and no cgroups. So those keys are
// removed (null), and the kubelet takes its own defaults for them: image
// garbage collection from 85% to 80% (pkg/kubelet/apis/config/v1beta1
// defaults.go), and, with evictionHard unset, its Windows build's eviction
// thresholds (cmd/kubelet/app/server.go loadConfigFile;
// pkg/kubelet/eviction/defaults_windows.go). What a Windows kubelet needs
// is set: no QoS cgroups and no enforcement of node allocatable (which
// validation_windows.go warns are ignored there), and no resolv.conf
// (kubeadm's Windows build sets that too: componentconfigs/kubelet_windows.go).
func KubeletConfigPatch() []byte {
	return []byte(`cgroupRoot: null
imageGCHighThresholdPercent: null
imageGCLowThresholdPercent: null
evictionHard: null
cgroupsPerQOS: false
enforceNodeAllocatable:
- none
resolvConf: ""
`)
}
