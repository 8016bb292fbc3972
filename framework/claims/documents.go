package claims

// ReadAt is the Kubernetes release whose sources the catalogue was last read
// against: the upstream Windows e2e specs (test/e2e/windows in
// kubernetes/kubernetes, in the module cache at the version the harness's
// go.mod pins) and, for each limitation, the code and documentation that
// decide whether it still holds (the ledger carries expectations over to
// newer servers, and says so). A test holds it to go.mod: moving the
// harness to a new line means reading them again.
const ReadAt = "v1.37.2"

// CheckedThrough is the newest Kubernetes whose changes to what the
// catalogue's limitations rest on were checked: ReadAt, or a pre-release of
// the line after it that the harness supports (internal/kubelines). The
// ledger carries its expectations over, unchecked, only to servers newer
// than it.
//
// v1.38.0-beta.0 was read from its module (go mod download
// k8s.io/kubernetes@v1.38.0-beta.0) against v1.37.2, for the Windows
// changes of CHANGELOG-1.38:
//   - test/e2e/windows: security_context.go alone changed; its unknown
//     user spec also accepts ltsc2025's "The specified domain either does
//     not exist or could not be contacted." (ERROR_NO_SUCH_DOMAIN), which
//     ID-01's verdict (framework/verdicts.UnknownUser) takes on every line;
//     LIM-10, from the same file, is unchanged.
//   - pkg/features/kube_features.go: WindowsHostNetwork (alpha, deprecated
//     since 1.33) is removed (#142018): a Windows pod's hostNetwork stays
//     HostProcess's alone; no limitation of the catalogue lifts.
//     WindowsCPUAndMemoryAffinity is beta and on by default from 1.38
//     (#142500): CPU and memory affinity on Windows nodes, which no claim
//     states as a limitation (SCH-10 is about requests and limits).
//   - kubectl debug's sysadmin profile starts a HostProcess container as
//     NT AUTHORITY\SYSTEM on a Windows node (#138182): the supported way
//     to run node-level work (LIM-09, HPC-01); privileged containers stay
//     refused (LIM-01 holds).
//
// No documented limitation is expected to lift on 1.38: one found lifted
// there is drift, which the ledger shows.
const CheckedThrough = "v1.38.0-beta.0"

// upstreamEra is the era of the upstream documents: the line of ReadAt.
const upstreamEra = "Kubernetes 1.37"

// documents are the sources of the claims: the shared seed documents (by
// number), the current Kubernetes documentation, the harness's design card,
// and the upstream Windows e2e specs (read at ReadAt).
var documents = []Document{
	{"000", `"Using Windows Server Containers in Kubernetes", the Kubernetes 1.9 guide (seed 000)`, "Kubernetes 1.9"},
	{"001", `kubernetes-for-windows, Ansible playbooks for a hybrid cluster with flannel host-gw (seed 001)`, "Kubernetes 1.10"},
	{"002", `"Guide for scheduling Windows containers in Kubernetes", Kubernetes documentation (seed 002)`, "current Kubernetes documentation"},
	{"003", `"Kubernetes on Windows (1): General Overview", blog post of 30 September 2019 (seed 003)`, "Kubernetes 1.14 to 1.16 (2019)"},
	{"004", `SIG-Windows introduction, the SIG's notes on its remaining work (seed 004)`, "Kubernetes 1.8 to 1.9 (2017)"},
	{"docs", `Kubernetes documentation, Windows networking and troubleshooting pages`, "current Kubernetes documentation"},
	{"card", `the winconform design card`, "current"},
	{"upstream:memory_limits.go", `upstream e2e test/e2e/windows/memory_limits.go (from 1.37: net of existing pods and a per-pod memory overhead)`, upstreamEra},
	{"upstream:cpu_limits.go", `upstream e2e test/e2e/windows/cpu_limits.go`, upstreamEra},
	{"upstream:eviction.go", `upstream e2e test/e2e/windows/eviction.go`, upstreamEra},
	{"upstream:density.go", `upstream e2e test/e2e/windows/density.go`, upstreamEra},
	{"upstream:kubelet_stats.go", `upstream e2e test/e2e/windows/kubelet_stats.go (from 1.37: up to 10 pods, fewer where a per-pod memory overhead leaves no room, at least 3)`, upstreamEra},
	{"upstream:volumes.go", `upstream e2e test/e2e/windows/volumes.go`, upstreamEra},
	{"upstream:subpath_cleanup.go", `upstream e2e test/e2e/windows/subpath_cleanup.go (new in 1.37, with the kubelet fix it checks)`, upstreamEra},
	{"upstream:security_context.go", `upstream e2e test/e2e/windows/security_context.go (from 1.38: ltsc2025's "The specified domain either does not exist" for an unknown user too)`, upstreamEra},
	{"upstream:hyperv.go", `upstream e2e test/e2e/windows/hyperv.go`, upstreamEra},
	{"upstream:host_process.go", `upstream e2e test/e2e/windows/host_process.go`, upstreamEra},
	{"upstream:node_shutdown.go", `upstream e2e test/e2e/windows/node_shutdown.go`, upstreamEra},
	{"upstream:reboot_node.go", `upstream e2e test/e2e/windows/reboot_node.go (skipped upstream since 1.35, until graceful node shutdown is enabled there)`, upstreamEra},
	{"upstream:service.go", `upstream e2e test/e2e/windows/service.go`, upstreamEra},
	{"upstream:lifecycle_hook.go", `upstream e2e test/e2e/common/node/lifecycle_hook.go (the ContainerStopSignals specs)`, upstreamEra},
	{"upstream:dns.go", `upstream e2e test/e2e/windows/dns.go`, upstreamEra},
}

var documentsByKey = func() map[string]Document {
	m := map[string]Document{}
	for _, d := range documents {
		m[d.Key] = d
	}
	return m
}()
