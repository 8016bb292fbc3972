package windows

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/cni"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/winrelease"
)

// RenderOptions are what RenderJoin takes in place of what only the cluster
// and the machine know when a join runs.
type RenderOptions struct {
	// KubernetesVersion is the cluster's, such as v1.37.2.
	KubernetesVersion string
	// Endpoint is the API server's host:port as the machines reach it.
	Endpoint string
	// CACert is the cluster's CA certificate (PEM);
	// nodeconfig.PlaceholderCACert when nil.
	CACert []byte
	// Build is the machine's Windows build (major.minor.build.UBR), which
	// picks the images of its variant: the inventory's expectedBuild when
	// set, else PlaceholderBuild.
	Build string
	// UnderlayRoutes are the machine's routes to the kind network, which
	// the join computes from the cluster's network (none: the
	// underlay-route step renders as skipped).
	UnderlayRoutes []UnderlayRoute
}

// PlaceholderBuild is the Windows build a rendering takes for a machine
// whose inventory gives no expectedBuild: Windows Server 2022 at the
// update revision internal/winrelease knows.
func PlaceholderBuild() string {
	for _, r := range winrelease.Releases() {
		if r.Build.String() == "10.0.20348" {
			return fmt.Sprintf("%s.%d", r.Build, r.Revision)
		}
	}
	return "10.0.20348.0"
}

// RenderedStep is one script of a join as the join would send it.
type RenderedStep struct {
	// Name is the step's; a step run once per item (images) is rendered
	// once per item, Item naming it.
	Name, Item string
	// Skipped says why the join would not run the step ("" when it would).
	Skipped string
	// Params are the script's parameters, and Script the script as the
	// harness renders it for WinRM (RenderScript): its parameters assigned,
	// lib.ps1's helpers, its body.
	Params []Param
	Script string
}

// Rendering is what Join would send a machine, script step by script step.
type Rendering struct {
	Machine string
	Build   string
	Steps   []RenderedStep
}

// RenderJoin renders what Join would send machine m, without contacting the
// machine or the cluster: every script step of the join, in order, with
// the parameters and the script the join would send, kubeadm-join in its
// join mode. In place of what the join learns as it runs, it takes opts:
// the bootstrap token is nodeconfig.TokenPlaceholder (never a live one),
// the CA and the build are opts' (placeholders by default), and a password
// stays the inventory's reference (the join never sends one in a script).
// Steps done through the cluster's API (the node Ready, the pod check) are
// not scripts and are not rendered.
func RenderJoin(m config.Machine, opts RenderOptions) (*Rendering, error) {
	if m.Name == "" {
		return nil, fmt.Errorf("windows: the machine has no name")
	}
	if !kubernetesVersion.MatchString(opts.KubernetesVersion) {
		return nil, fmt.Errorf("windows: the cluster's Kubernetes version %q is not a version such as v1.37.2", opts.KubernetesVersion)
	}
	versions, err := ResolveVersions(m, opts.KubernetesVersion)
	if err != nil {
		return nil, err
	}
	if opts.Build == "" {
		opts.Build = PlaceholderBuild()
		if !m.ExpectedBuild.IsZero() {
			opts.Build = m.ExpectedBuild.String() + ".0"
		}
	}
	build, err := parseFullBuild(opts.Build)
	if err != nil {
		return nil, fmt.Errorf("windows: the build %q: %w", opts.Build, err)
	}
	ca := opts.CACert
	if ca == nil {
		ca = []byte(nodeconfig.PlaceholderCACert)
	}
	j := &joinRun{runner: &runner{machine: m.Name}, m: m, version: opts.KubernetesVersion, versions: versions, build: build, underlay: opts.UnderlayRoutes,
		report: &JoinReport{Machine: m.Name}}
	r := &Rendering{Machine: m.Name, Build: build.String()}
	add := func(name, item, skipped string, params []Param) error {
		rs := RenderedStep{Name: name, Item: item, Skipped: skipped, Params: params}
		if skipped == "" {
			if rs.Script, err = RenderScript(name, params); err != nil {
				return err
			}
		}
		r.Steps = append(r.Steps, rs)
		return nil
	}
	for _, s := range joinTable {
		if !s.script {
			continue
		}
		switch {
		case s.params != nil:
			p, skip, err := s.params(j)
			if err != nil {
				return nil, err
			}
			if s.name == StepUnderlayRoute && len(opts.UnderlayRoutes) == 0 {
				skip = "rendered without the cluster: the join gives a machine of the routed underlay its routes to the kind network from the cluster's network (a same-host machine, or one of underlay none, gets none)"
			}
			err = add(s.name, "", skip, p)
			if err != nil {
				return nil, err
			}
		case s.name == StepPreflight:
			if err := add(s.name, "", "", nil); err != nil {
				return nil, err
			}
		case s.name == StepImages:
			if j.m.Binaries["images"] == "" && !j.m.PrepullImages {
				if err := add(s.name, "", "the inventory asks for no image archive (binaries.images) and no pulls (prepullImages)", nil); err != nil {
					return nil, err
				}
				continue
			}
			for _, ref := range j.nodeImageRefs() {
				if err := add(s.name, ref, "", j.nodeImageParams(ref)); err != nil {
					return nil, err
				}
			}
		case s.name == StepKubeadmJoin:
			files, err := (nodeconfig.Join{NodeName: m.Name, NodeIP: m.NodeIP, Token: nodeconfig.TokenPlaceholder, Endpoint: opts.Endpoint, CACert: ca}).Param()
			if err != nil {
				return nil, err
			}
			if err := add(s.name, "", "", j.kubeadmJoinParams("join", false, files)); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("windows: the join's step %s has a script the rendering does not know", s.name)
		}
	}
	return r, nil
}

// Write writes the rendering into dir/<machine>/: each step as
// NN-<step>.ps1 (the script as sent) and NN-<step>.json (its parameters),
// and under files/ the files parameters carry: containerd's config.toml,
// kubeadm join's files, and the kubelet service's command line.
func (r *Rendering) Write(dir string) error {
	base := filepath.Join(dir, r.Machine)
	write := func(name string, data []byte) error {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	}
	for i, s := range r.Steps {
		stem := fmt.Sprintf("%02d-%s", i+1, s.Name)
		if s.Item != "" {
			stem += "-" + strings.NewReplacer("/", "_", ":", "_", "@", "_").Replace(s.Item)
		}
		params := map[string]any{"step": s.Name}
		if s.Item != "" {
			params["item"] = s.Item
		}
		if s.Skipped != "" {
			params["skipped"] = s.Skipped
		} else {
			values := map[string]string{}
			for _, p := range s.Params {
				values[p.Name] = p.Value
			}
			params["params"] = values
		}
		data, err := json.MarshalIndent(params, "", "  ")
		if err != nil {
			return err
		}
		if err := write(stem+".json", append(data, '\n')); err != nil {
			return err
		}
		if s.Skipped != "" {
			continue
		}
		if err := write(stem+".ps1", []byte(s.Script)); err != nil {
			return err
		}
		for _, p := range s.Params {
			switch {
			case s.Name == StepContainerd && p.Name == "Config":
				err = write("files/containerd/config.toml", []byte(p.Value))
			case s.Name == StepKubelet && p.Name == "KubeletCommand":
				err = write("files/kubelet/command-line.txt", []byte(p.Value+"\n"))
			case s.Name == StepKubeadmJoin && p.Name == "JoinFiles":
				var files []nodeconfig.File
				if _, files, err = nodeconfig.ParseParam(p.Value); err == nil {
					for _, f := range files {
						if err = write("files/kubeadm-join/"+f.Name, f.Data); err != nil {
							break
						}
					}
				}
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// RenderJoinFiles renders the join of every machine (RenderJoin) into
// dir/<machine>/, and the objects PrepareControlPlane would apply to the
// cluster into dir/cluster/windows-node-services.yaml, then says in
// dir/README.txt what stands in for what only the cluster and the machines
// know. The summary it returns lists what it wrote.
func RenderJoinFiles(dir string, machines []config.Machine, opts RenderOptions, cluster PrepareOptions) (string, error) {
	if cluster.VNI == 0 {
		cluster.VNI = cni.WindowsVNI
	}
	if cluster.Port == 0 {
		cluster.Port = cni.WindowsPort
	}
	manifest, err := RenderManifest(cluster)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, m := range machines {
		r, err := RenderJoin(m, opts)
		if err != nil {
			return "", fmt.Errorf("machine %s: %w", m.Name, err)
		}
		if err := r.Write(dir); err != nil {
			return "", err
		}
		run := 0
		for _, s := range r.Steps {
			if s.Skipped == "" {
				run++
			}
		}
		fmt.Fprintf(&b, "  %s/: %d scripts (%d steps skipped), Windows build %s\n", m.Name, run, len(r.Steps)-run, r.Build)
	}
	if err := os.MkdirAll(filepath.Join(dir, "cluster"), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster", "windows-node-services.yaml"), manifest, 0o644); err != nil {
		return "", err
	}
	b.WriteString("  cluster/windows-node-services.yaml: the Windows kube-proxy and flannel DaemonSets, their ConfigMaps and RBAC\n")
	notes := fmt.Sprintf(`What winconform join would send, rendered without a machine or a cluster.

Each machine's directory holds, per step of the join in its order,
NN-<step>.ps1 (the script as sent over WinRM: its parameters assigned,
lib.ps1's helpers, its body) and NN-<step>.json (its parameters, or why the
join would skip the step), and files/ the files the parameters carry:
containerd/config.toml, kubeadm-join/ (the JoinConfiguration, the discovery
kubeconfig, the kubelet's configuration patch) and kubelet/command-line.txt.

What stands in for what only the cluster and the machines know:
  - the bootstrap token is %s, kubeadm's example, never a live one;
  - the cluster's CA is a placeholder certificate (CN "winconform join --render
    placeholder"); the join uses the cluster's;
  - the API server is %s (an apiServerPort the cluster file leaves unset
    is kind's to pick: 6443 stands for it);
  - a machine's Windows build is its inventory's expectedBuild, else %s
    (Windows Server 2022): it picks the images of the machine's variant;
  - routes of the routed underlay are the cluster network's, computed when
    the join runs: the underlay-route step shows as skipped;
  - passwords are never in a script: the inventory's references stay where
    they are.
`, nodeconfig.TokenPlaceholder, opts.Endpoint, PlaceholderBuild())
	if err := os.WriteFile(filepath.Join(dir, "README.txt"), []byte(notes), 0o644); err != nil {
		return "", err
	}
	return b.String(), nil
}
