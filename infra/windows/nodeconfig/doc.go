// Package nodeconfig composes, in Go on the harness's side, every file and
// command line a Windows node's components read: kubeadm's
// JoinConfiguration and its discovery kubeconfig, the kubelet's command line
// and the patch that gives a Windows kubelet its own configuration,
// kube-proxy's flags, and containerd's config.toml for the configuration
// version of the containerd the node runs. The join's PowerShell steps only
// place these bytes (infra/windows/scripts), and `winconform join --render`
// writes them for review.
//
// The rule this package exists for (docs/windows-machines.md, "What the join
// sends"): what a Windows component reads is judged, in go test, by that
// component's own code at the version the join installs (kubeadm's decoding,
// defaults and validation, the kubelet's flag set and configuration
// validation, kube-proxy's flag set and validation, containerd's own binary),
// on exactly the bytes composed here; the tests beside this package do that
// through testing/upstream, and show each judge refuses a broken
// input.
package nodeconfig

// Where things go on a machine.
const (
	// InstallDir holds the Kubernetes binaries (kubelet, kubeadm,
	// kube-proxy, kube-log-runner, crictl, flanneld).
	InstallDir    = `C:\k`
	ContainerdDir = `C:\Program Files\containerd`
	ContainerdLog = `C:\var\log\containerd\containerd.log`
	CNIBinDir     = `C:\opt\cni\bin`
	CNIConfDir    = `C:\etc\cni\net.d`
	ProbePath     = `C:\winconform\probe.exe`
	// CRISocket is containerd's named pipe, in the URL form kubeadm and the
	// kubelet take on Windows (kubeadm's DefaultContainerRuntimeURLScheme
	// there is npipe: cmd/kubeadm/app/apis/kubeadm/v1beta4/defaults_windows.go).
	CRISocket = "npipe:////./pipe/containerd-containerd"
	// KubeletLogFile is where kube-log-runner writes the kubelet's log.
	KubeletLogFile = `C:\var\log\kubelet\kubelet.log`
	// JoinDir is the directory the kubeadm-join step writes the files of
	// JoinFiles into, and runs kubeadm join in.
	JoinDir = `C:\winconform\join`
	// UnderlayRouteMetric is the route metric of the routes the join gives
	// a machine of the routed underlay (infra/underlay): Windows routes
	// carry no comment or protocol a program can set, so the metric is the
	// harness's mark, by which reset and the underlay find them.
	UnderlayRouteMetric = 211
)
