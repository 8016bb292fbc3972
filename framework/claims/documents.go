package claims

// documents are the sources of the claims: the shared seed documents (by
// number), the current Kubernetes documentation, the harness's design card,
// and the upstream Windows e2e specs (test/e2e/windows in kubernetes/kubernetes,
// read at v1.34.4, the version the harness pins).
var documents = []Document{
	{"000", `"Using Windows Server Containers in Kubernetes", the Kubernetes 1.9 guide (seed 000)`, "Kubernetes 1.9"},
	{"001", `kubernetes-for-windows, Ansible playbooks for a hybrid cluster with flannel host-gw (seed 001)`, "Kubernetes 1.10"},
	{"002", `"Guide for scheduling Windows containers in Kubernetes", Kubernetes documentation (seed 002)`, "current Kubernetes documentation"},
	{"003", `"Kubernetes on Windows (1): General Overview", blog post of 30 September 2019 (seed 003)`, "Kubernetes 1.14 to 1.16 (2019)"},
	{"004", `SIG-Windows introduction, the SIG's notes on its remaining work (seed 004)`, "Kubernetes 1.8 to 1.9 (2017)"},
	{"docs", `Kubernetes documentation, Windows networking and troubleshooting pages`, "current Kubernetes documentation"},
	{"card", `the winconform design card`, "current"},
	{"upstream:memory_limits.go", `upstream e2e test/e2e/windows/memory_limits.go`, "Kubernetes 1.34"},
	{"upstream:cpu_limits.go", `upstream e2e test/e2e/windows/cpu_limits.go`, "Kubernetes 1.34"},
	{"upstream:eviction.go", `upstream e2e test/e2e/windows/eviction.go`, "Kubernetes 1.34"},
	{"upstream:density.go", `upstream e2e test/e2e/windows/density.go`, "Kubernetes 1.34"},
	{"upstream:kubelet_stats.go", `upstream e2e test/e2e/windows/kubelet_stats.go (metrics.go in newer releases)`, "Kubernetes 1.34"},
	{"upstream:volumes.go", `upstream e2e test/e2e/windows/volumes.go`, "Kubernetes 1.34"},
	{"upstream:subpath_cleanup.go", `upstream e2e test/e2e/windows/subpath_cleanup.go (newer releases)`, "Kubernetes 1.35 and later"},
	{"upstream:security_context.go", `upstream e2e test/e2e/windows/security_context.go`, "Kubernetes 1.34"},
	{"upstream:hyperv.go", `upstream e2e test/e2e/windows/hyperv.go`, "Kubernetes 1.34"},
	{"upstream:host_process.go", `upstream e2e test/e2e/windows/host_process.go`, "Kubernetes 1.34"},
	{"upstream:node_shutdown.go", `upstream e2e test/e2e/windows/node_shutdown.go`, "Kubernetes 1.34"},
	{"upstream:reboot_node.go", `upstream e2e test/e2e/windows/reboot_node.go`, "Kubernetes 1.34"},
	{"upstream:service.go", `upstream e2e test/e2e/windows/service.go`, "Kubernetes 1.34"},
	{"upstream:lifecycle_hook.go", `upstream e2e test/e2e/common/node/lifecycle_hook.go (newer releases: test/e2e/windows/container_stop_signals.go)`, "Kubernetes 1.34"},
	{"upstream:dns.go", `upstream e2e test/e2e/windows/dns.go`, "Kubernetes 1.34"},
}

var documentsByKey = func() map[string]Document {
	m := map[string]Document{}
	for _, d := range documents {
		m[d.Key] = d
	}
	return m
}()

// Doc returns the document with key.
func Doc(key string) (Document, bool) {
	d, ok := documentsByKey[key]
	return d, ok
}
