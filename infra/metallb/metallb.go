// Package metallb puts MetalLB on the local cluster, in L2 mode, so that
// LoadBalancer Services get an address of the kind Docker network that this
// machine reaches: the version and images, the address pool (computed from
// the Docker network or given in the cluster file, and checked against it),
// our own manifests, and the install with its readiness wait.
//
// The controller and speaker are compiled from MetalLB's module (the Go
// module proxy serves it as go.universe.tf/metallb) in a build of their own,
// so that MetalLB's dependencies never enter the harness's go.mod; the node
// image carries their images (see infra/nodeimage). The CRDs come from the
// same module, read from the Go module cache.
package metallb

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"text/template"

	"sigs.k8s.io/yaml"

	"github.com/winconform/winconform/infra/gotool"
)

// Module and Version are MetalLB's Go module and the release the harness builds.
const (
	Module  = "go.universe.tf/metallb"
	Version = "v0.15.2"
)

// Namespace is where MetalLB runs and keeps its configuration.
const Namespace = "metallb-system"

// PoolName names the IPAddressPool (and its L2Advertisement) the harness makes.
const PoolName = "winconform"

// Commands are MetalLB's two programs, as packages of its module.
var Commands = []string{Module + "/controller", Module + "/speaker"}

// Images are the controller's and the speaker's images.
type Images struct {
	Controller, Speaker string
	// Local is set when they were built on this machine and pre-loaded into
	// the nodes: they are never pulled.
	Local bool
}

// LocalImages are the images the node image build assembles.
func LocalImages() Images {
	return Images{
		Controller: "winconform.local/metallb-controller:" + Version,
		Speaker:    "winconform.local/metallb-speaker:" + Version,
		Local:      true,
	}
}

// UpstreamImages are MetalLB's published images, for node images that came
// from a registry.
func UpstreamImages() Images {
	return Images{Controller: "quay.io/metallb/controller:" + Version, Speaker: "quay.io/metallb/speaker:" + Version}
}

//go:embed metallb.yaml.tmpl
var manifestTemplate string

var manifest = template.Must(template.New("metallb").Funcs(template.FuncMap{
	"list": func(s ...string) []string { return s },
}).Parse(manifestTemplate))

// Manifest renders MetalLB's namespace, RBAC, controller and speaker.
func Manifest(img Images) ([]byte, error) {
	if img.Controller == "" || img.Speaker == "" {
		return nil, fmt.Errorf("metallb: controller and speaker images must be set")
	}
	policy := "IfNotPresent"
	if img.Local {
		policy = "Never"
	}
	var buf bytes.Buffer
	err := manifest.Execute(&buf, map[string]string{
		"Namespace": Namespace, "ControllerImage": img.Controller, "SpeakerImage": img.Speaker, "PullPolicy": policy,
	})
	return buf.Bytes(), err
}

// PoolManifest is the IPAddressPool holding pool and the L2Advertisement
// that announces it from the nodes' interface on the Docker network (eth0
// in a kind node). Nodes labelled notOn (any value; none when empty) do not
// announce: in layer 2 mode one node answers ARP for an address, and a
// node outside the Docker network's L2 (joined through a routed underlay)
// answers where no one asks, so the address has no route (MetalLB's
// L2Advertisement nodeSelectors limit the nodes that announce; metallb.io
// "Limiting the set of nodes where the service can be announced from").
func PoolManifest(pool Pool, notOn string) ([]byte, error) {
	l2 := map[string]any{"ipAddressPools": []string{PoolName}, "interfaces": []string{"eth0"}}
	if notOn != "" {
		l2["nodeSelectors"] = []map[string]any{{"matchExpressions": []map[string]any{{"key": notOn, "operator": "DoesNotExist"}}}}
	}
	docs := []map[string]any{
		{
			"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool",
			"metadata": map[string]any{"name": PoolName, "namespace": Namespace},
			"spec":     map[string]any{"addresses": []string{pool.String()}},
		},
		{
			"apiVersion": "metallb.io/v1beta1", "kind": "L2Advertisement",
			"metadata": map[string]any{"name": PoolName, "namespace": Namespace},
			"spec":     l2,
		},
	}
	var out []byte
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return nil, err
		}
		out = append(append(out, "---\n"...), b...)
	}
	return out, nil
}

// ModuleDir downloads MetalLB's module (a lookup when it is in the module
// cache) and returns its directory.
func ModuleDir(ctx context.Context, log io.Writer) (string, error) {
	if log == nil {
		log = io.Discard
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", Module+"@"+Version)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GO111MODULE=on")
	cmd.Stdout, cmd.Stderr = &out, log
	if err := cmd.Run(); err != nil {
		if _, lerr := exec.LookPath("go"); lerr != nil {
			return "", fmt.Errorf("MetalLB's CRDs come from its Go module and the go tool is not on PATH: install Go, or set loadBalancer.enabled: false")
		}
		return "", fmt.Errorf("go mod download %s@%s: %w", Module, Version, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out.Bytes(), &info); err != nil {
		return "", err
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", Module, Version, info.Error)
	}
	return info.Dir, nil
}

// CRDs are MetalLB's custom resource definitions, as its module ships them
// (config/crd/bases), in one multi-document manifest. Its kustomization adds
// a conversion webhook for BGPPeer; without the webhook (which the harness
// does not run) the API server serves both versions unconverted, which is
// fine for a cluster that has no BGP peers.
func CRDs(moduleDir string) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(moduleDir, "config", "crd", "bases", "metallb.io_*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no CRDs under %s", filepath.Join(moduleDir, "config", "crd", "bases"))
	}
	sort.Strings(files)
	var out []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(data, []byte("kind: CustomResourceDefinition")) {
			return nil, fmt.Errorf("%s is not a CustomResourceDefinition", f)
		}
		out = append(out, "---\n"...)
		out = append(out, bytes.TrimPrefix(data, []byte("---\n"))...)
	}
	for _, kind := range []string{"IPAddressPool", "L2Advertisement"} {
		if !bytes.Contains(out, []byte("kind: "+kind+"\n")) {
			return nil, fmt.Errorf("MetalLB's CRDs under %s lack %s", moduleDir, kind)
		}
	}
	return out, nil
}

// Build compiles the controller and the speaker, static, into a directory of
// binDir (once per version; one go install for both, outside the harness's
// module, so MetalLB's own go.mod decides its dependencies) and returns their
// paths.
func Build(ctx context.Context, log io.Writer, binDir string) (controller, speaker string, err error) {
	dir := filepath.Join(binDir, "metallb-"+Version)
	err = gotool.Once(dir, func(tmp string) error {
		args := []string{"install", "-ldflags", "-s -w"}
		for _, c := range Commands {
			args = append(args, c+"@"+Version)
		}
		return gotool.Go(ctx, log, os.TempDir(), []string{"CGO_ENABLED=0", "GOBIN=" + tmp, "GO111MODULE=on"}, args...)
	})
	return filepath.Join(dir, "controller"), filepath.Join(dir, "speaker"), err
}
