package upstream

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	proxyapp "k8s.io/kubernetes/cmd/kube-proxy/app"
)

// CheckKubeProxy judges kube-proxy's flags with kube-proxy's code: the
// flag set its command builds (Options.AddFlags), parsed, completed and
// validated as kube-proxy does (Complete, Validate).
//
// Off Windows, the Windows build's own parts are read from its source: the
// flags init_windows.go defines (their values are then not parsed by
// kube-proxy), and the proxy modes validateProxyModeWindows takes
// (pkg/proxy/apis/config/validation), in place of the Linux build's refusal
// of a Windows mode.
func CheckKubeProxy(args []string) (fromSource []string, err error) {
	args, fromSource, err = windowsOnlyFlags(args, "cmd/kube-proxy/app/init_windows.go", "addOSFlags")
	if err != nil {
		return nil, err
	}
	o := proxyapp.NewOptions()
	fs := pflag.NewFlagSet("kube-proxy", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return fromSource, fmt.Errorf("kube-proxy's flags: %w", err)
	}
	if fs.NArg() > 0 {
		return fromSource, fmt.Errorf("kube-proxy's flags: arguments %q are no flags", fs.Args())
	}
	if err := o.Complete(fs); err != nil {
		return fromSource, fmt.Errorf("kube-proxy's flags: %w", err)
	}
	err = o.Validate()
	if runtime.GOOS == "windows" {
		return fromSource, err
	}
	// The Linux build validates the mode against Linux's modes: the
	// Windows build's are read from its source, and only they pass.
	mode := ""
	if f := fs.Lookup("proxy-mode"); f != nil {
		mode = f.Value.String()
	}
	modes, src, serr := windowsProxyModes()
	if serr != nil {
		return fromSource, serr
	}
	windowsMode := mode == "" || slices.Contains(modes, mode)
	if !windowsMode {
		err = errors.Join(err, fmt.Errorf("--proxy-mode=%s: kube-proxy on Windows takes %s or blank (%s, validateProxyModeWindows)", mode, strings.Join(modes, ", "), src))
	}
	var agg utilerrors.Aggregate
	if err == nil || !windowsMode || !errors.As(err, &agg) {
		return fromSource, err
	}
	var rest []error
	for _, e := range agg.Errors() {
		var fe *field.Error
		if errors.As(e, &fe) && strings.HasSuffix(fe.Field, "ProxyMode") {
			fromSource = append(fromSource, fmt.Sprintf("--proxy-mode=%s is a mode of the Windows build (%s, validateProxyModeWindows)", mode, src))
			continue
		}
		rest = append(rest, e)
	}
	return fromSource, utilerrors.NewAggregate(rest)
}

// windowsProxyModes are the modes validateProxyModeWindows takes.
func windowsProxyModes() ([]string, *Source, error) {
	src, err := ReadSource(kubernetesModule, "pkg/proxy/apis/config/validation/validation.go")
	if err != nil {
		return nil, nil, err
	}
	names, err := src.Selectors("validateProxyModeWindows")
	if err != nil {
		return nil, nil, err
	}
	types, err := ReadSource(kubernetesModule, "pkg/proxy/apis/config/types.go")
	if err != nil {
		return nil, nil, err
	}
	var modes []string
	for _, n := range names {
		if !strings.HasPrefix(n, "ProxyMode") {
			continue
		}
		if v, err := types.StringConst(n); err == nil {
			modes = append(modes, v)
		}
	}
	if len(modes) == 0 {
		return nil, nil, fmt.Errorf("upstream: %s: validateProxyModeWindows names no proxy mode the reader recognises", src)
	}
	return modes, src, nil
}
