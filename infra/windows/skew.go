package windows

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/internal/kubelines"
)

// ErrVersions: the versions a machine's node would run cannot work with
// the cluster (or with each other), or are not versions the harness
// knows. Nothing was done to the machine.
var ErrVersions = errors.New("node versions refused")

// StepVersions names the check of a node's versions in errors: it runs
// before any step, on no machine.
const StepVersions = "versions"

// Versions are what a machine's node runs, as the join installs them. Each
// comes from, in order: the inventory's version field, the version its
// source's name holds (binaries.kubelet such as
// https://mirror.lab/v1.36.3/kubelet.exe, binaries.containerd such as
// containerd-1.7.28-windows-amd64.tar.gz), else the cluster's version for
// the Kubernetes binaries and kubelines.DefaultContainerd for containerd.
// The steps check the binaries they install against these.
type Versions struct {
	// APIServer is the cluster's version.
	APIServer string `json:"apiServer"`
	// Kubelet is the kubelet's, and kubeadm's and kube-log-runner's.
	Kubelet string `json:"kubelet"`
	// KubeProxy is kube-proxy's: the kubelet's unless binaries.kube-proxy
	// names another.
	KubeProxy string `json:"kubeProxy"`
	// Containerd is containerd's, MAJOR.MINOR.PATCH.
	Containerd string `json:"containerd"`
	// Line is the kubelet's Kubernetes line.
	Line kubelines.Line `json:"-"`
}

// A version and where it came from, for messages.
type origin struct{ version, from string }

func (o origin) String() string { return o.version + " (" + o.from + ")" }

// kubernetesInName finds a Kubernetes version in a source's name: v1.M.P
// (or a pre-release of it, v1.M.P-rc.N) after a separator, as dl.k8s.io and
// mirrors of it lay them out; a separator or the end must follow it.
var kubernetesInName = regexp.MustCompile(`(?:^|[/\\_=-])(v1\.\d+\.\d+(?:-(?:alpha|beta|rc)\.\d+)?)`)

func kubernetesVersionsIn(s string) []string {
	var out []string
	for _, m := range kubernetesInName.FindAllStringSubmatchIndex(s, -1) {
		if end := m[3]; end == len(s) || strings.ContainsRune(`/\_.?`, rune(s[end])) {
			out = append(out, s[m[2]:m[3]])
		}
	}
	slices.Sort(out)
	return out
}

// namedVersion is the version a source's name holds ("" for none); an
// error when it holds several.
func namedVersion(field, source string, find func(string) []string) (origin, error) {
	found := slices.Compact(find(source))
	switch len(found) {
	case 0:
		return origin{}, nil
	case 1:
		return origin{found[0], field + " " + source}, nil
	}
	return origin{}, fmt.Errorf("%s %s names several versions (%s), and the join cannot tell which it holds: give it a path or name that holds one", field, source, strings.Join(found, ", "))
}

func containerdVersionsIn(s string) []string {
	if v := versionOf(s); v != "" {
		return []string{v}
	}
	return nil
}

// pick is the version of a component: the inventory's field, else the one
// its source names, else def. The field and a source that disagree are an
// error: the step would install the source and refuse it.
func pick(field origin, sources []origin, def origin) (origin, error) {
	got := field
	for _, s := range sources {
		switch {
		case s.version == "":
		case got.version == "":
			got = s
		case strings.TrimPrefix(got.version, "v") != strings.TrimPrefix(s.version, "v"):
			return origin{}, fmt.Errorf("%s and %s disagree: the join installs %s and the step refuses a binary of another version; make them agree", got, s, got.version)
		}
	}
	if got.version == "" {
		got = def
	}
	return got, nil
}

// release is a Kubernetes version as a line knows it: v1.MINOR.PATCH, or
// a pre-release upstream tags (v1.38.0-beta.0), without what a build adds
// (a cluster's API server may report v1.37.2-dirty or
// v1.38.0-beta.0+abcdef): kubelines decides whether the line knows it.
func release(v string) string {
	if m := releaseHead.FindString(v); m != "" {
		return "v" + strings.TrimPrefix(m, "v")
	}
	return v
}

var releaseHead = regexp.MustCompile(`^v?1\.\d+\.\d+(?:-(?:alpha|beta|rc)\.\d+)?`)

// minorOf is the minor version of a Kubernetes version v1.MINOR.PATCH[...].
func minorOf(v string) (int, bool) {
	m := regexp.MustCompile(`^v?1\.(\d+)\.\d+`).FindStringSubmatch(v)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// ResolveVersions says which versions machine m's node will run against a
// cluster of apiServer, and checks them before any machine work, as
// Kubernetes' version skew policy and containerd's support matrix want: no
// kubelet or kube-proxy newer than the API server or more than three
// minors older (kubernetes.io/releases/version-skew-policy; kubeadm join
// does not check it: its preflight's KubeletVersionCheck gets no control
// plane version on a join and compares the kubelet with kubeadm only, which
// the join installs at the kubelet's version, k8s.io/kubernetes v1.37.2
// cmd/kubeadm/app/preflight/checks.go JoinNodeChecks), every line one the
// harness supports
// (internal/kubelines), and a containerd release the harness knows that the
// kubelet's line works with (containerd 1.x only up to 1.35). The error, a
// *StepError of kind ErrVersions, lists every problem with its fix.
func ResolveVersions(m config.Machine, apiServer string) (Versions, error) {
	return resolveVersions(m, apiServer, false)
}

// CheckMachineVersions makes the checks of ResolveVersions that need no
// cluster, of the versions machine m names itself (kubeletVersion,
// containerdVersion, the binaries' names): a known containerd release, a
// kubelet of a supported line and a patch that exists, containerd and the
// kubelet's line together. A VM file's machine block, which vms up checks
// before the provider is contacted, is held to them; the join makes them
// again, with the cluster's version.
func CheckMachineVersions(m config.Machine) error {
	_, err := resolveVersions(m, "", true)
	return err
}

// resolveVersions is ResolveVersions; alone, the cluster is not known
// (apiServer is empty): only what m names is checked.
func resolveVersions(m config.Machine, apiServer string, alone bool) (Versions, error) {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	bin := m.Binaries

	// The Kubernetes binaries.
	kubeletSources := []origin{}
	for _, key := range []string{"kubelet", "kubeadm"} {
		if src := bin[key]; src != "" {
			o, err := namedVersion("binaries."+key, src, kubernetesVersionsIn)
			if err != nil {
				fail("%v", err)
			}
			kubeletSources = append(kubeletSources, o)
		}
	}
	if src := bin["kubernetes"]; src != "" && (bin["kubelet"] == "" || bin["kubeadm"] == "") {
		o, err := namedVersion("binaries.kubernetes", src, kubernetesVersionsIn)
		if err != nil {
			fail("%v", err)
		}
		kubeletSources = append(kubeletSources, o)
	}
	field := origin{}
	if m.KubeletVersion != "" {
		field = origin{m.KubeletVersion, "kubeletVersion"}
	}
	kubelet, err := pick(field, kubeletSources, origin{apiServer, "the cluster's version"})
	if err != nil {
		fail("%v", err)
	}
	kubeProxy := kubelet
	if src := bin["kube-proxy"]; src != "" {
		o, err := namedVersion("binaries.kube-proxy", src, kubernetesVersionsIn)
		if err != nil {
			fail("%v", err)
		}
		if o.version != "" {
			kubeProxy = o
		}
	}

	// containerd.
	field = origin{}
	if m.ContainerdVersion != "" {
		field = origin{m.ContainerdVersion, "containerdVersion"}
	}
	var containerdSources []origin
	if src := bin["containerd"]; src != "" {
		o, _ := namedVersion("binaries.containerd", src, containerdVersionsIn)
		if o.version == "" && field.version == "" {
			fail("binaries.containerd %s names no version, and the inventory gives no containerdVersion: set containerdVersion to the version it holds (such as %s), so that the join can check it against the cluster's line before it touches the machine", src, kubelines.DefaultContainerd)
		}
		containerdSources = append(containerdSources, o)
	}
	containerd, err := pick(field, containerdSources, origin{kubelines.DefaultContainerd, "the harness's default"})
	if err != nil {
		fail("%v", err)
	}

	// The cluster's line, and the skew.
	apiMinor, ok := minorOf(apiServer)
	clusterKnown := false
	_, clusterErr := kubelines.Find(release(apiServer))
	switch {
	case alone:
	case apiServer == "":
		fail("the API server's version could not be read: check that the cluster is up and reachable")
	case !ok:
		fail("the API server's version %q is not a Kubernetes version such as %s", apiServer, kubelines.Default().Version)
	case clusterErr != nil:
		fail("the cluster: %v; make the cluster of a supported line (KUBERNETES_VERSION, or the cluster file's kubernetesVersion)", clusterErr)
	default:
		clusterKnown = true
	}
	var line kubelines.Line
	components := []struct {
		name string
		o    origin
	}{{"kubelet", kubelet}}
	if kubeProxy != kubelet {
		components = append(components, struct {
			name string
			o    origin
		}{"kube-proxy", kubeProxy})
	}
	for _, c := range components {
		if alone && c.o.version == "" {
			continue // the cluster's version, not known here
		}
		minor, isVersion := minorOf(c.o.version)
		if !isVersion {
			fail("the %s's version %s is not a Kubernetes version such as %s", c.name, c.o, kubelines.Default().Version)
			continue
		}
		l, lineErr := kubelines.Find(release(c.o.version))
		if lineErr == nil && c.name == "kubelet" {
			line = l
		}
		switch {
		case !alone && !ok: // the API server's version is refused above
		case !alone && minor > apiMinor:
			fail("the %s %s is newer than the API server, %s: a %s may not be newer than the API server (Kubernetes' version skew policy): install a %s of 1.%d, such as %s (%s), or join a cluster of 1.%d",
				c.name, c.o, apiServer, c.name, c.name, apiMinor, apiServer, fixField(c.name), minor)
		case !alone && apiMinor-minor > 3:
			fail("the %s %s is %d minors older than the API server, %s: a %s may be at most three minors older (Kubernetes' version skew policy): install a %s of 1.%d or newer (%s)",
				c.name, c.o, apiMinor-minor, apiServer, c.name, c.name, apiMinor-3, fixField(c.name))
		case lineErr != nil && (alone || clusterKnown || minor != apiMinor):
			fail("the %s %s: %v; install a %s of a supported line (%s)", c.name, c.o, lineErr, c.name, fixField(c.name))
		case lineErr == nil:
			if err := kubelines.CheckPatch(release(c.o.version)); err != nil {
				fail("the %s %s: %v (%s)", c.name, c.o, err, fixField(c.name))
			}
		}
	}
	if containerd.version != "" {
		if err := kubelines.CheckContainerd(containerd.version); err != nil {
			fail("containerd %s: %v", containerd, err)
		} else if line.Minor != 0 {
			if err := line.SupportsContainerd(containerd.version); err != nil {
				fix := "set containerdVersion to " + kubelines.DefaultContainerd + " (containerd's long-term line), or remove it for that default"
				if bin["containerd"] != "" {
					fix = "point binaries.containerd at containerd " + kubelines.DefaultContainerd + " (containerd's long-term line) and set containerdVersion to match"
				}
				fail("containerd %s with the kubelet %s: %v: %s", containerd, kubelet, err, fix)
			}
		}
	}
	if len(problems) > 0 {
		return Versions{}, &StepError{Machine: m.Name, Step: StepVersions, Kind: ErrVersions, ExitCode: -1,
			Detail: "the node's versions are refused, before any work on the machine:\n  - " + strings.Join(problems, "\n  - ")}
	}
	return Versions{APIServer: apiServer, Kubelet: kubelet.version, KubeProxy: kubeProxy.version,
		Containerd: strings.TrimPrefix(containerd.version, "v"), Line: line}, nil
}

// fixField says where a component's version is set.
func fixField(component string) string {
	if component == "kube-proxy" {
		return "binaries.kube-proxy, or kubeletVersion for both"
	}
	return "kubeletVersion, and binaries.kubelet when the machine takes it from a mirror"
}

// VersionsError is JoinAll's refusal of machines whose versions cannot
// work (ResolveVersions), made before it touches any machine.
type VersionsError struct {
	// Errs are the refused machines' errors, each a *StepError of kind
	// ErrVersions.
	Errs []error
}

func (e *VersionsError) Error() string {
	parts := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		parts[i] = err.Error()
	}
	return fmt.Sprintf("%d machine(s) refused before any machine was touched:\n%s", len(e.Errs), strings.Join(parts, "\n"))
}

// Unwrap returns each machine's error.
func (e *VersionsError) Unwrap() []error { return e.Errs }

// CheckVersions resolves every machine's versions against a cluster of
// apiServer; a *VersionsError when any is refused. The CLI calls it with
// the version of the cluster it will make or use, before any cluster work;
// JoinAll again with the API server's own version.
func CheckVersions(machines []config.Machine, apiServer string) error {
	return checkFleetVersions(machines, apiServer)
}

// checkFleetVersions resolves every machine's versions; a *VersionsError
// when any is refused.
func checkFleetVersions(machines []config.Machine, apiServer string) error {
	var errs []error
	for _, m := range machines {
		if _, err := ResolveVersions(m, apiServer); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return &VersionsError{Errs: errs}
	}
	return nil
}
