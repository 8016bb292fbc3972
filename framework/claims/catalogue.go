package claims

// catalogue lists every claim. Texts are the harness's own summaries.
var catalogue = []Claim{
	// Networking paths: probed by IP and, where a name exists, by DNS.
	{"NET-01", Path, "A Windows pod reaches another Windows pod by its IP, on the same node and on another node.", []string{"001", "002"}},
	{"NET-02", Path, "A Windows pod reaches another Windows pod by a DNS name.", []string{"001"}},
	{"NET-03", Path, "A Windows pod reaches a Linux pod by its IP.", []string{"001"}},
	{"NET-04", Path, "A Windows pod reaches a Linux pod by a DNS name.", []string{"001"}},
	{"NET-05", Path, "A Linux pod reaches a Windows pod by its IP.", []string{"001"}},
	{"NET-06", Path, "A Linux pod reaches a Windows pod by a DNS name.", []string{"001"}},
	{"NET-07", Path, "A Linux pod reaches another Linux pod by its IP.", []string{"001"}},
	{"NET-08", Path, "A Linux pod reaches another Linux pod by a DNS name.", []string{"001"}},
	{"NET-09", Path, "A Linux pod reaches a Service whose endpoints are Windows pods, through its ClusterIP.", []string{"001", "002"}},
	{"NET-10", Path, "A Linux pod reaches a Service whose endpoints are Windows pods, through the Service's DNS name.", []string{"001", "002"}},
	{"NET-11", Path, "A Windows pod reaches a Service whose endpoints are Linux pods, through its ClusterIP.", []string{"001"}},
	{"NET-12", Path, "A Windows pod reaches a Service whose endpoints are Linux pods, through the Service's DNS name.", []string{"001"}},
	{"NET-13", Path, "A Windows pod reaches a Service whose endpoints are Windows pods, by ClusterIP and by name.", []string{"002"}},
	{"NET-14", Path, "A client outside the cluster reaches a NodePort Service through a Windows node's address.", []string{"001", "002"}},
	{"NET-15", Path, "A client outside the cluster reaches a NodePort Service through a Linux node's address.", []string{"001", "002"}},
	{"NET-16", Path, "A Linux pod reaches an address outside the cluster (outbound NAT).", []string{"001", "002"}},
	{"NET-17", Path, "A Windows pod reaches an address outside the cluster; old releases documented this as broken with flannel host-gw.", []string{"001", "002"}},
	{"NET-18", Path, "The Linux control-plane node reaches a Windows pod's IP.", []string{"002"}},
	{"NET-19", Path, "The Linux control-plane node reaches the ClusterIP of a Service backed by Windows pods.", []string{"002"}},
	{"NET-20", Path, "Windows and Linux pods resolve a Service by its fully qualified name, <service>.<namespace>.svc.<cluster domain>.", []string{"002"}},
	{"NET-21", Limit, "A Windows node's host cannot reach the ClusterIP of a Service whose pods run on that node; only Windows pods can.", []string{"002"}},
	{"NET-22", Feature, "A ClusterIP Service in front of the two replicas of the Windows web server spreads connections over both.", []string{"000", "002"}},
	{"NET-23", Feature, "The Windows containers of one pod share a network namespace and an IP, and reach each other on localhost.", []string{"000"}},
	{"NET-24", Feature, "A Windows pod's DNS is set by the cluster: the cluster DNS server and the cluster's search suffixes (flaky in old releases).", []string{"001"}},
	{"NET-25", Path, "Pods on different hosts answer each other's ICMP echo (ping).", []string{"002"}},
	{"NET-26", Path, "A LoadBalancer Service in front of Windows pods gets an external address and answers there.", []string{"002"}},
	{"NET-27", Limit, "A Windows node cannot reach a NodePort Service through its own address (current documentation).", []string{"docs"}},

	// The documented Windows web server.
	{"WEB-01", Feature, "The documented web server (two replicas on Windows Server Core, HTTP on port 80, a NodePort Service) turns Ready and serves its page.", []string{"002", "001"}},
	{"WEB-02", Feature, "kubectl logs of a Windows pod shows what its container writes to standard output.", []string{"002"}},
	{"WEB-03", Feature, "A Service port that differs from the container port reaches Windows pods.", []string{"002"}},

	// Secrets and ConfigMaps.
	{"CFG-01", Feature, "A Windows container sees a Secret key as an environment variable.", []string{"000", "004"}},
	{"CFG-02", Feature, "A Windows container sees a ConfigMap key as an environment variable.", []string{"000", "004"}},
	{"CFG-03", Limit, "Secrets mounted as volumes were documented as unsupported on Windows (Kubernetes 1.9).", []string{"000", "004"}},
	{"CFG-04", Limit, "ConfigMaps mounted as volumes were documented as unsupported on Windows (Kubernetes 1.9).", []string{"000", "004"}},
	{"CFG-05", Feature, "A Secret created from a literal value reaches the container byte for byte.", []string{"004"}},

	// Volumes.
	{"VOL-01", Feature, "A hostPath written with escaped backslashes (C:\\\\etc\\\\foo) mounts read-only in a Windows container.", []string{"000"}},
	{"VOL-02", Feature, "A hostPath written with forward slashes (C:/data mounted at C:/test-pd) mounts in a Windows container.", []string{"000", "004"}},
	{"VOL-03", Feature, "One pod mounts several emptyDir volumes, one at a path without a drive letter (/cache) and one at C:/scratch.", []string{"000", "004"}},
	{"VOL-04", Feature, "The containers of a pod share an emptyDir volume.", []string{"004"}},
	{"VOL-05", Limit, "emptyDir with medium: Memory was documented as unsupported on Windows.", []string{"004"}},
	{"VOL-06", Feature, "A PersistentVolume backed by a hostPath, bound by a claim, mounts in a Windows pod.", []string{"000", "004"}},
	{"VOL-07", Feature, "Data in an emptyDir outlives a container restart and goes with the pod.", []string{"004"}},

	// Scheduling.
	{"SCH-01", Feature, "nodeSelector kubernetes.io/os: windows places pods on Windows nodes only.", []string{"000", "002"}},
	{"SCH-02", Limit, "Older manifests select Windows nodes with the legacy beta.kubernetes.io/os label.", []string{"000", "004"}},
	{"SCH-03", Feature, "A pod without a node selector may be placed on a node of the wrong OS.", []string{"002"}},
	{"SCH-04", Feature, "A taint os=windows:NoSchedule keeps other pods off Windows nodes; a matching toleration with a node selector lets Windows pods on.", []string{"002"}},
	{"SCH-05", Feature, "Windows nodes carry node.kubernetes.io/windows-build, equal to the host's real build (10.0.17763, 10.0.20348, ...).", []string{"002"}},
	{"SCH-06", Feature, "A pod that selects a Windows build no node has stays Pending.", []string{"002"}},
	{"SCH-07", Feature, "A RuntimeClass whose scheduling section holds the node selector and tolerations places the pods that name it.", []string{"002"}},
	{"SCH-08", Feature, "spec.os.name: windows is accepted and does not by itself steer scheduling.", []string{"002"}},
	{"SCH-09", Feature, "A node rejects a pod whose spec.os.name is not the node's OS.", []string{"002"}},
	{"SCH-10", Feature, "CPU and memory requests and limits on Windows containers are accepted and enforced.", []string{"002"}},

	// Documented limitations and differences.
	{"LIM-01", Limit, "Windows pods cannot run privileged containers.", []string{"003"}},
	{"LIM-02", Limit, "Linux-only security settings are not available to Windows pods.", []string{"003", "002"}},
	{"LIM-03", Limit, "Hyper-V isolated containers are not supported; containers run with process isolation.", []string{"000", "003"}},
	{"LIM-04", Limit, "A container image's Windows build must match the host's build.", []string{"003", "002"}},
	{"LIM-05", Limit, "StatefulSets were documented as unsupported on Windows (Kubernetes 1.9).", []string{"000"}},
	{"LIM-06", Limit, "Horizontal Pod Autoscaling of Windows pods was documented as unverified (Kubernetes 1.9).", []string{"000"}},
	{"LIM-07", Limit, "The control plane runs on Linux nodes only.", []string{"000", "003", "004"}},
	{"LIM-08", Feature, "Linux-only DaemonSets (kube-proxy, the CNI agent) stay off Windows nodes, and none of their pods is stuck Pending there.", []string{"001"}},
	{"LIM-09", Feature, "HostProcess containers are the supported way to run node-level work on Windows.", []string{"003"}},

	// Observability.
	{"OBS-01", Feature, "A Windows node's CPU and memory figures come through the kubelet summary API.", []string{"000", "004"}},
	{"OBS-02", Feature, "Pod and container figures of Windows pods come through CRI.", []string{"000", "004"}},
	{"OBS-03", Feature, "kubectl exec runs a command in a Windows container.", []string{"002"}},

	// Container identity.
	{"ID-01", Feature, "runAsUserName sets the user a Windows container's process runs as.", []string{"002"}},
	{"ID-02", Feature, "A gMSA credential spec gives a Windows container an Active Directory identity.", []string{"002"}},

	// Provisioning.
	{"INF-01", Feature, "kind makes a Linux control plane at a chosen Kubernetes version, with an API server the Windows machines can reach.", []string{"000", "003", "card"}},
	{"INF-02", Feature, "A Windows machine reached over WinRM joins with kubeadm join and turns Ready with kubernetes.io/os=windows.", []string{"000", "001"}},
	{"INF-03", Feature, "Windows node services start in the documented order: container runtime, kubelet, kube-proxy, CNI agent.", []string{"001", "003"}},
	{"INF-04", Feature, "Joining is idempotent: a second run on a joined machine changes nothing.", []string{"001"}},
	{"INF-05", Feature, "Reset removes a Windows node cleanly, and the machine can join again.", []string{"001"}},
	{"INF-06", Feature, "flannel (vxlan and host-gw back ends) networks pods across Linux and Windows nodes.", []string{"000", "001", "003"}},
	{"INF-07", Feature, "kube-proxy runs on Windows in kernel-space mode.", []string{"001", "000"}},
	{"INF-08", Feature, "Windows Defender exclusions cover the runtime and node binaries (optional).", []string{"001"}},
	{"INF-09", Feature, "Windows machines of different builds join one cluster, each labelled with its build.", []string{"002"}},
}
