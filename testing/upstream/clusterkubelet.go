package upstream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kubeletinternal "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	kubeletvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	"k8s.io/kubernetes/pkg/kubelet/kubeletconfig/configfiles"
	utilfs "k8s.io/kubernetes/pkg/util/filesystem"
	"sigs.k8s.io/yaml"

	"github.com/winconform/winconform/infra/kubeletconfig"
	"github.com/winconform/winconform/internal/kubelines"
)

// kindKubeletTemplate is the KubeletConfiguration kind v0.33.0 writes
// (pkg/cluster/internal/kubeadm/config.go), before the harness's patch.
const kindKubeletTemplate = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
cgroupRoot: /kubelet
failSwapOn: false
imageGCHighThresholdPercent: 100
evictionHard:
  nodefs.available: "0%"
  nodefs.inodesFree: "0%"
  imagefs.available: "0%"
`

// KindKubelet is the KubeletConfiguration of a cluster of line l that the
// harness made with kind on a cgroup v1 host, as its kubelet-config
// ConfigMap holds it: kind's template with the harness's patch
// (kubeletconfig.ClusterPatch) merged into it as kind merges a patch into the
// document of its kind. Windows nodes joining the cluster get it, then the
// join's patch.
func KindKubelet(l kubelines.Line) []byte {
	return MergeKubeletPatch([]byte(kindKubeletTemplate), kubeletconfig.ClusterPatch(l, true))
}

// MergeKubeletPatch merges a merge patch into a KubeletConfiguration as
// kind merges one (RFC 7386, evanphx/json-patch's MergePatch). Bad YAML in
// either is a programming error of the caller's and panics.
func MergeKubeletPatch(base []byte, patch string) []byte {
	b, err := yaml.YAMLToJSON(base)
	if err != nil {
		panic(err)
	}
	p, err := yaml.YAMLToJSON([]byte(patch))
	if err != nil {
		panic(err)
	}
	merged, err := jsonpatch.MergePatch(b, p)
	if err != nil {
		panic(err)
	}
	out, err := yaml.JSONToYAML(merged)
	if err != nil {
		panic(err)
	}
	return out
}

// CheckClusterKubelet judges a cluster's KubeletConfiguration as a Linux
// kubelet of line l reads it: strictly decoded, loaded with the kubelet's
// loader (its defaults), its featureGates applied to the kubelet's feature
// gates emulating l's version, then ValidateKubeletConfiguration.
func CheckClusterKubelet(config []byte, l kubelines.Line) (*kubeletinternal.KubeletConfiguration, error) {
	kc, err := loadKubelet(config)
	if err != nil {
		return nil, err
	}
	gate := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	if err := gate.SetEmulationVersion(version.MajorMinor(1, uint(l.Minor))); err != nil {
		return nil, fmt.Errorf("the kubelet's feature gates at %s: %w", l.Name(), err)
	}
	if err := gate.SetFromMap(kc.FeatureGates); err != nil {
		return nil, fmt.Errorf("the kubelet's configuration: featureGates: %w", err)
	}
	if err := kubeletvalidation.ValidateKubeletConfiguration(kc, gate); err != nil {
		return nil, fmt.Errorf("the kubelet's configuration: %w", err)
	}
	return kc, nil
}

// loadKubelet reads a kubelet's configuration file as the kubelet does:
// strictly (the kubelet falls back to lenient decoding of a v1beta1 file
// and only logs the keys it ignores, pkg/kubelet/kubeletconfig/util/codec:
// a key it ignores is a mistake of the harness's), then through its loader
// (configfiles), which applies its defaults.
func loadKubelet(config []byte) (*kubeletinternal.KubeletConfiguration, error) {
	_, strict, err := kubeletscheme.NewSchemeAndCodecs(serializer.EnableStrict)
	if err != nil {
		return nil, err
	}
	if _, _, err := strict.UniversalDecoder().Decode(config, nil, nil); err != nil {
		return nil, fmt.Errorf("the kubelet's configuration: %w", err)
	}
	dir, err := os.MkdirTemp("", "kubelet-config-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, config, 0o600); err != nil {
		return nil, err
	}
	loader, err := configfiles.NewFsLoader(&utilfs.DefaultFs{}, file)
	if err != nil {
		return nil, err
	}
	kc, err := loader.Load(context.Background())
	if err != nil {
		return nil, fmt.Errorf("the kubelet's configuration: %w", err)
	}
	return kc, nil
}
