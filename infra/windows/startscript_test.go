package windows_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	kubeadmconstants "k8s.io/kubernetes/cmd/kubeadm/app/constants"
	kubeletphase "k8s.io/kubernetes/cmd/kubeadm/app/phases/kubelet"

	"github.com/winconform/winconform/infra/kube"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/testing/startscript"
)

// hostProcessPod is a rendered HostProcess DaemonSet with the start script
// its container runs (run.ps1 of the ConfigMap it mounts).
type hostProcessPod struct {
	name      string
	spec      corev1.PodSpec
	container *corev1.Container
	script    *startscript.Script
	volumes   []startscript.Volume
	// scriptVolume is the volume of the ConfigMap that holds run.ps1.
	scriptVolume string
}

func renderedHostProcessPods(t *testing.T) []hostProcessPod {
	t.Helper()
	data, err := windows.RenderManifest(prepareOptions())
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.Objects(data)
	if err != nil {
		t.Fatal(err)
	}
	configMaps := map[string]corev1.ConfigMap{}
	var daemonSets []appsv1.DaemonSet
	for _, o := range objs {
		switch o.GetKind() {
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := runtimeConvert(o, &cm); err != nil {
				t.Fatal(err)
			}
			configMaps[cm.Namespace+"/"+cm.Name] = cm
		case "DaemonSet":
			var ds appsv1.DaemonSet
			if err := runtimeConvert(o, &ds); err != nil {
				t.Fatal(err)
			}
			daemonSets = append(daemonSets, ds)
		}
	}
	var pods []hostProcessPod
	for _, ds := range daemonSets {
		spec := ds.Spec.Template.Spec
		if len(spec.Containers) != 1 {
			t.Fatalf("%s has %d containers", ds.Name, len(spec.Containers))
		}
		p := hostProcessPod{name: ds.Name, spec: spec, container: &spec.Containers[0]}
		for _, v := range spec.Volumes {
			if v.ConfigMap == nil {
				continue
			}
			if text, ok := configMaps[ds.Namespace+"/"+v.ConfigMap.Name].Data["run.ps1"]; ok {
				p.scriptVolume = v.Name
				if p.script, err = startscript.Parse(ds.Name+" run.ps1", text); err != nil {
					t.Fatal(err)
				}
			}
		}
		if p.script == nil {
			t.Fatalf("%s mounts no ConfigMap with a run.ps1", ds.Name)
		}
		if p.volumes, err = startscript.Volumes(&p.spec, p.container.Name); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p)
	}
	if len(pods) != 2 {
		t.Fatalf("%d HostProcess DaemonSets, want kube-proxy's and flannel's", len(pods))
	}
	return pods
}

// TestStartScriptsKeepStateOutOfTheirVolumes checks every place each start
// script writes (as the DaemonSet runs it: run.ps1 of its ConfigMap, with
// the container's environment) against the pod's volumes as containerd
// lays them out (see startscript.Layouts):
//   - containerd 1.6 (hcsshim v0.9.12, the one containerd v1.6.36 builds
//     with: internal/jobcontainers/mounts.go setupMounts) links each volume
//     under $env:CONTAINER_SANDBOX_MOUNT_POINT (C:\C\<id>\) only;
//   - containerd 1.7 and 2.x (hcsshim v0.10.0-rc.7 in containerd v1.7.0,
//     v0.11.7 in v1.7.28, v0.13.0 in v2.1.4: the same setupMounts) bind each
//     volume at its mountPath, C: prefixed by containerd's CRI
//     (pkg/cri/opts/spec_windows_opts.go, WithWindowsMounts, which also
//     passes "ro" for a read-only CRI mount), read-only through
//     BINDFLT_FLAG_READ_ONLY_MAPPING (internal/jobobject ApplyFileBinding,
//     hcsshim commit 6f6e1c8c "Readonly option for hostprocess mounts"), and
//     link it under C:\hpc\ as well, best effort. microsoft/hcsshim#1699
//     and KEP-1981's Compatibility section: 1.7 always binds.
//   - The kubelet hands ConfigMap, Secret and projected volumes (the
//     ServiceAccount token) to the runtime read-only (kubernetes v1.34.4,
//     pkg/kubelet/kubelet_pods.go makeMounts: mustMountRO from the volume
//     plugin's GetAttributes, ReadOnly: true in pkg/volume/configmap,
//     secret, projected).
//
// Before, kube-proxy-windows.ps1 wrote kubeconfig.conf and sourceVip.json
// into C:\var\lib\kube-proxy-windows, its ConfigMap's mountPath: harmless
// on 1.6, a write into the read-only bind on 1.7. sig-windows-tools'
// HostProcess scripts (hostprocess/flannel/kube-proxy/start.ps1 before its
// removal in 729ae7c, hostprocess/calico/kube-proxy/start.ps1) mount their
// ConfigMaps under /mounts or /var/lib/kube-proxy and keep the source VIP
// in C:\sourcevip; windows-testing (capz/run-capz-e2e.sh) runs them on
// containerd 1.7.16.
//
// Every write must also fall where the machine's reset cleans: the
// harness's C:\winconform\node\<component>, and what flannel and
// host-local keep where their CNI plugins read it.
func TestStartScriptsKeepStateOutOfTheirVolumes(t *testing.T) {
	t.Parallel()
	allowed := map[string][]string{
		windows.KubeProxyWindowsDaemonSet: {`C:\winconform\node\kube-proxy`, `C:\var\lib\cni\networks`},
		windows.FlannelWindowsDaemonSet:   {`C:\winconform\node\flannel`, `C:\run\flannel`, `C:\etc\cni\net.d`},
	}
	state := map[string][]string{
		windows.KubeProxyWindowsDaemonSet: {nodeconfig.KubeProxyKubeconfig, `C:\winconform\node\kube-proxy\sourceVip.json`},
		windows.FlannelWindowsDaemonSet:   {`C:\winconform\node\flannel\kubeconfig.conf`, `C:\run\flannel\subnet.env`},
	}
	for _, p := range renderedHostProcessPods(t) {
		for _, layout := range startscript.Layouts(p.volumes) {
			writes, err := p.script.Writes(layout.Env(p.container))
			if err != nil {
				t.Errorf("%s, %s: the model cannot read every write:\n%v", p.name, layout.Name, err)
			}
			var written []string
			for _, w := range writes {
				for _, path := range w.Paths {
					written = append(written, path)
					if err := layout.CheckWrite(w.Access, path); err != nil {
						t.Errorf("%s line %d: %s %s: %v", p.script.Name, w.Line, w.What, w.Expr, err)
					}
					if !slices.ContainsFunc(allowed[p.name], func(dir string) bool { return path == dir || strings.HasPrefix(path, dir+`\`) }) {
						t.Errorf("%s line %d: %s writes %s, outside %v (what the machine's reset cleans)", p.script.Name, w.Line, w.What, path, allowed[p.name])
					}
				}
			}
			for _, want := range state[p.name] {
				if !slices.Contains(written, want) {
					t.Errorf("%s, %s: the model finds no write of %s among %v", p.name, layout.Name, want, written)
				}
			}
		}
	}
}

// TestFlannelTakesKubeadmNodeIP checks flannel-windows.ps1 against what
// kubeadm writes: the join gives the kubelet the node's address through
// kubeadm (nodeRegistration.kubeletExtraArgs node-ip), and kubeadm writes
// it to kubeadm-flags.env (kubernetes v1.34.4,
// cmd/kubeadm/app/phases/kubelet/flags.go WriteKubeletArgsToFile:
// KUBELET_KUBEADM_ARGS=%q of "--name=value" arguments, in KubeletRunDirectory,
// /var/lib/kubelet, C:\var\lib\kubelet on Windows). The script must read
// that file, which no volume of the pod may hide in either layout, and its
// own -match pattern must find the address in kubeadm's own output. Which
// interface it then takes, and its error when the address is on none, are
// PowerShell's to run: flannel-windows.Tests.ps1. (sig-windows-tools'
// flanneld start.ps1, hostprocess/flannel/flanneld/start.ps1 before its
// removal in 729ae7c, took the first default route's interface, as this
// script did before: a machine with two NICs could get flannel on one and
// the kubelet on the other.)
func TestFlannelTakesKubeadmNodeIP(t *testing.T) {
	t.Parallel()
	flagsFile := startscript.Clean(filepath.ToSlash(filepath.Join(kubeadmconstants.KubeletRunDirectory, kubeadmconstants.KubeletEnvFileName)))
	var flannel *hostProcessPod
	pods := renderedHostProcessPods(t)
	for i := range pods {
		if pods[i].name == windows.FlannelWindowsDaemonSet {
			flannel = &pods[i]
		}
	}
	for _, layout := range startscript.Layouts(flannel.volumes) {
		reads := flannel.script.Reads(layout.Env(flannel.container))
		if !slices.ContainsFunc(reads, func(r startscript.Resolved) bool { return slices.Contains(r.Paths, flagsFile) }) {
			t.Errorf("%s does not read %s, where kubeadm writes the kubelet's --node-ip", flannel.script.Name, flagsFile)
		}
		if v := layout.Shadowed(flagsFile); v != nil {
			t.Errorf("%s: the volume %s (%s, %s) hides the host's %s", layout.Name, v.Volume.Name, v.How, v.Path, flagsFile)
		}
	}

	var patterns []*regexp.Regexp
	for _, p := range flannel.script.Patterns() {
		if strings.Contains(p, "--node-ip") {
			// PowerShell's -match is .NET's, case-insensitive; this one's
			// constructs are RE2's as well.
			re, err := regexp.Compile("(?i)" + p)
			if err != nil {
				t.Fatalf("the script's pattern %q is not one Go reads: %v", p, err)
			}
			patterns = append(patterns, re)
		}
	}
	if len(patterns) == 0 {
		t.Fatalf("%s matches no --node-ip in kubeadm-flags.env", flannel.script.Name)
	}
	base := []kubeadmapi.Arg{
		{Name: "container-runtime-endpoint", Value: "npipe:////./pipe/containerd-containerd"},
		{Name: "register-with-taints", Value: "os=windows:NoSchedule"},
	}
	for _, c := range []struct {
		name      string
		base      []kubeadmapi.Arg
		overrides []kubeadmapi.Arg
		want      string
	}{
		{"node-ip among kubeadm's flags", base, []kubeadmapi.Arg{{Name: "node-ip", Value: "10.2.0.4"}}, "10.2.0.4"},
		{"node-ip alone", nil, []kubeadmapi.Arg{{Name: "node-ip", Value: "10.2.0.4"}}, "10.2.0.4"},
		{"dual-stack node-ip", base, []kubeadmapi.Arg{{Name: "node-ip", Value: "10.2.0.4,fd00:10:2::4"}}, "10.2.0.4,fd00:10:2::4"},
		{"no node-ip", base, []kubeadmapi.Arg{{Name: "v", Value: "2"}}, ""},
	} {
		dir := t.TempDir()
		if err := kubeletphase.WriteKubeletArgsToFile(c.base, c.overrides, dir); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, kubeadmconstants.KubeletEnvFileName))
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range patterns {
			got := ""
			for _, line := range strings.Split(string(data), "\n") {
				if m := re.FindStringSubmatch(line); m != nil && got == "" {
					got = m[len(m)-1]
				}
			}
			if got != c.want {
				t.Errorf("%s: the script's pattern %s finds %q in kubeadm's\n%s\nwant %q", c.name, re, got, data, c.want)
			}
		}
	}
}

// TestDaemonSetsFindTheirStartScript checks the containers' commands: each
// runs run.ps1 of its ConfigMap, which containerd 1.6 links under
// $env:CONTAINER_SANDBOX_MOUNT_POINT only, and 1.7 and 2.x bind at the
// mountPath, linking it under C:\hpc\ as well only as a best effort
// (hcsshim internal/jobcontainers/mounts.go setupMounts: "Best effort; log
// if the backwards compatible symlink approach doesn't work"). The command
// must try a place of each kind.
func TestDaemonSetsFindTheirStartScript(t *testing.T) {
	t.Parallel()
	for _, p := range renderedHostProcessPods(t) {
		cmd := p.container.Command
		if len(cmd) < 2 || !strings.EqualFold(cmd[len(cmd)-2], "-Command") {
			t.Fatalf("%s: the command %q does not end with -Command and its script", p.name, cmd)
		}
		command, err := startscript.Parse(p.name+" command", cmd[len(cmd)-1])
		if err != nil {
			t.Fatal(err)
		}
		for _, layout := range startscript.Layouts(p.volumes) {
			tried, err := command.Started(layout.Env(p.container))
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			kinds := map[string]bool{}
			for _, path := range tried {
				for _, v := range layout.Views {
					if v.Volume.Name == p.scriptVolume && strings.EqualFold(path, v.Path+`\run.ps1`) {
						kinds[v.How] = true
					}
				}
			}
			for _, v := range layout.Views {
				if v.Volume.Name == p.scriptVolume && !kinds[v.How] {
					t.Errorf("%s, %s: the command tries %v, and not run.ps1 where containerd %s", p.name, layout.Name, tried, v.How)
				}
			}
		}
	}
}
