package windows

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/cni"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/internal/text"
	"github.com/winconform/winconform/internal/winrelease"
)

// The kubelet's port and the firewall rule that opens it.
const (
	KubeletFirewallRule = "winconform-kubelet"
	KubeletPort         = 10250
)

// Default versions of what a machine installs when its inventory names no
// source (binaries); containerd's is kubelines.DefaultContainerd.
// Machines without Internet access take sources from their inventory: a
// path on the machine or a URL they can reach.
const (
	DefaultCNIPluginsVersion = "v1.7.1"
	DefaultFlannelCNIVersion = "v1.6.0-flannel1"
	kubernetesDownloads      = "https://dl.k8s.io"
)

// DefaultSources are the download URLs used for components the inventory
// gives no source for, by binaries key: the Kubernetes binaries of
// kubernetesVersion from dl.k8s.io, containerd's Windows archive of
// containerdVersion from its GitHub release (containerd-X.Y.Z-windows-amd64.tar.gz,
// its Makefile's RELEASE, the same from 1.7 to 2.x: bin\containerd.exe,
// ctr.exe and containerd-shim-runhcs-v1.exe).
func DefaultSources(kubernetesVersion, containerdVersion string) map[string]string {
	k8s := kubernetesDownloads + "/" + kubernetesVersion + "/bin/windows/amd64/"
	return map[string]string{
		"containerd":      "https://github.com/containerd/containerd/releases/download/v" + containerdVersion + "/containerd-" + containerdVersion + "-windows-amd64.tar.gz",
		"cni":             "https://github.com/containernetworking/plugins/releases/download/" + DefaultCNIPluginsVersion + "/cni-plugins-windows-amd64-" + DefaultCNIPluginsVersion + ".tgz",
		"cni-flannel":     "https://github.com/flannel-io/cni-plugin/releases/download/" + DefaultFlannelCNIVersion + "/flannel-amd64.exe",
		"flanneld":        "https://github.com/flannel-io/flannel/releases/download/" + cni.FlannelVersion + "/flanneld.exe",
		"kubelet":         k8s + "kubelet.exe",
		"kubeadm":         k8s + "kubeadm.exe",
		"kube-proxy":      k8s + "kube-proxy.exe",
		"kube-log-runner": k8s + "kube-log-runner.exe",
		"crictl":          crictlSource(kubernetesVersion),
	}
}

// crictlSource is cri-tools' Windows archive of crictl for a Kubernetes
// version: cri-tools releases a minor with each Kubernetes minor, v1.34.0
// for v1.34.x, and crictl of the cluster's minor speaks its CRI; a line in
// pre-release has none yet and names the one it takes
// (kubelines.Line.CrictlVersion: v1.37.0 for 1.38).
func crictlSource(kubernetesVersion string) string {
	var v string
	if l, err := kubelines.Find(release(kubernetesVersion)); err == nil {
		v = l.CrictlVersion()
	} else {
		parts := strings.SplitN(strings.TrimPrefix(kubernetesVersion, "v"), ".", 3)
		if len(parts) < 2 {
			return ""
		}
		v = "v" + parts[0] + "." + parts[1] + ".0"
	}
	return "https://github.com/kubernetes-sigs/cri-tools/releases/download/" + v + "/crictl-" + v + "-windows-amd64.tar.gz"
}

var crictlVersion = regexp.MustCompile(`crictl-(v\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)-windows`)

// crictlParams installs crictl in InstallDir, beside the kubelet, with its
// configuration naming containerd's pipe.
func (j *joinRun) crictlParams() ([]Param, string, error) {
	src := j.source("crictl")
	version := ""
	if m := crictlVersion.FindStringSubmatch(src); m != nil {
		version = m[1]
	}
	return []Param{{"Source", src}, {"Version", version}, {"InstallDir", nodeconfig.InstallDir}, {"Endpoint", nodeconfig.CRISocket}}, "", nil
}

// JoinOptions are how Join runs.
type JoinOptions struct {
	// Timeouts bound the steps and waits; zero fields take the defaults.
	Timeouts Timeouts
	// ConnRetries is how many times a step whose connection dropped runs
	// again once the machine answers; 2 when 0, none when negative.
	ConnRetries int
	// Log receives progress lines; nil for none.
	Log io.Writer
	// LogsDir, when set, receives the machine's logs (CollectLogs) when
	// the join fails.
	LogsDir string
	// Registry reads the indexes of the images the node will run, before
	// it pulls them; nil for their own registries (RemoteRegistry).
	Registry ImageRegistry
	// UnderlayRoutes are the machine's routes to the kind network through
	// the kind host (the routed underlay, infra/underlay), which the
	// underlay-route step gives it; none for a machine on the kind
	// network's bridge.
	UnderlayRoutes []UnderlayRoute
}

func (o JoinOptions) retries() int {
	switch {
	case o.ConnRetries < 0:
		return 0
	case o.ConnRetries == 0:
		return 2
	}
	return o.ConnRetries
}

// JoinReport is what Join did to a machine.
type JoinReport struct {
	Machine           string `json:"machine"`
	Address           string `json:"address"`
	KubernetesVersion string `json:"kubernetesVersion"`
	// Versions are what the node runs ("" until they are resolved).
	Versions *Versions `json:"versions,omitempty"`
	// Build is the machine's Windows build, major.minor.build.UBR.
	Build string `json:"build,omitempty"`
	// Steps are the steps run, in order.
	Steps []StepReport `json:"steps"`
	// Order is the names of the steps in the order they ran (INF-03).
	Order    []string  `json:"order"`
	Reboots  int       `json:"reboots"`
	Started  time.Time `json:"started"`
	Duration Duration  `json:"duration"`
	// Error is the failure that stopped the join, if any.
	Error string `json:"error,omitempty"`
	// LogsDir is where the machine's logs went after a failure.
	LogsDir string `json:"logsDir,omitempty"`
}

// Changed reports whether any step changed anything.
func (r *JoinReport) Changed() bool {
	for _, s := range r.Steps {
		if s.Changed {
			return true
		}
	}
	return false
}

// Step returns the report of the step called name.
func (r *JoinReport) Step(name string) (StepReport, bool) {
	for _, s := range r.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return StepReport{}, false
}

// ComponentOrder is the order in which the steps set up the node's
// services: runtime, kubelet, kube-proxy, cni when all went well.
func (r *JoinReport) ComponentOrder() []string {
	var out []string
	for _, name := range r.Order {
		if s, ok := stepNamed(name); ok && s.component != "" {
			out = append(out, s.component)
		}
	}
	return out
}

// joinRun is one Join.
type joinRun struct {
	*runner
	m       config.Machine
	cp      ControlPlane
	version string
	report  *JoinReport
	// build is the machine's, from preflight.
	build fullBuild
	// preflightSent and preflightGot bound when the machine read its clock
	// for preflight (runPreflight).
	preflightSent, preflightGot time.Time
	// registry reads the node's images' indexes (JoinOptions.Registry).
	registry ImageRegistry
	// remaining are the pods still on the node after drain.
	remaining []string
	// versions are what the node runs (ResolveVersions).
	versions Versions
	// underlay are the machine's routes to the kind network (JoinOptions.UnderlayRoutes).
	underlay []UnderlayRoute
}

var kubernetesVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

// Join makes the machine a node of the cluster: it checks the machine's
// Windows, installs the runtime, the kubelet, kube-proxy and the CNI (in
// that order), opens the kubelet's port, adds Defender exclusions (when the
// inventory asks), puts the probe program in place, runs kubeadm join, and
// waits for the node to be Ready with the machine's build; then it applies
// the inventory's labels and taints. Every step is idempotent: joining a
// joined machine changes nothing, and the report says so.
//
// The report is returned even with an error, with the steps run until then.
// The error is a *StepError (errors.Is-able against the named errors of this
// package and the remote package's classes).
func Join(ctx context.Context, m config.Machine, exec remote.Exec, cp ControlPlane, opts JoinOptions) (rep *JoinReport, err error) {
	if exec == nil || cp == nil {
		return nil, errors.New("windows: Join needs a remote exec and a control plane")
	}
	if m.Name == "" {
		return nil, errors.New("windows: the machine has no name")
	}
	version := cp.KubernetesVersion()
	if !kubernetesVersion.MatchString(version) {
		return nil, fmt.Errorf("windows: the control plane's Kubernetes version %q is not a version such as v1.37.2", version)
	}
	rep = &JoinReport{Machine: m.Name, Address: m.Address, KubernetesVersion: version, Started: time.Now()}
	versions, err := ResolveVersions(m, version)
	if err != nil {
		rep.Error = err.Error()
		return rep, err
	}
	rep.Versions = &versions
	j := &joinRun{
		runner: &runner{machine: m.Name, exec: exec, t: opts.Timeouts.withDefaults(), retries: opts.retries(), log: opts.Log},
		m:      m, cp: cp, version: version, report: rep, registry: opts.Registry, versions: versions,
		underlay: opts.UnderlayRoutes,
	}
	if j.registry == nil {
		j.registry = defaultRegistry
	}
	defer func() {
		rep.Reboots = j.reboots
		rep.Duration = Duration(time.Since(rep.Started))
		if err == nil {
			return
		}
		rep.Error = err.Error()
		if opts.LogsDir != "" {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
			defer cancel()
			if lerr := CollectLogs(lctx, exec, opts.LogsDir); lerr != nil {
				j.logf("collecting logs after the failure: %v", lerr)
			}
			rep.LogsDir = opts.LogsDir
		}
	}()
	j.logf("joining (Kubernetes %s; the node's kubelet %s, kube-proxy %s, containerd %s)", version, versions.Kubelet, versions.KubeProxy, versions.Containerd)
	if err := j.runTable(ctx, joinTable); err != nil {
		return rep, err
	}
	j.logf("joined: node %s is Ready (%s)", m.Name, summarize(rep))
	return rep, nil
}

func summarize(rep *JoinReport) string {
	changed := 0
	for _, s := range rep.Steps {
		if s.Changed {
			changed++
		}
	}
	if changed == 0 {
		return "nothing changed"
	}
	return fmt.Sprintf("%d of %d steps changed something", changed, len(rep.Steps))
}

// finish records a step's end.
func (j *joinRun) finish(sr *StepReport, changed bool, err error) {
	sr.Duration = Duration(time.Since(sr.Started))
	sr.Changed = changed
	if err != nil {
		sr.Error = err.Error()
		j.logf("%s: failed after %s", sr.Name, time.Duration(sr.Duration).Round(time.Millisecond))
	} else {
		word := "unchanged"
		switch {
		case sr.Skipped:
			word = "skipped (" + sr.SkipReason + ")"
		case changed:
			word = "changed"
		}
		j.logf("%s: %s (%s)", sr.Name, word, time.Duration(sr.Duration).Round(time.Millisecond))
	}
	j.report.Steps = append(j.report.Steps, *sr)
}

// fullBuild is a Windows build with its update revision.
type fullBuild struct {
	winrelease.Build
	UBR int
}

func (b fullBuild) String() string { return fmt.Sprintf("%s.%d", b.Build, b.UBR) }

func parseFullBuild(s string) (fullBuild, error) {
	v, err := winrelease.Parse(s)
	if err != nil {
		return fullBuild{}, err
	}
	return fullBuild{Build: v.Build, UBR: v.Revision}, nil
}

func releasesText() string {
	var parts []string
	for _, r := range winrelease.Releases() {
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", r.Build, r.Product, r.Name))
	}
	return strings.Join(parts, ", ")
}

// preflight checks the machine: its build, the account's rights, its
// system drive's free space, its clock, and the variants of the images it
// will run (checkImages); a reboot Windows has pending is
// done first (see settlePendingReboot).
func (j *joinRun) preflight(ctx context.Context, s step, sr *StepReport) (bool, error) {
	st, err := j.runPreflight(ctx, s, sr)
	if err == nil {
		err = j.checkPreflight(st)
	}
	if err == nil {
		st, err = j.settlePendingReboot(ctx, s, sr, st)
	}
	if err == nil {
		err = j.checkDisk(st)
	}
	if err == nil {
		err = j.checkClock(ctx, st, sr)
	}
	if err == nil {
		err = j.checkImages(ctx, sr)
	}
	return false, err
}

func (j *joinRun) checkPreflight(st status) error {
	fail := func(kind error, format string, args ...any) error {
		return &StepError{Machine: j.m.Name, Step: StepPreflight, Kind: kind, Detail: fmt.Sprintf(format, args...)}
	}
	b, err := parseFullBuild(st.str("build"))
	if err != nil {
		return fail(ErrBadStatus, "the machine reported no usable build: %v", err)
	}
	j.build = b
	j.report.Build = b.String()
	j.bootTime = st.str("bootTime")
	if !b.Build.Supported() {
		return fail(ErrBuildTooOld, "Windows build %s is too old: Kubernetes supports Windows nodes from Windows Server 2019 (%s) on; the supported releases are %s",
			b, winrelease.Oldest(), releasesText())
	}
	if want := j.m.ExpectedBuild; !want.IsZero() && b.Build.Compare(want) != 0 {
		return fail(ErrBuildMismatch, "the machine runs Windows build %s, but the inventory expects %s (expectedBuild): point the inventory at the right machine, or fix expectedBuild",
			b.Build, want)
	}
	if !st.flag("admin") {
		return fail(ErrNotAdmin, "the account %s is not an administrator of the machine: joining installs services; use an account in the Administrators group", st.str("user"))
	}
	// With several adapters the kubelet takes the address its host name
	// resolves to (or the first suitable interface), flannel the interface
	// of the lowest-metric default route: they can disagree, and pods
	// then reach the node on an address its CNI does not serve.
	if addrs := st.list("addresses"); j.m.NodeIP == "" && len(addrs) > 1 {
		return fail(ErrNodeAddress, "the machine has %d routable IPv4 addresses (%s) and its inventory entry sets no nodeIP: the kubelet and flannel would each pick one, and may disagree; set nodeIP to the address the cluster reaches the machine on",
			len(addrs), strings.Join(addrs, ", "))
	}
	return nil
}

// source is where a component comes from: the inventory's binaries, else
// the default download.
func (j *joinRun) source(key string) string {
	if s := j.m.Binaries[key]; s != "" {
		return s
	}
	return j.defaults(key)[key]
}

// defaults are the default sources of the node's versions: kube-proxy's
// of its own, the other Kubernetes binaries' of the kubelet's.
func (j *joinRun) defaults(key string) map[string]string {
	k8s := j.versions.Kubelet
	if key == "kube-proxy" {
		k8s = j.versions.KubeProxy
	}
	return DefaultSources(k8s, j.versions.Containerd)
}

// kubernetesSource is where one of the Kubernetes node binaries comes from:
// binaries.<name> (the .exe itself), else binaries.kubernetes (an archive
// such as kubernetes-node-windows-amd64.tar.gz, or a URL or directory
// holding <name>.exe), else dl.k8s.io.
func (j *joinRun) kubernetesSource(name string) string {
	if s := j.m.Binaries[name]; s != "" {
		return s
	}
	base := j.m.Binaries["kubernetes"]
	switch {
	case base == "":
		return j.defaults(name)[name]
	case isArchive(base):
		return base
	case strings.HasPrefix(base, "http://") || strings.HasPrefix(base, "https://"):
		u, err := url.Parse(base)
		if err != nil {
			return strings.TrimRight(base, "/") + "/" + name + ".exe"
		}
		u.Path = path.Join(u.Path, name+".exe")
		return u.String()
	}
	return strings.TrimRight(base, `\/`) + `\` + name + ".exe"
}

func isArchive(s string) bool {
	s = strings.ToLower(strings.SplitN(s, "?", 2)[0])
	return strings.HasSuffix(s, ".zip") || strings.HasSuffix(s, ".tgz") || strings.HasSuffix(s, ".tar.gz")
}

var containerdVersion = regexp.MustCompile(`containerd-v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)-windows`)

// versionOf is the containerd version its source's name holds, such as
// 2.3.7 from containerd-2.3.7-windows-amd64.tar.gz; "" when the name says
// none (the inventory's containerdVersion must then say it).
func versionOf(source string) string {
	if m := containerdVersion.FindStringSubmatch(source); m != nil {
		return m[1]
	}
	return ""
}

func (j *joinRun) containerdParams() ([]Param, string, error) {
	cfg, err := nodeconfig.Containerd{Version: j.versions.Containerd, SandboxImage: j.sandboxImage()}.ConfigTOML()
	if err != nil {
		return nil, "", err
	}
	return []Param{
		{"Source", j.source("containerd")}, {"Version", j.versions.Containerd}, {"Config", string(cfg)},
		{"InstallDir", nodeconfig.ContainerdDir}, {"CNIBinDir", nodeconfig.CNIBinDir}, {"CNIConfDir", nodeconfig.CNIConfDir}, {"LogFile", nodeconfig.ContainerdLog},
	}, "", nil
}

func (j *joinRun) kubeletParams() ([]Param, string, error) {
	return []Param{
		{"KubernetesVersion", j.versions.Kubelet},
		{"KubeletSource", j.kubernetesSource("kubelet")},
		{"KubeadmSource", j.kubernetesSource("kubeadm")},
		{"KubeLogRunnerSource", j.kubernetesSource("kube-log-runner")},
		{"InstallDir", nodeconfig.InstallDir},
		{"KubeletCommand", nodeconfig.KubeletCommand()},
		{"NodeName", j.m.Name},
		{"NodeIP", j.m.NodeIP},
	}, "", nil
}

func (j *joinRun) kubeProxyParams() ([]Param, string, error) {
	return []Param{
		{"KubernetesVersion", j.versions.KubeProxy}, {"KubeProxySource", j.kubernetesSource("kube-proxy")}, {"InstallDir", nodeconfig.InstallDir},
	}, "", nil
}

func (j *joinRun) cniParams() ([]Param, string, error) {
	plugins := j.source("cni")
	flannel := j.m.Binaries["cni-flannel"]
	if flannel == "" && j.m.Binaries["cni"] == "" {
		// The default plugins archive lacks flannel, which has its own releases.
		flannel = j.defaults("cni-flannel")["cni-flannel"]
	}
	return []Param{
		{"PluginsSource", plugins}, {"FlannelPluginSource", flannel}, {"FlanneldSource", j.source("flanneld")},
		{"BinDir", nodeconfig.CNIBinDir}, {"ConfDir", nodeconfig.CNIConfDir}, {"InstallDir", nodeconfig.InstallDir},
	}, "", nil
}

func (j *joinRun) firewallParams() ([]Param, string, error) {
	return []Param{{"RuleName", KubeletFirewallRule}, {"Port", strconv.Itoa(KubeletPort)}}, "", nil
}

// DefenderExclusions are the paths and processes excluded from Microsoft
// Defender's scans when the inventory asks (INF-08).
func DefenderExclusions() (paths, processes []string) {
	paths = []string{nodeconfig.ContainerdDir, `C:\ProgramData\containerd`, nodeconfig.InstallDir, nodeconfig.CNIBinDir, `C:\var\lib\kubelet`}
	processes = []string{
		nodeconfig.ContainerdDir + `\containerd.exe`, nodeconfig.ContainerdDir + `\containerd-shim-runhcs-v1.exe`,
		nodeconfig.InstallDir + `\kubelet.exe`, nodeconfig.InstallDir + `\kube-proxy.exe`, nodeconfig.InstallDir + `\flanneld.exe`,
	}
	return paths, processes
}

func (j *joinRun) defenderParams() ([]Param, string, error) {
	if !j.m.DefenderExclusions {
		return nil, "the inventory does not ask for Defender exclusions", nil
	}
	paths, processes := DefenderExclusions()
	return []Param{{"Paths", strings.Join(paths, "|")}, {"Processes", strings.Join(processes, "|")}}, "", nil
}

// CloudMetadataAddress is the instance metadata service of the clouds
// (Azure's IMDS, AWS's, GCE's metadata server).
const CloudMetadataAddress = "169.254.169.254"

// metadataRouteParams gives a machine in a cloud (the inventory's
// cloudMetadataRoute) the host's persistent route to the metadata service;
// a lab machine has none to reach.
func (j *joinRun) metadataRouteParams() ([]Param, string, error) {
	if !j.m.CloudMetadataRoute {
		return nil, "the inventory does not ask for the cloud metadata route (cloudMetadataRoute)", nil
	}
	return []Param{{"Destination", CloudMetadataAddress + "/32"}}, "", nil
}

func (j *joinRun) probeParams() ([]Param, string, error) {
	src := j.m.Binaries["probe"]
	if src == "" {
		return nil, "the inventory gives no binaries.probe", nil
	}
	return []Param{{"Source", src}, {"Destination", nodeconfig.ProbePath}}, "", nil
}

// kubeadmJoin asks the machine whether it has joined; if not, it removes
// what an earlier join left (kubeadm's files and the node services' state,
// then flannel's HNS networks, whose removal may drop the connection for a
// moment), makes a bootstrap token and runs kubeadm join, then deletes the
// token.
func (j *joinRun) kubeadmJoin(ctx context.Context, s step, sr *StepReport) (bool, error) {
	cs := j.cp.Clientset()
	// Whether the cluster has the Node is read for every attempt: a join
	// whose connection the node's first HNS network cut (flannel makes it
	// once the Node registers) has joined, and its script, run again, must
	// see that rather than count the join's files as leftovers.
	params := func(mode, files string) stepParams {
		return func(ctx context.Context) ([]Param, error) {
			nodeExists := false
			if _, gerr := cs.CoreV1().Nodes().Get(ctx, j.m.Name, metav1.GetOptions{}); gerr == nil {
				nodeExists = true
			} else if !apierrors.IsNotFound(gerr) {
				return nil, &StepError{Machine: j.m.Name, Step: StepKubeadmJoin, Kind: ErrKubeadmJoin, Err: gerr, Detail: "cannot look the node up"}
			}
			return j.kubeadmJoinParams(mode, nodeExists, files), nil
		}
	}
	st, err := j.runScript(ctx, s, sr, params("check", ""))
	if err != nil || !st.flag("needsJoin") {
		return st.Changed, err
	}
	if left := st.list("leftovers"); len(left) > 0 {
		j.logf("%s: an earlier join left %s: removing it", StepKubeadmJoin, strings.Join(left, ", "))
		if _, err := j.runScript(ctx, s, sr, params("clean", "")); err != nil {
			return true, err
		}
		// Reset's step; its timeout is the table's (Timeouts.Steps).
		networks, _, _ := hnsCleanupParams(j)
		if _, err := j.runScript(ctx, step{name: StepHNSCleanup, script: true}, sr, fixed(networks)); err != nil {
			return true, err
		}
	}

	jc, err := j.cp.JoinCommand(ctx)
	if err == nil {
		err = jc.Validate()
	}
	if err != nil {
		return false, &StepError{Machine: j.m.Name, Step: StepKubeadmJoin, Kind: ErrJoinCommand, Err: err, Detail: "the control plane gave no join command"}
	}
	defer j.deleteToken(jc)
	ca, err := clusterCA(ctx, cs, j.cp.RESTConfig())
	if err == nil {
		err = verifyCA(ca, jc.CACertHashes)
	}
	if err != nil {
		return false, &StepError{Machine: j.m.Name, Step: StepKubeadmJoin, Kind: ErrCACertHash, Err: err, Detail: "cannot trust the cluster's CA"}
	}
	files, err := (nodeconfig.Join{NodeName: j.m.Name, NodeIP: j.m.NodeIP, Token: jc.Token, Endpoint: jc.Endpoint, CACert: ca}).Param()
	if err != nil {
		return false, &StepError{Machine: j.m.Name, Step: StepKubeadmJoin, Kind: ErrKubeadmJoin, Err: err, Detail: "composing the join's files"}
	}
	// The token is a credential: keep it out of the results, errors and
	// transcripts, as the password is.
	if k, ok := j.exec.(remote.SecretKeeper); ok {
		k.AddSecret(jc.Token)
	}
	j.logf("%s: kubeadm join via %s", StepKubeadmJoin, jc.Endpoint)
	st, err = j.runScript(ctx, s, sr, params("join", files))
	var se *StepError
	if errors.As(err, &se) && se.Kind == ErrStepFailed {
		se.Kind = ErrKubeadmJoin
		se.Detail = fmt.Sprintf("kubeadm join exited with an error (script exit code %d); its last lines", se.ExitCode)
		return true, se
	}
	if err == nil && !st.flag("joined") {
		return true, &StepError{Machine: j.m.Name, Step: StepKubeadmJoin, Kind: ErrKubeadmJoin, Detail: "the machine did not join", Output: text.LastLines(sr.Output, 20)}
	}
	return true, err
}

// kubeadmJoinParams are the kubeadm-join step's parameters: its mode,
// whether the cluster has the node, and (in join mode) the join's files
// (nodeconfig.Join.Param).
func (j *joinRun) kubeadmJoinParams(mode string, nodeExists bool, files string) []Param {
	return []Param{
		{"Mode", mode}, {"NodeName", j.m.Name}, {"NodeIP", j.m.NodeIP}, {"NodeExists", strconv.FormatBool(nodeExists)},
		{"JoinFiles", files}, {"JoinDir", nodeconfig.JoinDir},
		{"InstallDir", nodeconfig.InstallDir}, {"CRISocket", nodeconfig.CRISocket}, {"CNIConfDir", nodeconfig.CNIConfDir},
		{"KubeletCommand", nodeconfig.KubeletCommand()},
	}
}

// deleteToken deletes the bootstrap token once the join is done, so that
// the token in the transcripts is useless.
func (j *joinRun) deleteToken(jc JoinCommand) {
	if err := deleteBootstrapToken(j.cp.Clientset(), jc); err != nil {
		j.logf("%v", err)
	}
}

// deleteBootstrapToken deletes the token's Secret, so that the token no
// longer works.
func deleteBootstrapToken(cs kubernetes.Interface, jc JoinCommand) error {
	id := jc.TokenID()
	if id == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, "bootstrap-token-"+id, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting bootstrap token %s: %v (it expires by itself)", id, err)
	}
	return nil
}
