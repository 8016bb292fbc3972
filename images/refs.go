package images

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"text/tabwriter"

	"github.com/winconform/winconform/internal/winrelease"
)

// WindowsRelease is a Windows Server long-term servicing channel (LTSC)
// release as the image map names it: a Windows node runs one, and can run
// only containers built on the same one (process isolation, the only kind
// Kubernetes uses). The releases are winrelease's table.
type WindowsRelease struct {
	Name          string // ltsc2019, ltsc2022, ltsc2025
	Build         string // the first three parts of os.version: 10.0.20348
	NanoserverTag string // tag of mcr.microsoft.com/windows/nanoserver
	ServercoreTag string // tag of mcr.microsoft.com/windows/servercore
}

func windowsRelease(r winrelease.Release) WindowsRelease {
	return WindowsRelease{Name: r.Name, Build: r.Build.String(), NanoserverTag: r.NanoserverTag, ServercoreTag: r.ServercoreTag}
}

// DefaultWindowsRelease is the release of the images named without one
// ("servercore", "nanoserver").
const DefaultWindowsRelease = "ltsc2022"

// WindowsReleases lists the Windows releases the harness knows, oldest first.
func WindowsReleases() []WindowsRelease {
	var out []WindowsRelease
	for _, r := range winrelease.Releases() {
		out = append(out, windowsRelease(r))
	}
	return out
}

// ReleaseForBuild is the release of a Windows build, as a node reports it
// (status.nodeInfo.kernelVersion, 10.0.20348.2340, or the label
// node.kubernetes.io/windows-build, 10.0.20348).
func ReleaseForBuild(build string) (WindowsRelease, error) {
	if v, err := winrelease.Parse(build); err == nil {
		if r, ok := v.Release(); ok {
			return windowsRelease(r), nil
		}
	}
	return WindowsRelease{}, fmt.Errorf("Windows build %q is none the harness knows (%s)", build, winrelease.List())
}

// Image names with a variant per Windows release: <family>-<release> names
// one, <family> alone the DefaultWindowsRelease one.
const (
	Servercore = "servercore"
	Nanoserver = "nanoserver"
	// Pause is the sandbox (pause) image a Windows node's containerd runs
	// for every pod: registry.k8s.io/pause at the release's tag (see
	// winrelease.Release.PauseTag), pause-ltsc2025 being the first with a
	// Windows Server 2025 variant.
	Pause = "pause"
)

// defaults maps every image name the harness uses to its default reference.
var defaults = func() map[string]string {
	d := map[string]string{
		"probe": Probe,
		// The base of the Windows nodes' HostProcess DaemonSets (kube-proxy,
		// flannel): it has no OS version, so it runs on every Windows build.
		"windows-hostprocess": "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0",
	}
	for _, r := range winrelease.Releases() {
		d[Servercore+"-"+r.Name] = "mcr.microsoft.com/windows/servercore:" + r.ServercoreTag
		d[Nanoserver+"-"+r.Name] = "mcr.microsoft.com/windows/nanoserver:" + r.NanoserverTag
		d[Pause+"-"+r.Name] = "registry.k8s.io/pause:" + r.PauseTag
	}
	d[Servercore] = d[Servercore+"-"+DefaultWindowsRelease]
	d[Nanoserver] = d[Nanoserver+"-"+DefaultWindowsRelease]
	d[Pause] = d[Pause+"-"+DefaultWindowsRelease]
	return d
}()

// Names lists the names of every image the harness uses, sorted.
func Names() []string { return slices.Sorted(maps.Keys(defaults)) }

// Default is the reference of the image called name when nothing overrides
// it. It panics when no image has that name, a programming error.
func Default(name string) string {
	ref, ok := defaults[name]
	if !ok {
		panic(fmt.Sprintf("images: no image is named %q (names: %s)", name, strings.Join(Names(), ", ")))
	}
	return ref
}

// active holds the overrides in force (nil: none).
var active atomic.Pointer[Overrides]

// Ref is the reference to use for the image called name: the default, or
// what the overrides in force (SetOverrides, LoadOverrides, FromEnv) make of
// it. It panics when no image has that name, a programming error.
func Ref(name string) string {
	return resolve(active.Load(), name, Default(name))
}

// RefForBuild is Ref of the variant of family (Servercore, Nanoserver or Pause)
// that runs on a Windows node of build (see ReleaseForBuild), such as
// "servercore-ltsc2019" for 10.0.17763.5458.
func RefForBuild(family, build string) (string, error) {
	if _, ok := defaults[family+"-"+DefaultWindowsRelease]; !ok {
		return "", fmt.Errorf("image %q has no variant per Windows release (%s, %s and %s do)", family, Servercore, Nanoserver, Pause)
	}
	r, err := ReleaseForBuild(build)
	if err != nil {
		return "", err
	}
	return Ref(family + "-" + r.Name), nil
}

// WindowsNodeImages are the images the harness's suites run on a real
// Windows node of build (its kernel version, 10.0.20348.2340, or its build
// label) with process isolation: the probe (an index with a variant per
// release) and Server Core of the node's release (the web server fixture,
// the identity suite). The HostProcess image has no os.version; the
// nanoserver variants the limitations suite runs on another release than
// the node's are meant not to run.
func WindowsNodeImages(build string) (map[string]string, error) {
	servercore, err := RefForBuild(Servercore, build)
	if err != nil {
		return nil, err
	}
	return map[string]string{"the probe image": Ref("probe"), "Server Core": servercore}, nil
}

// WindowsBases are the bases of the Windows variants of the probe image by
// release name, from the nanoserver-<release> images (overrides applied).
func WindowsBases() map[string]string {
	bases := map[string]string{}
	for _, r := range winrelease.Releases() {
		bases[r.Name] = Ref(Nanoserver + "-" + r.Name)
	}
	return bases
}

// WriteList writes every image name with the reference the suites use
// (overrides applied, the default beside an override), as a table: what
// `winconform images list` and the suite binary's --list-images print.
func WriteList(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tREFERENCE")
	for _, n := range Names() {
		fmt.Fprintf(w, "%s\t%s", n, Ref(n))
		if Ref(n) != Default(n) {
			fmt.Fprintf(w, "\t(default %s)", Default(n))
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}
