package windows_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/testing/simmachine"
)

// The version skew a join refuses, before it touches the machine (not one
// WinRM request): Kubernetes' version skew policy lets a kubelet (and
// kube-proxy) be neither newer than the API server nor more than three
// minors older (kubernetes.io/releases/version-skew-policy; kubeadm join
// would not stop it: on a join, kubeadm v1.37.2's KubeletVersionCheck,
// cmd/kubeadm/app/preflight/checks.go, gets no control plane version and
// compares the kubelet with kubeadm only); containerd's support matrix
// (RELEASES.md of containerd v2.4.2) pairs 1.35 with 2.2.0+, 2.1.5+ and
// 1.7.28+, 1.36 with 2.3.0+ and 2.2.0+, 1.37 with 2.4.0+ and 2.3.0+, so 1.35
// is the last line with containerd 1.x; the lines the harness supports are
// internal/kubelines'. Each refusal names what to change.
func TestJoinRefusesVersionsBeforeTouchingTheMachine(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cluster string
		machine func(*config.Machine)
		want    []string // in the error, each
	}{
		{name: "a 1.37 kubelet on a 1.36 cluster", cluster: "v1.36.3",
			machine: func(m *config.Machine) { m.KubeletVersion = "v1.37.2" },
			want:    []string{"the kubelet v1.37.2 (kubeletVersion) is newer than the API server, v1.36.3", "install a kubelet of 1.36, such as v1.36.3 (kubeletVersion"}},
		{name: "a 1.37 kubelet from a mirror on a 1.36 cluster", cluster: "v1.36.3",
			machine: func(m *config.Machine) { m.Binaries["kubelet"] = "https://mirror.lab/v1.37.2/kubelet.exe" },
			want:    []string{"the kubelet v1.37.2 (binaries.kubelet https://mirror.lab/v1.37.2/kubelet.exe) is newer than the API server"}},
		{name: "a 1.33 kubelet on a 1.37 cluster", cluster: "v1.37.2",
			machine: func(m *config.Machine) { m.KubeletVersion = "v1.33.7" },
			want:    []string{"the kubelet v1.33.7 (kubeletVersion) is 4 minors older than the API server, v1.37.2", "install a kubelet of 1.34 or newer"}},
		{name: "containerd 1.7 for a 1.36 kubelet", cluster: "v1.36.3",
			machine: func(m *config.Machine) { m.ContainerdVersion = "1.7.28" },
			want: []string{"containerd 1.7.28 (containerdVersion) with the kubelet v1.36.3 (the cluster's version)",
				"1.35 is the last line that supports containerd 1.x", "pairs 1.36 with 2.3.0+, 2.2.0+", "set containerdVersion to 2.3.7"}},
		{name: "containerd 1.7 from an archive for a 1.37 kubelet", cluster: "v1.37.2",
			machine: func(m *config.Machine) {
				m.Binaries["containerd"] = `C:\install\containerd-1.7.28-windows-amd64.tar.gz`
			},
			want: []string{"containerd 1.7.28 (binaries.containerd", "point binaries.containerd at containerd 2.3.7"}},
		{name: "containerd 2.1 for a 1.36 kubelet", cluster: "v1.36.3",
			machine: func(m *config.Machine) { m.ContainerdVersion = "2.1.9" },
			want:    []string{"containerd 2.1.9 does not support Kubernetes 1.36"}},
		{name: "a version that is no Kubernetes version", cluster: "v1.37.2",
			machine: func(m *config.Machine) { m.KubeletVersion = "1.37" },
			want:    []string{`the kubelet's version 1.37 (kubeletVersion) is not a Kubernetes version such as v1.37.2`}},
		{name: "a cluster of a line the harness does not know", cluster: "v1.39.0",
			want: []string{`the cluster: "v1.39.0" is on Kubernetes 1.39, newer than any line the harness knows`, "the supported lines are 1.35 (v1.35.4), 1.36 (v1.36.3), 1.37 (v1.37.2) or 1.38 (v1.38.0-beta.0, a pre-release)", "make the cluster of a supported line"}},
		// The line in pre-release: only its pinned version, on either side.
		{name: "a cluster of the pre-release line's unreleased release", cluster: "v1.38.0",
			want: []string{`the cluster: "v1.38.0" is no version of Kubernetes 1.38 the harness knows: the line is in pre-release, pinned to v1.38.0-beta.0`}},
		{name: "a cluster of another pre-release of the line", cluster: "v1.38.0-rc.0",
			want: []string{`the cluster: "v1.38.0-rc.0" is no version of Kubernetes 1.38 the harness knows`}},
		{name: "a pre-release kubelet on a 1.37 cluster", cluster: "v1.37.2",
			machine: func(m *config.Machine) { m.KubeletVersion = "v1.38.0-beta.0" },
			want:    []string{"the kubelet v1.38.0-beta.0 (kubeletVersion) is newer than the API server, v1.37.2"}},
		{name: "another pre-release's kubelet on the pre-release cluster", cluster: "v1.38.0-beta.0",
			machine: func(m *config.Machine) {
				m.Binaries["kubelet"] = "https://dl.k8s.io/v1.38.0-rc.1/bin/windows/amd64/kubelet.exe"
			},
			want: []string{`the kubelet v1.38.0-rc.1 (binaries.kubelet https://dl.k8s.io/v1.38.0-rc.1/bin/windows/amd64/kubelet.exe): "v1.38.0-rc.1" is no version of Kubernetes 1.38 the harness knows`}},
		{name: "a 1.34 kubelet on the pre-release cluster", cluster: "v1.38.0-beta.0",
			machine: func(m *config.Machine) { m.KubeletVersion = "v1.34.4" },
			want:    []string{"the kubelet v1.34.4 (kubeletVersion) is 4 minors older than the API server, v1.38.0-beta.0", "install a kubelet of 1.35 or newer"}},
		{name: "a kubelet of a line past its end of life", cluster: "v1.35.4",
			machine: func(m *config.Machine) { m.KubeletVersion = "v1.34.4" },
			want:    []string{`the kubelet v1.34.4 (kubeletVersion): "v1.34.4" is on Kubernetes 1.34, older than the oldest line the harness supports`}},
		{name: "a containerd version that does not exist", cluster: "v1.37.2",
			machine: func(m *config.Machine) { m.ContainerdVersion = "2.3.70" },
			want: []string{"containerd 2.3.70 (containerdVersion): containerd 2.3.70 is no release the harness knows",
				"2.3.0 to 2.3.7", "from containerd's tags and the Go module proxy"}},
		{name: "containerd from a directory, its version not given", cluster: "v1.37.2",
			machine: func(m *config.Machine) { m.Binaries["containerd"] = `C:\install\containerd` },
			want:    []string{`binaries.containerd C:\install\containerd names no version`, "set containerdVersion to the version it holds"}},
		{name: "kubeletVersion and binaries.kubelet disagree", cluster: "v1.37.2",
			machine: func(m *config.Machine) {
				m.KubeletVersion = "v1.36.3"
				m.Binaries["kubelet"] = "https://mirror.lab/v1.37.2/kubelet.exe"
			},
			want: []string{"v1.36.3 (kubeletVersion) and v1.37.2 (binaries.kubelet https://mirror.lab/v1.37.2/kubelet.exe) disagree", "make them agree"}},
		{name: "a kube-proxy newer than the API server", cluster: "v1.36.3",
			machine: func(m *config.Machine) { m.Binaries["kube-proxy"] = "https://mirror.lab/v1.37.2/kube-proxy.exe" },
			want:    []string{"the kube-proxy v1.37.2 (binaries.kube-proxy https://mirror.lab/v1.37.2/kube-proxy.exe) is newer than the API server"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, simmachine.Config{ContainersInstalled: true}, func(m *config.Machine) {
				if tc.machine != nil {
					tc.machine(m)
				}
			})
			r.cluster.version = tc.cluster
			rep, err := r.join(windows.JoinOptions{})
			if !errors.Is(err, windows.ErrVersions) {
				t.Fatalf("Join = %v, want ErrVersions", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error lacks %q:\n%v", w, err)
				}
			}
			if rep == nil || rep.Error == "" || len(rep.Steps) != 0 {
				t.Errorf("report %+v, want the error and no step", rep)
			}
			if reqs := r.srv.Requests(); len(reqs) != 0 || len(r.sim.Steps()) != 0 {
				t.Errorf("the machine got %d requests, ran %v: nothing was to reach it", len(reqs), r.sim.Steps())
			}
		})
	}
}

// On a cluster of the line in pre-release (v1.38.0-beta.0, as its API
// server reports it, or with what a build adds), kubelets of 1.35 to 1.37
// and the pre-release's own are taken; the Windows binaries of the
// pre-release are its own (dl.k8s.io lays pre-releases out as releases),
// and its crictl is the line's (cri-tools has no v1.38 yet).
func TestPreReleaseClusterTakesTheSkewedKubelets(t *testing.T) {
	for _, tc := range []struct{ apiServer, kubelet, containerd, line string }{
		{"v1.38.0-beta.0", "", "", "1.38"},
		{"v1.38.0-beta.0+0123456789ab", "", "", "1.38"},
		{"v1.38.0-beta.0", "v1.38.0-beta.0", "2.4.2", "1.38"},
		{"v1.38.0-beta.0", "v1.37.2", "", "1.37"},
		{"v1.38.0-beta.0", "v1.36.3", "2.2.9", "1.36"},
		{"v1.38.0-beta.0", "v1.35.4", "1.7.28", "1.35"},
	} {
		m := config.Machine{Name: "win-a", KubeletVersion: tc.kubelet, ContainerdVersion: tc.containerd}
		v, err := windows.ResolveVersions(m, tc.apiServer)
		if err != nil {
			t.Errorf("%s kubelet %q on %s: %v", tc.line, tc.kubelet, tc.apiServer, err)
			continue
		}
		if v.Line.Name() != tc.line {
			t.Errorf("kubelet %q on %s: line %s, want %s", tc.kubelet, tc.apiServer, v.Line.Name(), tc.line)
		}
	}
	srcs := windows.DefaultSources("v1.38.0-beta.0", kubelines.DefaultContainerd)
	if got, want := srcs["kubelet"], "https://dl.k8s.io/v1.38.0-beta.0/bin/windows/amd64/kubelet.exe"; got != want {
		t.Errorf("kubelet source %q, want %q", got, want)
	}
	if got, want := srcs["crictl"], "https://github.com/kubernetes-sigs/cri-tools/releases/download/v1.37.0/crictl-v1.37.0-windows-amd64.tar.gz"; got != want {
		t.Errorf("crictl source %q, want %q", got, want)
	}
}

// A kubelet older than the API server (within three minors) joins, with
// the versions the check saw installed: here a 1.35 node, the last line
// that runs containerd 1.7, on a 1.37 cluster. The join installs the
// kubelet of kubeletVersion (not the cluster's), containerd 1.7.28 with
// containerd 1.7's configuration, and the node runs a pod.
func TestJoinOlderKubeletWithContainerd17(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true}, func(m *config.Machine) {
		m.KubeletVersion = "v1.35.4"
		m.ContainerdVersion = "1.7.28"
	})
	rep, err := r.join(windows.JoinOptions{})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	r.checkNoProblems()
	if v := rep.Versions; v == nil || v.APIServer != testVersion || v.Kubelet != "v1.35.4" || v.KubeProxy != "v1.35.4" || v.Containerd != "1.7.28" {
		t.Errorf("report versions %+v", rep.Versions)
	}
	for path, want := range map[string]string{
		nodeconfig.InstallDir + `\kubelet.exe`:       "v1.35.4",
		nodeconfig.InstallDir + `\kube-proxy.exe`:    "v1.35.4",
		nodeconfig.ContainerdDir + `\containerd.exe`: "1.7.28",
	} {
		if got, _ := r.sim.File(path); got != want {
			t.Errorf("%s is %q, want %q", path, got, want)
		}
	}
	if src := r.sim.Params(windows.StepKubelet)["KubeletSource"]; src != "https://dl.k8s.io/v1.35.4/bin/windows/amd64/kubelet.exe" {
		t.Errorf("kubelet.exe from %s", src)
	}
	if src := r.sim.Params(windows.StepContainerd)["Source"]; src != "https://github.com/containerd/containerd/releases/download/v1.7.28/containerd-1.7.28-windows-amd64.tar.gz" {
		t.Errorf("containerd from %s", src)
	}
	if cfg := r.containerdConfig(); cfg.Version != 2 {
		t.Errorf("containerd 1.7 runs with a configuration of version %d, not its own", cfg.Version)
	} else if s, _ := cfg.Str("grpc.v1.cri.sandbox_image"); s != images.Ref("pause") {
		t.Errorf("containerd 1.7's sandbox image %q, want %s", s, images.Ref("pause"))
	}
}

// JoinAll checks every machine's versions first, and touches none when one
// is refused: the error names each refused machine.
func TestJoinAllRefusesVersionsBeforeAnyMachine(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	good := r.machine
	bad := r.machine
	bad.Name = "win-2022-b"
	bad.ContainerdVersion = "1.7.28" // on a 1.37 cluster
	results, err := windows.JoinAll(fleetContext(t), []config.Machine{good, bad}, r.cluster,
		windows.FleetOptions{Timeouts: testTimeouts(), Connect: func(config.Machine) (windows.Conn, error) { return r.exec, nil }})
	var ve *windows.VersionsError
	if !errors.As(err, &ve) || !errors.Is(err, windows.ErrVersions) || len(ve.Errs) != 1 || !strings.Contains(err.Error(), "machine win-2022-b") {
		t.Fatalf("JoinAll = %v, want win-2022-b's versions refused", err)
	}
	if len(results) != 0 || len(r.srv.Requests()) != 0 {
		t.Errorf("%d results, %d requests to the machine: nothing was to be touched", len(results), len(r.srv.Requests()))
	}
}
