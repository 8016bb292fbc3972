package inventory

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Each check returns "" when the value is fine, else what is wrong and the fix.

// checkName checks a machine name: a lower-case DNS label (RFC 1123), as a
// node name must be.
func checkName(v string) (msg, fix string) {
	if len(validation.IsDNS1123Label(v)) == 0 {
		return "", ""
	}
	msg = quote(v) + " is not a lower-case DNS label, as a node name must be"
	fix = "use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit"
	if s := suggestName(v); s != "" {
		fix += fmt.Sprintf(", such as %q", s)
	}
	return msg, fix
}

var notLabelChar = regexp.MustCompile(`[^a-z0-9-]+`)

// suggestName turns a name into a DNS label ("Win_2022 A" -> "win-2022-a"),
// or returns "" when nothing usable is left.
func suggestName(v string) string {
	s := strings.Trim(notLabelChar.ReplaceAllString(strings.ToLower(v), "-"), "-")
	if len(s) > validation.DNS1123LabelMaxLength {
		s = strings.TrimRight(s[:validation.DNS1123LabelMaxLength], "-")
	}
	if s == "" || len(validation.IsDNS1123Label(s)) > 0 {
		return ""
	}
	return s
}

// checkAddress checks a machine address: an IP address or a DNS name.
func checkAddress(a string) (msg, fix string) {
	const fixAddr = "write an IP address such as 192.168.56.20 or a DNS name such as win-2022-a.lab"
	if _, err := netip.ParseAddr(a); err == nil {
		return "", ""
	}
	if strings.Contains(a, "://") {
		return quote(a) + " is a URL, not an address",
			"write the host alone, such as 192.168.56.20: the scheme comes from winrm.https and the port from winrm.port"
	}
	if inner, ok := strings.CutPrefix(a, "["); ok && strings.HasSuffix(inner, "]") {
		return quote(a) + " has brackets", "write the IPv6 address without brackets: " + strings.TrimSuffix(inner, "]")
	}
	if host, port, err := net.SplitHostPort(a); err == nil && isDigits(port) {
		return quote(a) + " includes a port", fmt.Sprintf("write the host alone (%s) and the port as winrm.port: %s", host, port)
	}
	if !isDNSName(a) {
		return quote(a) + " is not an IP address or DNS name", fixAddr
	}
	return "", ""
}

// checkNodeIP checks a node's address: one unicast IP address, which the
// machine holds (--node-ip takes no name and no list here).
func checkNodeIP(v string) (msg, fix string) {
	const fixIP = "write the IP address the machine has on the cluster's network, such as 192.168.56.20 (ipconfig on the machine lists them)"
	a, err := netip.ParseAddr(v)
	switch {
	case err != nil && strings.Contains(v, ","):
		return quote(v) + " is a list", "write one IP address: dual-stack node addresses are not supported"
	case err != nil && isDNSName(v):
		return quote(v) + " is a name, not an IP address", fixIP
	case err != nil:
		return quote(v) + " is not an IP address", fixIP
	case a.Zone() != "":
		return quote(v) + " has a zone", "write the address without %" + a.Zone()
	case a.IsUnspecified(), a.IsLoopback(), a.IsMulticast(), a.IsLinkLocalUnicast():
		return quote(v) + " is not an address another node can reach (unspecified, loopback, multicast or link-local)", fixIP
	}
	return "", ""
}

// isHostName reports whether v is an IP address or DNS name.
func isHostName(v string) bool {
	_, err := netip.ParseAddr(v)
	return err == nil || isDNSName(v)
}

// isDNSName reports whether v is a DNS name (any case, an optional final
// dot). A name of numbers only, such as 192.168.56.300, is a wrong IP
// address rather than a name.
func isDNSName(v string) bool {
	name := strings.ToLower(strings.TrimSuffix(v, "."))
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if !isDigits(label) {
			return true
		}
	}
	return false
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// checkEnvName checks the name of the variable that holds a password.
func checkEnvName(v string) (msg, fix string) {
	switch {
	case v == "":
		return "is empty", "write the name of the variable that holds the password, such as WIN_A_PASSWORD"
	case strings.HasPrefix(v, "$"):
		return quote(v) + " starts with '$'", "write the variable's name alone: env: " + strings.Trim(v, "${}")
	case len(validation.IsEnvVarName(v)) > 0:
		return quote(v) + " is not a variable name", "use letters, digits and '_', such as WIN_A_PASSWORD"
	}
	return "", ""
}

// kubeletLabels are labels the kubelet sets on its node itself; setting
// them in the inventory would contradict it. The value is the fix.
var kubeletLabels = map[string]string{
	corev1.LabelHostname:           "remove it: the kubelet sets it to the node name",
	corev1.LabelOSStable:           "remove it: the kubelet sets it to windows",
	corev1.LabelArchStable:         "remove it: the kubelet sets it from the machine",
	"beta.kubernetes.io/os":        "remove it: the kubelet sets it to windows",
	"beta.kubernetes.io/arch":      "remove it: the kubelet sets it from the machine",
	corev1.LabelWindowsBuild:       "remove it: the kubelet sets it from the machine's build; set expectedBuild to require a build",
	corev1.LabelInstanceTypeStable: "remove it: it belongs to cloud providers",
}

// checkLabelKey checks a node label key.
func checkLabelKey(k string) (msg, fix string) {
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return quote(k) + " is not a valid label key: " + k8sMessages(errs),
			"use an optional DNS-subdomain prefix and '/', then a name of at most 63 letters, digits, '-', '_' or '.' that starts and ends with a letter or digit, such as topology.kubernetes.io/zone"
	}
	if fix, ok := kubeletLabels[k]; ok {
		return "the kubelet sets this label itself", fix
	}
	return "", ""
}

// checkLabelValue checks a node label value.
func checkLabelValue(v string) (msg, fix string) {
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return quote(v) + " is not a valid label value: " + k8sMessages(errs),
			"use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (or an empty value)"
	}
	return "", ""
}

// k8sMessages joins apimachinery's validation messages without their
// examples and regular expressions.
func k8sMessages(errs []string) string {
	out := make([]string, len(errs))
	for i, e := range errs {
		e, _, _ = strings.Cut(e, " (e.g. ")
		out[i] = e
	}
	return strings.Join(out, ", and ")
}

// parseTaint parses key=value:Effect or key:Effect, the form kubectl taint
// and the kubelet's --register-with-taints use.
func parseTaint(s string) (t corev1.Taint, msg, fix string) {
	const form = "write key=value:Effect or key:Effect, with Effect NoSchedule, PreferNoSchedule or NoExecute, such as os=windows:NoSchedule"
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return t, quote(s) + " has no effect", form
	}
	kv, effect := s[:i], corev1.TaintEffect(s[i+1:])
	switch effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		fix := "use NoSchedule, PreferNoSchedule or NoExecute"
		for _, e := range []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute} {
			if strings.EqualFold(string(e), string(effect)) {
				fix = fmt.Sprintf("write the effect as %s (effects are case-sensitive)", e)
			}
		}
		return t, quote(s) + " has the effect " + quote(string(effect)) + ", which is not a taint effect", fix
	}
	key, value, _ := strings.Cut(kv, "=")
	if key == "" {
		return t, quote(s) + " has no key", form
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return t, quote(s) + ": the key " + quote(key) + " is not valid: " + k8sMessages(errs),
			"use a label-style key such as os or example.com/dedicated; " + form
	}
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
		return t, quote(s) + ": the value " + quote(value) + " is not valid: " + k8sMessages(errs),
			"use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	}
	return corev1.Taint{Key: key, Value: value, Effect: effect}, "", ""
}

// checkComponent checks a binaries key: a component name.
func checkComponent(k string) (msg, fix string) {
	if len(validation.IsDNS1123Label(k)) > 0 {
		return quote(k) + " is not a component name", "use a lower-case name such as containerd, kubelet or kube-proxy"
	}
	return "", ""
}

var (
	windowsAbs    = regexp.MustCompile(`^([A-Za-z]:[\\/]|\\\\[^\\/]+[\\/][^\\/]+)`)
	driveRelative = regexp.MustCompile(`^[A-Za-z]:[^\\/]`)
)

// checkSource checks where a component's binaries come from: an http(s)
// URL, or an absolute path on the Windows machine (a drive path or UNC).
func checkSource(v string) (msg, fix string) {
	const fixSource = `write an http(s) URL such as https://example.com/containerd.zip, or an absolute path on the machine such as C:\install\containerd.zip or \\server\share\containerd.zip`
	switch {
	case v == "":
		return "is empty", fixSource
	case windowsAbs.MatchString(v):
		return "", ""
	case driveRelative.MatchString(v):
		return quote(v) + " is not an absolute path (it lacks a '\\' after the drive)", fixSource
	}
	u, err := url.Parse(v)
	switch {
	case err != nil || u.Scheme == "":
		return quote(v) + " is neither an http(s) URL nor an absolute path on the machine (paths are on the Windows machine, not relative to the inventory)", fixSource
	case u.Scheme != "http" && u.Scheme != "https":
		return quote(v) + " is a " + u.Scheme + ": URL, which the harness does not fetch", fixSource
	case u.Host == "":
		return quote(v) + " has no host", fixSource
	}
	return "", ""
}

var (
	kubeletVersionForm    = regexp.MustCompile(`^v?1\.(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})(-(alpha|beta|rc)\.(0|[1-9]\d{0,3}))?$`)
	containerdVersionForm = regexp.MustCompile(`^v?(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})$`)
)

// checkKubeletVersion checks the form of a kubelet version: a Kubernetes
// release, v1.MINOR.PATCH. Whether the join takes it (its line, its skew
// against the cluster) is checked at the join, which knows the cluster.
func checkKubeletVersion(v string) (msg, fix string) {
	if kubeletVersionForm.MatchString(v) {
		return "", ""
	}
	return quote(v) + " is not a Kubernetes version", "write a release as v1.MINOR.PATCH, such as v1.36.3 (not a line alone), or a pre-release such as v1.38.0-rc.1, or remove it for the version binaries.kubelet names, else the cluster's"
}

// checkContainerdVersion checks the form of a containerd version:
// MAJOR.MINOR.PATCH. Whether it exists and the kubelet works with it is
// checked at the join.
func checkContainerdVersion(v string) (msg, fix string) {
	if containerdVersionForm.MatchString(v) {
		return "", ""
	}
	return quote(v) + " is not a containerd version", "write a release as MAJOR.MINOR.PATCH, such as 2.3.7, or remove it for the version binaries.containerd names, else the harness's default"
}

// normalVersion writes a version with the prefix (v, or none) the harness
// uses for it.
func normalVersion(v, prefix string) string {
	if v == "" {
		return ""
	}
	return prefix + strings.TrimPrefix(v, "v")
}
