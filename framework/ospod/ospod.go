// Package ospod builds the pods the specs run, with the OS as a parameter:
// the same code makes the Linux and the Windows variant, pins it to a node of
// that OS (node selector and spec.os), runs the probe at its path for that OS
// (the one multi-platform image serves both), and tolerates the taints the
// documents tell Windows nodes to carry.
package ospod

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/images"
)

// Ports the probe server listens on in every pod.
const (
	HTTPPort = 8080
	TCPPort  = 8081
	UDPPort  = 8081
)

// ProbeBinary is the probe's path in the image for os.
func ProbeBinary(os string) string {
	if os == string(corev1.Windows) {
		return images.ProbeWindowsPath
	}
	return images.ProbeLinuxPath
}

// ProbeCommand is the command line that runs the probe with args on os.
func ProbeCommand(os string, args ...string) []string {
	return append([]string{ProbeBinary(os)}, args...)
}

// WindowsTaint is the taint the documents suggest for Windows nodes
// (os=windows:NoSchedule); Windows pods tolerate it.
var WindowsTaint = corev1.Taint{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}

// Option changes a pod being built.
type Option func(*corev1.Pod)

// Probe is a pod on os that runs the probe's server (HTTP, TCP and UDP echo)
// and is Ready when it answers HTTP. Pods of both OSes use the same image,
// images.Ref("probe") (overrides applied): the probe image is an index with a
// Linux variant and Windows ones, of which each node pulls its own.
func Probe(name, os string, opts ...Option) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/name": name}},
		Spec: corev1.PodSpec{
			OS:           &corev1.PodOS{Name: corev1.OSName(os)},
			NodeSelector: map[string]string{facts.LabelOS: os},
			Containers: []corev1.Container{{
				Name:            "probe",
				Image:           images.Ref("probe"),
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         ProbeCommand(os, "serve", "--name", name),
				Env: []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
				Ports: []corev1.ContainerPort{
					{Name: "http", ContainerPort: HTTPPort, Protocol: corev1.ProtocolTCP},
					{Name: "tcp", ContainerPort: TCPPort, Protocol: corev1.ProtocolTCP},
					{Name: "udp", ContainerPort: UDPPort, Protocol: corev1.ProtocolUDP},
				},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(HTTPPort)}},
					PeriodSeconds: 2,
				},
			}},
			TerminationGracePeriodSeconds: ptr.To(int64(5)),
		},
	}
	if os == string(corev1.Windows) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{
			Key: WindowsTaint.Key, Operator: corev1.TolerationOpEqual, Value: WindowsTaint.Value, Effect: WindowsTaint.Effect})
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// OnNode pins the pod to node n and tolerates n's taints, so that tests can
// also place pods on control-plane nodes.
func OnNode(n facts.Node) Option {
	return func(p *corev1.Pod) {
		p.Spec.NodeSelector[facts.LabelHostname] = n.Name
		for _, t := range n.Taints {
			if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
				p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{
					Key: t.Key, Operator: corev1.TolerationOpExists, Effect: t.Effect})
			}
		}
	}
}

// WithDNSName gives the pod a DNS name, <hostname>.<subdomain>.<namespace>.svc,
// which needs a headless Service named subdomain (see HeadlessService).
func WithDNSName(hostname, subdomain string) Option {
	return func(p *corev1.Pod) {
		p.Spec.Hostname = hostname
		p.Spec.Subdomain = subdomain
		p.Labels["winconform.io/subdomain"] = subdomain
	}
}

// HeadlessService is the Service that publishes the DNS names of the pods
// built WithDNSName(_, name).
func HeadlessService(name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 map[string]string{"winconform.io/subdomain": name},
			PublishNotReadyAddresses: true,
			Ports:                    []corev1.ServicePort{{Name: "http", Port: HTTPPort}},
		},
	}
}
