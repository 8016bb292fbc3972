package windows_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/testing/simmachine"
	"github.com/winconform/winconform/testing/upstream"
)

// The rendering of a join is what the join sends: for the same machine,
// cluster and build, every script step's parameters are those the join
// gave the simulated machine, but for the bootstrap token, which the join
// makes and the rendering replaces by kubeadm's placeholder.
func TestRenderJoinIsWhatTheJoinSends(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	if _, err := r.join(windows.JoinOptions{}); err != nil {
		t.Fatal(err)
	}
	r.checkNoProblems()
	rendering, err := windows.RenderJoin(r.machine, windows.RenderOptions{
		KubernetesVersion: testVersion, Endpoint: r.cluster.endpoint, CACert: r.cluster.caPEM, Build: "10.0.20348.2340",
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, s := range rendering.Steps {
		sent := r.sim.Params(s.Name)
		if s.Skipped != "" || s.Item != "" {
			continue
		}
		seen++
		for _, p := range s.Params {
			got := sent[p.Name]
			if s.Name == windows.StepKubeadmJoin && p.Name == "JoinFiles" {
				// The join's token in the rendering's place.
				tokens := r.cluster.tokens
				got = strings.ReplaceAll(got, tokens[len(tokens)-1], nodeconfig.TokenPlaceholder)
			}
			if got != p.Value {
				t.Errorf("step %s, parameter %s: the rendering has\n%s\nthe join sent\n%s", s.Name, p.Name, p.Value, got)
			}
		}
		if len(sent)-1 != len(s.Params) { // StepName is the script's own
			t.Errorf("step %s: the join sent %d parameters, the rendering has %d", s.Name, len(sent)-1, len(s.Params))
		}
	}
	if seen < 8 {
		t.Errorf("only %d steps compared", seen)
	}
}

// A rendering without a cluster writes each step's script and parameters,
// and the files they carry, which kubeadm takes (the placeholder token and
// CA among them).
func TestRenderJoinWritesWhatKubeadmTakes(t *testing.T) {
	t.Parallel()
	m := newRig(t, simmachine.Config{}).machine
	rendering, err := windows.RenderJoin(m, windows.RenderOptions{KubernetesVersion: testVersion, Endpoint: "192.168.56.1:6443"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := rendering.Write(dir); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, m.Name)
	var files []nodeconfig.File
	for _, name := range []string{nodeconfig.JoinConfigFile, nodeconfig.DiscoveryFile, nodeconfig.KubeletPatchFile} {
		data, err := os.ReadFile(filepath.Join(base, "files", "kubeadm-join", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, nodeconfig.File{Name: name, Data: data})
	}
	res, err := upstream.CheckJoin(files, upstream.KindKubelet(kubelines.Default()))
	if err != nil {
		t.Fatalf("kubeadm refuses the rendered files: %v", err)
	}
	if res.Token != nodeconfig.TokenPlaceholder {
		t.Errorf("the rendered token is %q, not the placeholder", res.Token)
	}
	toml, err := os.ReadFile(filepath.Join(base, "files", "containerd", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := (nodeconfig.Containerd{Version: "2.3.7", SandboxImage: images.Ref("pause")}).ConfigTOML(); string(toml) != string(want) {
		t.Errorf("config.toml:\n%s\nwant\n%s", toml, want)
	}
	scripts, _ := filepath.Glob(filepath.Join(base, "*.ps1"))
	params, _ := filepath.Glob(filepath.Join(base, "*.json"))
	if len(scripts) < 8 || len(params) < len(scripts) {
		t.Errorf("%d scripts, %d parameter files", len(scripts), len(params))
	}
	for _, s := range scripts {
		data, _ := os.ReadFile(s)
		if strings.Contains(string(data), testPassword) {
			t.Errorf("%s holds the password", s)
		}
	}
}
