package claims

import corev1 "k8s.io/api/core/v1"

// The OSes a claim is about.
var (
	win  = []corev1.OSName{corev1.Windows}
	lin  = []corev1.OSName{corev1.Linux}
	both = []corev1.OSName{corev1.Windows, corev1.Linux}
)

// Matrix vocabulary: peer kinds and target modes, as framework/netmatrix
// names them.
const (
	KindPod      = "pod"
	KindNode     = "node"
	KindService  = "service"
	KindExternal = "external"

	ModePodIP       = "pod-ip"
	ModePodName     = "pod-dns"
	ModePing        = "icmp"
	ModeClusterIP   = "cluster-ip"
	ModeServiceName = "service-dns"
	ModeServiceFQDN = "service-fqdn"
	ModeNodePort    = "nodeport"
	ModeAddress     = "address"
	ModeNodeIP      = "node-ip"
)

func pod(os corev1.OSName) Peer { return Peer{Kind: KindPod, OS: os} }
func svc(os corev1.OSName) Peer { return Peer{Kind: KindService, OS: os} }
func node(os corev1.OSName) Peer {
	return Peer{Kind: KindNode, OS: os}
}

var (
	controlPlane = Peer{Kind: KindNode, OS: corev1.Linux, ControlPlane: true}
	outside      = Peer{Kind: KindExternal}
	anyPod       = Peer{Kind: KindPod}
	anyService   = Peer{Kind: KindService}
	byName       = []string{ModeServiceName, ModeServiceFQDN}
)

// part is a Part anywhere.
func part(name string, from, to Peer, modes ...string) Part {
	return Part{Name: name, From: from, To: to, Modes: modes}
}

// The limitations' eras.
const (
	era19     = "Kubernetes 1.9"
	era110    = "Kubernetes 1.10"
	eraBlog19 = "Kubernetes 1.14 to 1.16 (2019)"
	eraNow    = "current Kubernetes documentation"
	eraUp     = upstreamEra + " (upstream e2e)"
	// stable is the release from which Windows nodes are supported.
	stable = "1.14"
)

// catalogue lists every claim. Titles are the harness's own summaries.
var catalogue = []Claim{
	// Networking paths: probed by IP and, where a name exists, by DNS.
	{ID: "NET-01", Kind: Path, Level: WindowsNode, OSes: win, Docs: []string{"001", "002"},
		Title: "A Windows pod reaches another Windows pod by its IP, on the same node and on another node.",
		Parts: []Part{
			{Name: "same node", From: pod(corev1.Windows), To: pod(corev1.Windows), Modes: []string{ModePodIP}, Where: SameNode},
			{Name: "across nodes", From: pod(corev1.Windows), To: pod(corev1.Windows), Modes: []string{ModePodIP}, Where: OtherNode},
		}},
	{ID: "NET-02", Kind: Path, Level: WindowsNode, OSes: win, Docs: []string{"001"},
		Title: "A Windows pod reaches another Windows pod by a DNS name.",
		Parts: []Part{part("by name", pod(corev1.Windows), pod(corev1.Windows), ModePodName)}},
	{ID: "NET-03", Kind: Path, Level: WindowsNode, OSes: both, Docs: []string{"001"},
		Title: "A Windows pod reaches a Linux pod by its IP.",
		Parts: []Part{part("by IP", pod(corev1.Windows), pod(corev1.Linux), ModePodIP)}},
	{ID: "NET-04", Kind: Path, Level: WindowsNode, OSes: both, Docs: []string{"001"},
		Title: "A Windows pod reaches a Linux pod by a DNS name.",
		Parts: []Part{part("by name", pod(corev1.Windows), pod(corev1.Linux), ModePodName)}},
	{ID: "NET-05", Kind: Path, Level: WindowsNode, OSes: both, Docs: []string{"001"},
		Title: "A Linux pod reaches a Windows pod by its IP.",
		Parts: []Part{part("by IP", pod(corev1.Linux), pod(corev1.Windows), ModePodIP)}},
	{ID: "NET-06", Kind: Path, Level: WindowsNode, OSes: both, Docs: []string{"001"},
		Title: "A Linux pod reaches a Windows pod by a DNS name.",
		Parts: []Part{part("by name", pod(corev1.Linux), pod(corev1.Windows), ModePodName)}},
	{ID: "NET-07", Kind: Path, Level: Linux, OSes: lin, Docs: []string{"001"},
		Title: "A Linux pod reaches another Linux pod by its IP, on the same node and on another node.",
		Parts: []Part{
			{Name: "same node", From: pod(corev1.Linux), To: pod(corev1.Linux), Modes: []string{ModePodIP}, Where: SameNode},
			{Name: "across nodes", From: pod(corev1.Linux), To: pod(corev1.Linux), Modes: []string{ModePodIP}, Where: OtherNode},
		}},
	{ID: "NET-08", Kind: Path, Level: Linux, OSes: lin, Docs: []string{"001"},
		Title: "A Linux pod reaches another Linux pod by a DNS name.",
		Parts: []Part{part("by name", pod(corev1.Linux), pod(corev1.Linux), ModePodName)}},
	{ID: "NET-09", Kind: Path, Level: WindowsNode, OSes: both, Docs: []string{"001", "002"},
		Title: "A Linux pod reaches a Service whose endpoints are Windows pods, through its ClusterIP.",
		Parts: []Part{part("by ClusterIP", pod(corev1.Linux), svc(corev1.Windows), ModeClusterIP)}},
	{ID: "NET-10", Kind: Path, Level: WindowsNode, OSes: both, Docs: []string{"001", "002"},
		Title: "A Linux pod reaches a Service whose endpoints are Windows pods, through the Service's DNS name.",
		Parts: []Part{part("by name", pod(corev1.Linux), svc(corev1.Windows), byName...)}},
	{ID: "NET-11", Kind: Path, Level: WindowsNode, OSes: both, Docs: []string{"001"},
		Title: "A Windows pod reaches a Service whose endpoints are Linux pods, through its ClusterIP.",
		Parts: []Part{part("by ClusterIP", pod(corev1.Windows), svc(corev1.Linux), ModeClusterIP)}},
	{ID: "NET-12", Kind: Path, Level: WindowsNode, OSes: both, Docs: []string{"001"},
		Title: "A Windows pod reaches a Service whose endpoints are Linux pods, through the Service's DNS name.",
		Parts: []Part{part("by name", pod(corev1.Windows), svc(corev1.Linux), byName...)}},
	{ID: "NET-13", Kind: Path, Level: WindowsNode, OSes: win, Docs: []string{"002"},
		Title: "A Windows pod reaches a Service whose endpoints are Windows pods, by ClusterIP and by name.",
		Parts: []Part{
			part("by ClusterIP", pod(corev1.Windows), svc(corev1.Windows), ModeClusterIP),
			part("by name", pod(corev1.Windows), svc(corev1.Windows), byName...),
		}},
	{ID: "NET-14", Kind: Path, Level: WindowsNode, OSes: win, Docs: []string{"001", "002"},
		Title: "A client outside the cluster reaches a NodePort Service through a Windows node's address.",
		Parts: []Part{{Name: "through a Windows node", From: outside, To: anyService, Modes: []string{ModeNodePort}, Via: corev1.Windows}}},
	{ID: "NET-15", Kind: Path, Level: Linux, OSes: lin, Docs: []string{"001", "002"},
		Title: "A client outside the cluster reaches a NodePort Service through a Linux node's address.",
		Parts: []Part{{Name: "through a Linux node", From: outside, To: anyService, Modes: []string{ModeNodePort}, Via: corev1.Linux}}},
	{ID: "NET-16", Kind: Path, Level: Linux, OSes: lin, Docs: []string{"001", "002"},
		Title: "A Linux pod reaches an address outside the cluster (outbound NAT).",
		Parts: []Part{part("outbound", pod(corev1.Linux), outside, ModeAddress)}},
	{ID: "NET-17", Kind: Path, Level: WindowsNode, OSes: win, Docs: []string{"001", "002"},
		Title: "A Windows pod reaches an address outside the cluster; old releases documented this as broken with flannel host-gw.",
		Parts: []Part{part("outbound", pod(corev1.Windows), outside, ModeAddress)},
		Limitation: &Limitation{
			Statement: "outbound NAT from Windows pods is not achievable with flannel host-gw",
			Era:       era110, Holds: Versions{Until: stable}, CNI: "flannel/host-gw",
			Why: "outbound NAT from Windows pods with flannel host-gw works since Windows support became stable (1.14)",
		}},
	{ID: "NET-18", Kind: Path, Level: WindowsNode, OSes: both, Docs: []string{"002"},
		Title: "The Linux control-plane node reaches a Windows pod's IP.",
		Parts: []Part{part("node to pod", controlPlane, pod(corev1.Windows), ModePodIP)}},
	{ID: "NET-19", Kind: Path, Level: WindowsNode, OSes: both, Docs: []string{"002"},
		Title: "The Linux control-plane node reaches the ClusterIP of a Service backed by Windows pods.",
		Parts: []Part{part("node to ClusterIP", controlPlane, svc(corev1.Windows), ModeClusterIP)}},
	{ID: "NET-20", Kind: Path, Level: WindowsNode, OSes: both, Docs: []string{"002"},
		Title: "Windows and Linux pods resolve a Service by its fully qualified name, <service>.<namespace>.svc.<cluster domain>.",
		Parts: []Part{
			part("from Windows pods", pod(corev1.Windows), anyService, ModeServiceFQDN),
			part("from Linux pods", pod(corev1.Linux), anyService, ModeServiceFQDN),
		}},
	{ID: "NET-21", Kind: Limit, Level: WindowsNode, OSes: win, Docs: []string{"002", "docs"},
		Title: "A Windows node's host cannot reach the ClusterIP of a Service whose pods run on that node; only Windows pods can.",
		Parts: []Part{{Name: "host to a local Service", From: node(corev1.Windows), To: anyService, Modes: []string{ModeClusterIP}, Where: Local}},
		Limitation: &Limitation{
			Statement: "Windows container hosts are not able to access the IP of services scheduled on them",
			Era:       eraNow,
			Why:       "the current documentation still lists it (Troubleshooting: \"My Windows node cannot access my services using the service IP\")",
		}},
	{ID: "NET-22", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"000", "002"},
		Title: "A ClusterIP Service in front of the two replicas of the Windows web server spreads connections over both."},
	{ID: "NET-23", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"000"},
		Title: "The Windows containers of one pod share a network namespace and an IP, and reach each other on localhost."},
	{ID: "NET-24", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"001"},
		Title: "A Windows pod's DNS is set by the cluster: the cluster DNS server and the cluster's search suffixes (flaky in old releases)."},
	{ID: "NET-25", Kind: Path, Level: WindowsNode, OSes: both, Docs: []string{"002"},
		Title: "Pods on different hosts answer each other's ICMP echo (ping).",
		Parts: []Part{
			{Name: "from a Windows pod", From: pod(corev1.Windows), To: anyPod, Modes: []string{ModePing}, Where: OtherNode},
			{Name: "from a Linux pod", From: pod(corev1.Linux), To: anyPod, Modes: []string{ModePing}, Where: OtherNode},
		}},
	{ID: "NET-26", Kind: Path, Level: WindowsNode, OSes: win, Docs: []string{"002"}, Also: []string{NeedLoadBalancer},
		Title: "A LoadBalancer Service in front of Windows pods gets an external address and answers there.",
		Parts: []Part{part("external address", outside, svc(corev1.Windows), "loadbalancer")}},
	{ID: "NET-27", Kind: Limit, Level: WindowsNode, OSes: win, Docs: []string{"docs"},
		Title: "A Windows node cannot reach a NodePort Service through its own address (current documentation).",
		Parts: []Part{{Name: "host to its own NodePort", From: node(corev1.Windows), To: anyService, Modes: []string{ModeNodePort}, Where: Local}},
		Limitation: &Limitation{
			Statement: "local NodePort access from the node itself fails",
			Era:       eraNow,
			Why:       "the current troubleshooting page still lists it",
		}},
	{ID: "NET-28", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"upstream:dns.go"},
		Title: "A Windows pod with dnsPolicy None and a dnsConfig resolves through the nameservers and search domains it names."},

	// The documented Windows web server.
	{ID: "WEB-01", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"002", "001"},
		Title: "The documented web server (two replicas on Windows Server Core, HTTP on port 80, a NodePort Service) turns Ready and serves its page."},
	{ID: "WEB-02", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"002"},
		Title: "kubectl logs of a Windows pod shows what its container writes to standard output."},
	{ID: "WEB-03", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"002"},
		Title: "A Service port that differs from the container port reaches Windows pods."},

	// Secrets and ConfigMaps.
	{ID: "CFG-01", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"000", "004"},
		Title: "A Windows container sees a Secret key as an environment variable."},
	{ID: "CFG-02", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"000", "004"},
		Title: "A Windows container sees a ConfigMap key as an environment variable."},
	{ID: "CFG-03", Kind: Limit, Level: WindowsNode, OSes: win, Docs: []string{"000", "004"},
		Title: "Secrets mounted as volumes were documented as unsupported on Windows (Kubernetes 1.9).",
		Limitation: &Limitation{
			Statement: "Secrets cannot be mounted as volumes in Windows containers, only used as environment variables",
			Era:       era19, Holds: Versions{Until: stable},
			Why: "Windows nodes are supported (stable) from Kubernetes 1.14, Secret volumes included",
		}},
	{ID: "CFG-04", Kind: Limit, Level: WindowsNode, OSes: win, Docs: []string{"000", "004"},
		Title: "ConfigMaps mounted as volumes were documented as unsupported on Windows (Kubernetes 1.9).",
		Limitation: &Limitation{
			Statement: "ConfigMaps cannot be mounted as volumes in Windows containers, only used as environment variables",
			Era:       era19, Holds: Versions{Until: stable},
			Why: "Windows nodes are supported (stable) from Kubernetes 1.14, ConfigMap volumes included",
		}},
	{ID: "CFG-05", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"004"},
		Title: "A Secret created from a literal value reaches the container byte for byte."},

	// Volumes.
	{ID: "VOL-01", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"000"},
		Title: "A hostPath written with escaped backslashes (C:\\\\etc\\\\foo) mounts read-only in a Windows container."},
	{ID: "VOL-02", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"000", "004"},
		Title: "A hostPath written with forward slashes (C:/data mounted at C:/test-pd) mounts in a Windows container."},
	{ID: "VOL-03", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"000", "004"},
		Title: "One pod mounts several emptyDir volumes, one at a path without a drive letter (/cache) and one at C:/scratch."},
	{ID: "VOL-04", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"004"},
		Title: "The containers of a pod share an emptyDir volume."},
	{ID: "VOL-05", Kind: Limit, Level: WindowsNode, OSes: win, Docs: []string{"004", "docs"},
		Title: "emptyDir with medium: Memory is documented as unsupported on Windows.",
		Limitation: &Limitation{
			Statement: "emptyDir volumes with medium: Memory are not supported on Windows nodes",
			Era:       eraNow,
			Why: "the current Windows storage page lists memory as a storage medium among what Windows nodes do not support: " +
				"Windows has no tmpfs, and the kubelet's Windows mounter makes such a volume a plain directory on the node's disk",
		}},
	{ID: "VOL-06", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"000", "004"},
		Title: "A PersistentVolume backed by a hostPath, bound by a claim, mounts in a Windows pod."},
	{ID: "VOL-07", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"004"},
		Title: "Data in an emptyDir outlives a container restart and goes with the pod."},
	{ID: "VOL-08", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"upstream:volumes.go"},
		Title: "Writing to a read-only emptyDir or hostPath mount fails with \"Access is denied.\" while a read-write container of the same pod writes."},
	{ID: "VOL-09", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"upstream:subpath_cleanup.go"},
		Title: "A pod with many subPath mounts (ConfigMap, Secret, projected, downward API, nested hostPath, memory emptyDir) is deleted within 5 minutes.",
		Fix: &Fix{In: "1.37", Bug: "kubernetes/kubernetes#112630", Change: "kubernetes/kubernetes#138367",
			Symptom: "the Windows kubelet leaked the file handles of all but the last subPath mount it prepared, so the pod's volumes could not be torn down and it stayed Terminating"}},

	// Scheduling.
	{ID: "SCH-01", Kind: Feature, Level: Scheduler, OSes: win, Docs: []string{"000", "002"},
		Title: "nodeSelector kubernetes.io/os: windows places pods on Windows nodes only."},
	{ID: "SCH-02", Kind: Limit, Level: WindowsNode, OSes: win, Docs: []string{"000", "004"},
		Title: "Older manifests select Windows nodes with the legacy beta.kubernetes.io/os label.",
		Limitation: &Limitation{
			Statement: "manifests of the 1.9 era select Windows nodes with the legacy label beta.kubernetes.io/os; where nodes no longer carry it, such manifests do not schedule",
			Era:       era19, Holds: Versions{Never: true},
			Why: "the kubelet still sets beta.kubernetes.io/os beside kubernetes.io/os (deprecated since 1.14, not removed)",
		}},
	{ID: "SCH-03", Kind: Feature, Level: Scheduler, OSes: both, Docs: []string{"002"},
		Title: "A pod without a node selector may be placed on a node of the wrong OS."},
	{ID: "SCH-04", Kind: Feature, Level: Scheduler, OSes: win, Docs: []string{"002"},
		Title: "A taint os=windows:NoSchedule keeps other pods off Windows nodes; a matching toleration with a node selector lets Windows pods on."},
	{ID: "SCH-05", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"002"},
		Title: "Windows nodes carry node.kubernetes.io/windows-build, equal to the host's real build (10.0.17763, 10.0.20348, ...)."},
	{ID: "SCH-06", Kind: Feature, Level: Scheduler, OSes: win, Docs: []string{"002"},
		Title: "A pod that selects a Windows build no node has stays Pending."},
	{ID: "SCH-07", Kind: Feature, Level: Scheduler, OSes: win, Docs: []string{"002"},
		Title: "A RuntimeClass whose scheduling section holds the node selector and tolerations places the pods that name it."},
	{ID: "SCH-08", Kind: Feature, Level: Scheduler, OSes: both, Docs: []string{"002"},
		Title: "spec.os.name: windows is accepted and does not by itself steer scheduling."},
	{ID: "SCH-09", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"002"},
		Title: "A node rejects a pod whose spec.os.name is not the node's OS."},
	{ID: "SCH-10", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"002"},
		Title: "CPU and memory requests and limits on Windows containers are accepted and enforced."},
	{ID: "SCH-11", Kind: Feature, Level: API, OSes: win, Docs: []string{"upstream:service.go", "upstream:volumes.go"},
		Title: "Admission keeps a pod's kubernetes.io/os: windows nodeSelector as written."},

	// Documented limitations and differences.
	{ID: "LIM-01", Kind: Limit, Level: API, OSes: win, Docs: []string{"003"},
		Title: "Windows pods cannot run privileged containers.",
		Limitation: &Limitation{
			Statement: "there is no way to run privileged containers on Windows",
			Era:       eraBlog19,
			Why:       "API validation forbids securityContext.privileged in pods with spec.os.name windows; HostProcess containers (stable since 1.26) are the supported alternative (from 1.38 kubectl debug's sysadmin profile starts one, as NT AUTHORITY\\SYSTEM, on a Windows node: #138182)",
		}},
	{ID: "LIM-02", Kind: Limit, Level: API, OSes: win, Docs: []string{"003", "002"},
		Title: "Linux-only security settings are not available to Windows pods.",
		Limitation: &Limitation{
			Statement: "Linux-only security settings are not available to Windows pods",
			Era:       eraBlog19,
			Why:       "API validation forbids the Linux-only security fields in pods with spec.os.name windows (since 1.23, when spec.os became available)",
		}},
	{ID: "LIM-03", Kind: Limit, Level: WindowsNode, OSes: win, Docs: []string{"000", "003"},
		Title: "Hyper-V isolated containers are not supported; containers run with process isolation.",
		Limitation: &Limitation{
			Statement: "Hyper-V containers are not supported; Windows containers run with process isolation",
			Era:       eraBlog19,
			Why:       "Kubernetes supports process-isolated Windows containers; a Hyper-V runtime handler is an unsupported containerd configuration (LIM-11 checks it where a node enables it)",
		}},
	{ID: "LIM-04", Kind: Limit, Level: WindowsNode, OSes: win, Docs: []string{"003", "002"},
		Title: "A container image's Windows build must match the host's build.",
		Limitation: &Limitation{
			Statement: "a container image's Windows build must match the host's build (process isolation)",
			Era:       eraBlog19,
			Why:       "process isolation shares the host's kernel, so the image's build must be the host's",
		}},
	{ID: "LIM-05", Kind: Limit, Level: WindowsNode, OSes: win, Docs: []string{"000"},
		Title: "StatefulSets were documented as unsupported on Windows (Kubernetes 1.9).",
		Limitation: &Limitation{
			Statement: "the StatefulSet functionality for stateful applications is not supported",
			Era:       era19, Holds: Versions{Until: stable},
			Why: "StatefulSets are supported with Windows nodes since Windows support became stable (1.14)",
		}},
	{ID: "LIM-06", Kind: Limit, Level: WindowsNode, OSes: win, Docs: []string{"000"},
		Title: "Horizontal Pod Autoscaling of Windows pods was documented as unverified (Kubernetes 1.9).",
		Limitation: &Limitation{
			Statement: "Horizontal Pod Autoscaling for Windows Server Container pods has not been verified to work end-to-end",
			Era:       era19, Holds: Versions{Until: stable},
			Why: "HPA works for Windows pods since 1.14, given a metrics API (metrics-server reads the kubelet's summary, which Windows kubelets serve)",
		}},
	{ID: "LIM-07", Kind: Limit, Level: Linux, OSes: lin, Docs: []string{"000", "003", "004"},
		Title: "The control plane runs on Linux nodes only.",
		Limitation: &Limitation{
			Statement: "the control plane (master) runs on Linux only",
			Era:       era19,
			Why:       "the control plane's components are supported on Linux only, in every release",
		}},
	{ID: "LIM-08", Kind: Feature, Level: Scheduler, OSes: both, Docs: []string{"001"},
		Title: "Linux-only DaemonSets (kube-proxy, the CNI agent) stay off Windows nodes, and none of their pods is stuck Pending there."},
	{ID: "LIM-09", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"003"},
		Title: "HostProcess containers are the supported way to run node-level work on Windows."},
	{ID: "LIM-10", Kind: Limit, Level: WindowsNode, OSes: win, Docs: []string{"upstream:security_context.go"},
		Title: "On a pod without spec.os, Linux-only fields (seLinuxOptions, runAsUser, runAsGroup) are ignored on Windows and the pod runs; runAsNonRoot with ContainerAdministrator is refused.",
		Limitation: &Limitation{
			Statement: "Linux-only security fields have no effect on Windows containers",
			Era:       eraUp,
			Why:       "the Windows kubelet ignores the Linux-only fields of a pod that names no OS, and refuses runAsNonRoot for ContainerAdministrator",
		}},
	{ID: "LIM-11", Kind: Limit, Level: WindowsNode, OSes: win, Docs: []string{"upstream:hyperv.go", "000"},
		Title: "Hyper-V isolation through a RuntimeClass with handler runhcs-wcow-hypervisor runs the pod in a utility VM, where the node enables it (the old documents say it is unsupported: drift).",
		Limitation: &Limitation{
			Statement: "Hyper-V isolated containers are not supported",
			Era:       era19, Holds: Versions{Never: true},
			Why: "containerd on Windows runs Hyper-V isolated pods through the runhcs-wcow-hypervisor handler where the node configures it (upstream checks it)",
		}},

	// Observability.
	{ID: "OBS-01", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"000", "004"},
		Title: "A Windows node's CPU and memory figures come through the kubelet summary API."},
	{ID: "OBS-02", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"000", "004"},
		Title: "Pod and container figures of Windows pods come through CRI."},
	{ID: "OBS-03", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"002"},
		Title: "kubectl exec runs a command in a Windows container."},
	{ID: "OBS-04", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"upstream:kubelet_stats.go"},
		Title: "With ten pods on a Windows node (fewer where a per-pod memory overhead leaves no room, at least three) the summary API answers within 10 s (mean of 5), with non-zero CPU, working set and log bytes and a boot ID; /metrics/resource carries pod_memory_working_set_bytes."},

	// Container identity.
	{ID: "ID-01", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"002"},
		Title: "runAsUserName sets the user a Windows container's process runs as."},
	{ID: "ID-02", Kind: Feature, Level: Domain, OSes: win, Docs: []string{"002"},
		Title: "A gMSA credential spec gives a Windows container an Active Directory identity."},

	// Provisioning.
	{ID: "INF-01", Kind: Feature, Level: Linux, OSes: lin, Docs: []string{"000", "003", "card"},
		Title: "kind makes a Linux control plane at a chosen Kubernetes version, with an API server the Windows machines can reach."},
	{ID: "INF-02", Kind: Feature, Level: WindowsMachine, OSes: win, Docs: []string{"000", "001"},
		Title: "A Windows machine reached over WinRM joins with kubeadm join and turns Ready with kubernetes.io/os=windows."},
	{ID: "INF-03", Kind: Feature, Level: WindowsMachine, OSes: win, Docs: []string{"001", "003"},
		Title: "Windows node services start in the documented order: container runtime, kubelet, kube-proxy, CNI agent."},
	{ID: "INF-04", Kind: Feature, Level: WindowsMachine, OSes: win, Docs: []string{"001"},
		Title: "Joining is idempotent: a second run on a joined machine changes nothing."},
	{ID: "INF-05", Kind: Feature, Level: WindowsMachine, OSes: win, Docs: []string{"001"}, Also: []string{NeedDisruptive},
		Title: "Reset removes a Windows node cleanly, and the machine can join again."},
	{ID: "INF-06", Kind: Feature, Level: WindowsNode, OSes: both, Docs: []string{"000", "001", "003"},
		Title: "flannel (vxlan and host-gw back ends) networks pods across Linux and Windows nodes."},
	{ID: "INF-07", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"001", "000"},
		Title: "kube-proxy runs on Windows in kernel-space mode."},
	{ID: "INF-08", Kind: Feature, Level: WindowsMachine, OSes: win, Docs: []string{"001"},
		Title: "Windows Defender exclusions cover the runtime and node binaries (optional)."},
	{ID: "INF-09", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"002"},
		Title: "Windows machines of different builds join one cluster, each labelled with its build."},
	{ID: "INF-10", Kind: Feature, Level: Linux, OSes: lin, Docs: []string{"card", "000"},
		Title: "A node on a network outside the kind network reaches the cluster's API server, pod network and Services through the underlay the harness sets up (and removes at teardown).",
		Parts: []Part{
			{Name: "pod to pod into the machines' network", From: anyPod, To: anyPod, Modes: []string{ModePodIP, ModePing}, Underlay: IntoUnderlay},
			{Name: "pod to pod out of it", From: anyPod, To: anyPod, Modes: []string{ModePodIP, ModePing}, Underlay: OutOfUnderlay},
			{Name: "DNS from its pods", From: anyPod, To: anyService, Modes: []string{ModeServiceName, ModeServiceFQDN}, Underlay: OutOfUnderlay},
			{Name: "pod names from its pods", From: anyPod, To: anyPod, Modes: []string{ModePodName}, Underlay: OutOfUnderlay},
			{Name: "ClusterIP from its pods", From: anyPod, To: anyService, Modes: []string{ModeClusterIP}, Underlay: OutOfUnderlay},
			{Name: "NodePort through its node", From: Peer{Kind: KindNode}, To: anyService, Modes: []string{ModeNodePort}, Underlay: IntoUnderlay},
			{Name: "NodePort from its node", From: Peer{Kind: KindNode}, To: anyService, Modes: []string{ModeNodePort}, Underlay: OutOfUnderlay},
			{Name: "the control plane to its pods", From: controlPlane, To: anyPod, Modes: []string{ModePodIP}, Underlay: IntoUnderlay},
			{Name: "its node to pods", From: Peer{Kind: KindNode}, To: anyPod, Modes: []string{ModePodIP}, Underlay: OutOfUnderlay},
			{Name: "node to node, each seeing the other's own address", From: Peer{Kind: KindNode}, To: Peer{Kind: KindNode}, Modes: []string{ModeNodeIP}, Underlay: IntoUnderlay},
			{Name: "node to node back, each seeing the other's own address", From: Peer{Kind: KindNode}, To: Peer{Kind: KindNode}, Modes: []string{ModeNodeIP}, Underlay: OutOfUnderlay},
		}},
	{ID: "INF-11", Kind: Feature, Level: WindowsMachine, OSes: win, Docs: []string{"card", "001"},
		Title: "Windows machines are created for the run from a golden image, answer WinRM, join, and are deleted after the run (also after an interrupt), leaving nothing behind."},

	// Beyond the seeds: what the upstream Windows e2e specs check.
	{ID: "RES-01", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"upstream:memory_limits.go"},
		Title: "A Windows node's allocatable memory is its capacity less system-reserved, kube-reserved and the hard eviction threshold; a pod asking for more than allocatable stays Pending with FailedScheduling."},
	{ID: "RES-02", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"upstream:cpu_limits.go"},
		Title: "A Windows container limited to 500m CPU, kept busy, reports CPU use above zero and within 8% of its limit in the summary API."},
	{ID: "RES-03", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"upstream:eviction.go"}, Also: []string{NeedDisruptive},
		Title: "Under hard memory pressure a Windows node evicts pods, then lifts its memory-pressure taint."},
	{ID: "RES-04", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"upstream:density.go"},
		Title: "Ten Windows pods start with start-up latency p50 <= 30 s, p90 <= 54 s, p99 <= 59 s."},
	{ID: "HPC-01", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"upstream:host_process.go"},
		Title: "A HostProcess container runs its command from %CONTAINER_SANDBOX_MOUNT_POINT%, as SYSTEM or Local Service as asked, and reaches the API server with its service account."},
	{ID: "HPC-02", Kind: Feature, Level: WindowsNode, OSes: win, Docs: []string{"upstream:host_process.go"},
		Title: "The kubelet counts started and failed HostProcess containers in its metrics."},
	{ID: "NODE-01", Kind: Feature, Level: WindowsMachine, OSes: win, Docs: []string{"upstream:node_shutdown.go"}, Also: []string{NeedDisruptive},
		Title: "Graceful node shutdown on Windows ends non-critical pods before critical ones, within their grace periods."},
	{ID: "NODE-02", Kind: Feature, Level: WindowsMachine, OSes: win, Docs: []string{"upstream:reboot_node.go"}, Also: []string{NeedDisruptive},
		Title: "A Windows node rebooted from a HostProcess pod comes back Ready and its pods run again."},
	{ID: "SIG-01", Kind: Feature, Level: API, OSes: win, Docs: []string{"upstream:lifecycle_hook.go"},
		Title: "For spec.os.name: windows pods the API accepts the stop signals SIGTERM and SIGKILL and refuses others (SIGQUIT, SIGUSR1), where the ContainerStopSignals feature gate is on."},
}
