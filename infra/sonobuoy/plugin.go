// Package sonobuoy runs the suites inside a cluster as a Sonobuoy plugin:
// the plugin definition (Plugin), and the Sonobuoy CLI that runs it, fetches
// its results and reads them (CLI, Extract).
//
// The plugin is a Job plugin: one pod, in Sonobuoy's namespace, with
// Sonobuoy's service account (which `sonobuoy run` binds to cluster-admin
// unless told otherwise), running the suite image (images/suiteimage). Its
// results are the suite's report directory: Sonobuoy reads the JUnit report
// (result-format junit, result-files junit_01.xml) and keeps every other
// file (the summary, the limitation ledger, the network matrix, cluster.json,
// Ginkgo's reports, e2e.log) in the results tarball under
// plugins/winconform/results/global/.
package sonobuoy

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/winconform/winconform/images/suiteimage"
	"github.com/winconform/winconform/internal/suiterun"
)

// Plugin facts Sonobuoy and the suite image agree on.
const (
	// PluginName is the plugin's name: its results are under
	// plugins/<PluginName>/ in the tarball.
	PluginName = "winconform"
	// ResultsDir is where Sonobuoy mounts the results volume in the plugin's
	// container, and where the runner has the suite write its reports.
	ResultsDir = "/tmp/sonobuoy/results"
	// ConfigDir is where Sonobuoy mounts the plugin's config-map.
	ConfigDir = "/tmp/sonobuoy/config"
	// JUnitFile is the suite's JUnit report, the one Sonobuoy reads (and
	// the only XML file the suite writes).
	JUnitFile = "junit_01.xml"
	// OverridesFile is the image override file's name in the config-map.
	OverridesFile = "image-overrides.yaml"
)

// Plugin is a Sonobuoy plugin definition: the fields of Sonobuoy's own
// manifest (pkg/plugin/manifest in github.com/vmware-tanzu/sonobuoy) that
// this plugin sets.
type Plugin struct {
	SonobuoyConfig Config            `json:"sonobuoy-config"`
	Spec           corev1.Container  `json:"spec"`
	ConfigMap      map[string]string `json:"config-map,omitempty"`
}

// Config is the plugin's sonobuoy-config.
type Config struct {
	Driver       string   `json:"driver"`
	PluginName   string   `json:"plugin-name"`
	ResultFormat string   `json:"result-format"`
	ResultFiles  []string `json:"result-files,omitempty"`
	Description  string   `json:"description,omitempty"`
}

// Options are what a plugin runs.
type Options struct {
	// Image is the suite image (default suiteimage.Suite).
	Image string
	// PullPolicy is the container's image pull policy (default IfNotPresent:
	// a local cluster has the image loaded into its nodes).
	PullPolicy corev1.PullPolicy
	// Args go to the suite binary: the selection (--suite, --claim,
	// --ginkgo.label-filter) and any other suite flag.
	Args []string
	// ImageOverrides is the content of an image override file, given to
	// the suite through the plugin's config-map; none when empty.
	ImageOverrides []byte
	// FlakeAttempts is how many times a failing spec runs (Ginkgo's
	// --flake-attempts, as Ginkgo renders it for the suite binary; 0 or
	// 1: once): a spec that passes on a retry is reported flaky.
	FlakeAttempts int
}

// reserved are the suite flags the runner sets: the plugin may not.
var reserved = map[string]string{
	"kubeconfig":            "the runner makes one from the pod's service account",
	"report-dir":            "the reports go to Sonobuoy's results directory",
	"kwok-binary":           "kwok is in the suite image",
	"probe-binary":          "a pod is not outside the cluster: the specs that need a client outside it skip",
	"inventory":             "the Windows machines' passwords do not go into a plugin",
	"rerun-of":              "it names a report directory on this machine, which the pod does not have: select the specs with --claim or --labels",
	"ginkgo.flake-attempts": "the plugin's retries are Options.FlakeAttempts (winconform sonobuoy --flake-attempts)",
}

// New makes the plugin definition for o.
func New(o Options) (*Plugin, error) {
	if o.Image == "" {
		o.Image = suiteimage.Suite
	}
	switch o.PullPolicy {
	case "":
		o.PullPolicy = corev1.PullIfNotPresent
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		return nil, fmt.Errorf("image pull policy %q: want Always, IfNotPresent or Never", o.PullPolicy)
	}
	args := append([]string(nil), o.Args...)
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if why, ok := reserved[name]; ok && strings.HasPrefix(a, "-") {
			return nil, fmt.Errorf("suite flag --%s cannot be passed to the plugin: %s", name, why)
		}
	}
	p := &Plugin{
		SonobuoyConfig: Config{
			Driver:       "Job",
			PluginName:   PluginName,
			ResultFormat: "junit",
			ResultFiles:  []string{JUnitFile},
			Description:  "winconform: conformance of Kubernetes clusters with Windows nodes, per documented claim",
		},
	}
	if o.FlakeAttempts > 1 {
		flake, err := suiterun.Options{FlakeAttempts: o.FlakeAttempts}.SuiteFlags()
		if err != nil {
			return nil, err
		}
		args = append(args, flake...)
	}
	if len(o.ImageOverrides) > 0 {
		p.ConfigMap = map[string]string{OverridesFile: string(o.ImageOverrides)}
		args = append(args, "--image-overrides="+ConfigDir+"/"+OverridesFile)
	}
	p.Spec = corev1.Container{
		Name:            "plugin",
		Image:           o.Image,
		ImagePullPolicy: o.PullPolicy,
		Command:         []string{suiteimage.RunnerPath},
		Args:            args,
		Env:             []corev1.EnvVar{{Name: "SONOBUOY_RESULTS_DIR", Value: ResultsDir}},
		VolumeMounts:    []corev1.VolumeMount{{Name: "results", MountPath: ResultsDir}},
	}
	return p, nil
}

// YAML is the plugin definition as `sonobuoy run --plugin FILE` reads it.
func (p *Plugin) YAML() ([]byte, error) {
	if p == nil {
		return nil, errors.New("no plugin")
	}
	return yaml.Marshal(p)
}
