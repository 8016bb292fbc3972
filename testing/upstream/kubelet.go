package upstream

import (
	"fmt"
	"reflect"
	"runtime"

	"github.com/spf13/pflag"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
)

// KubeletResult is what the kubelet made of its flags and configuration.
type KubeletResult struct {
	// Flags are the kubelet's own flags as its flag set parsed them.
	Flags *options.KubeletFlags
	// Config is config.yaml as the kubelet loads it (its defaults applied).
	Config *kubeletconfig.KubeletConfiguration
	// FromSource lists what was checked against Windows source files.
	FromSource []string
}

// CheckKubelet judges the kubelet's command line (its own flags, without
// the program's path) and the config.yaml it reads with the kubelet's code:
// the flag set cmd/kubelet/app builds (its flags, its configuration's
// flags, the global ones), parsed as the kubelet parses it, then
// ValidateKubeletFlags; the file through the kubelet's loader (configfiles,
// which decodes it strictly and applies the defaults), then
// ValidateKubeletConfiguration.
//
// Off Windows, the Windows build's own parts are read from its source: the
// flags osflags_windows.go defines, and what validation_windows.go refuses
// (each field it returns an error for must be unset). The Linux build's
// validation of Linux-only settings (failCgroupV1 on a cgroup v1 host) does
// not apply to a Windows node and is not asked.
func CheckKubelet(args []string, configYAML []byte) (KubeletResult, error) {
	var res KubeletResult
	args, fromSource, err := windowsOnlyFlags(args, "cmd/kubelet/app/options/osflags_windows.go", "addOSFlags")
	if err != nil {
		return res, err
	}
	res.FromSource = fromSource
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	fs.SetOutput(discard{})
	flags := options.NewKubeletFlags()
	defaults, err := options.NewKubeletConfiguration()
	if err != nil {
		return res, err
	}
	flags.AddFlags(fs)
	options.AddKubeletConfigFlags(fs, defaults)
	options.AddGlobalFlags(fs)
	if err := fs.Parse(args); err != nil {
		return res, fmt.Errorf("the kubelet's flags: %w", err)
	}
	if fs.NArg() > 0 {
		return res, fmt.Errorf("the kubelet's flags: arguments %q are no flags", fs.Args())
	}
	if err := options.ValidateKubeletFlags(flags); err != nil {
		return res, fmt.Errorf("the kubelet's flags: %w", err)
	}
	res.Flags = flags

	kc, err := loadKubelet(configYAML)
	if err != nil {
		return res, err
	}
	res.Config = kc
	check := kc.DeepCopy()
	if runtime.GOOS != "windows" {
		src, err := ReadSource(kubernetesModule, "pkg/kubelet/apis/config/validation/validation_windows.go")
		if err != nil {
			return res, err
		}
		fields, err := src.RefusedFields("validateKubeletOSConfiguration", "kc")
		if err != nil {
			return res, err
		}
		v := reflect.ValueOf(kc).Elem()
		for _, f := range fields {
			fv := v.FieldByName(f)
			if !fv.IsValid() {
				return res, fmt.Errorf("%s refuses %s, which the kubelet's configuration of this build has not", src, f)
			}
			if !fv.IsZero() {
				return res, fmt.Errorf("the kubelet's configuration sets %s, which the Windows kubelet refuses (%s)", f, src)
			}
		}
		res.FromSource = append(res.FromSource, fmt.Sprintf("%v unset, as %s requires", fields, src))
		check.FailCgroupV1 = false // a Linux host's setting
	}
	if err := kubeletvalidation.ValidateKubeletConfiguration(check, utilfeature.DefaultFeatureGate); err != nil {
		return res, fmt.Errorf("the kubelet's configuration: %w", err)
	}
	return res, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
