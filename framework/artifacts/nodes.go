package artifacts

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/nodelogs"
	"github.com/winconform/winconform/framework/ospod"
)

// HNSScript dumps a Windows node's HNS networks, endpoints and policy
// lists as JSON (hns.ps1), run by a short-lived HostProcess pod.
//
//go:embed hns.ps1
var HNSScript string

// NotCollectedFile lists, one line each, what a bundle could not collect.
const NotCollectedFile = "not-collected.txt"

// Services are the node services whose logs a bundle reads through the
// node log query.
var Services = []string{"kubelet", "containerd"}

// agents are the names of the DaemonSets whose pods' logs a bundle keeps
// for each node: kube-proxy and the CNI agents.
var agents = []string{"kube-proxy", "flannel", "calico", "cilium", "antrea", "kindnet"}

// Nodes says what a failed spec's bundle collects of its nodes.
type Nodes struct {
	// Names are the nodes the spec's pods ran on.
	Names []string
	// Since and Until are the spec's window.
	Since, Until time.Time
	// PerNode bounds each node's collection (DefaultPerNode).
	PerNode time.Duration
	// MaxBytes caps each file (nodelogs.DefaultMaxBytes).
	MaxBytes int64
	// HNS, when set, is where the HNS dump's HostProcess pod runs on a
	// Windows node: a namespace that admits HostProcess pods, made and
	// removed by the caller. Without it no HNS state is collected (said).
	HNS func(ctx context.Context) (namespace string, err error)
}

// DefaultPerNode bounds one node's part of a bundle.
const DefaultPerNode = 60 * time.Second

// CollectNodes writes, under dir/nodes/<node>/, each node's service logs
// (the node log query, Services), the logs of its kube-proxy and CNI agent
// pods, and on a Windows node its HNS state; redacted by red. Nodes are
// read at once, each within n.PerNode; what could not be read is one line
// of dir/NotCollectedFile. It returns the files written, and the nodes that
// serve no log query with why (nodelogs.Unserved), for the run to say once.
func CollectNodes(ctx context.Context, cs kubernetes.Interface, n Nodes, dir string, red *Redactor) (written []string, unserved []*nodelogs.Unserved) {
	if n.PerNode <= 0 {
		n.PerNode = DefaultPerNode
	}
	if n.MaxBytes <= 0 {
		n.MaxBytes = nodelogs.DefaultMaxBytes
	}
	var (
		mu      sync.Mutex
		missing []string
		wg      sync.WaitGroup
	)
	names := slices.Clone(n.Names)
	slices.Sort(names)
	names = slices.Compact(names)
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nctx, cancel := context.WithTimeout(ctx, n.PerNode)
			defer cancel()
			w, m, u := collectNode(nctx, cs, n, name, filepath.Join(dir, "nodes", name), red)
			mu.Lock()
			written, missing = append(written, w...), append(missing, m...)
			if u != nil {
				unserved = append(unserved, u)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(missing) > 0 {
		slices.Sort(missing)
		path := filepath.Join(dir, NotCollectedFile)
		if red.WriteFile(path, strings.Join(missing, "\n")+"\n") == nil {
			written = append(written, path)
		}
	}
	slices.Sort(written)
	return written, unserved
}

// collectNode collects one node's part.
func collectNode(ctx context.Context, cs kubernetes.Interface, n Nodes, name, dir string, red *Redactor) (written, missing []string, unserved *nodelogs.Unserved) {
	write := func(file string, data []byte) {
		path := filepath.Join(dir, file)
		if err := red.WriteFile(path, string(data)); err != nil {
			missing = append(missing, fmt.Sprintf("%s: %s: %v", name, file, err))
			return
		}
		written = append(written, path)
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: the node: %v", name, err)}, nil
	}
	if f := facts.FromNode(node); f.Simulated {
		return nil, []string{fmt.Sprintf("%s: simulated (kwok): it has no kubelet to ask", name)}, nil
	}
	for _, svc := range Services {
		var buf bytes.Buffer
		res, err := nodelogs.Fetch(ctx, cs.CoreV1().RESTClient(), name, nodelogs.Query{Service: svc, Since: n.Since, Until: n.Until, MaxBytes: n.MaxBytes}, &buf)
		if buf.Len() > 0 {
			write(svc+".log", buf.Bytes())
		}
		switch {
		case err != nil:
			errors.As(err, &unserved)
			missing = append(missing, fmt.Sprintf("%s: %s log: %v", name, svc, err))
		case res.Truncated:
			missing = append(missing, fmt.Sprintf("%s: %s log: cut at %d bytes", name, svc, n.MaxBytes))
		}
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
	if err != nil {
		missing = append(missing, fmt.Sprintf("%s: its agents' pods: %v", name, err))
	} else {
		for _, p := range pods.Items {
			if !isAgent(p) {
				continue
			}
			for _, c := range p.Spec.Containers {
				since := metav1.NewTime(n.Since)
				data, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, SinceTime: &since, LimitBytes: ptr.To(n.MaxBytes)}).DoRaw(ctx)
				if err != nil {
					missing = append(missing, fmt.Sprintf("%s: logs of %s/%s %s: %v", name, p.Namespace, p.Name, c.Name, err))
					continue
				}
				write(filepath.Join("pods", p.Namespace+"_"+p.Name+"_"+c.Name+".log"), data)
			}
		}
	}
	if node.Labels[corev1.LabelOSStable] == string(corev1.Windows) {
		data, err := hnsState(ctx, cs, n, node)
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s: HNS state: %v", name, err))
		} else if state, err := ParseHNS(data); err != nil {
			// Kept as printed (cut short at the size cap, say), and said.
			write("hns.txt", data)
			missing = append(missing, fmt.Sprintf("%s: HNS state: %v (what the pod printed is hns.txt)", name, err))
		} else {
			write("hns.json", data)
			for _, u := range state.Unread() {
				missing = append(missing, name+": "+u)
			}
		}
	}
	return written, missing, unserved
}

// isAgent says whether p is a pod of a kube-proxy or CNI agent DaemonSet.
func isAgent(p corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind != "DaemonSet" {
			continue
		}
		for _, a := range agents {
			if strings.Contains(o.Name, a) {
				return true
			}
		}
	}
	return false
}

// hnsState runs HNSScript in a HostProcess pod on node and returns what it
// printed; the pod goes afterwards.
func hnsState(ctx context.Context, cs kubernetes.Interface, n Nodes, node *corev1.Node) ([]byte, error) {
	if n.HNS == nil {
		return nil, fmt.Errorf("no namespace for the HostProcess pod that reads it")
	}
	ns, err := n.HNS(ctx)
	if err != nil {
		return nil, err
	}
	p := HNSPod(node.Name)
	pods := cs.CoreV1().Pods(ns)
	created, err := pods.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = pods.Delete(dctx, created.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}()
	var got *corev1.Pod
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		got, err = pods.Get(ctx, created.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return got.Status.Phase == corev1.PodSucceeded || got.Status.Phase == corev1.PodFailed, nil
	})
	if err != nil {
		phase := "never read"
		if got != nil {
			phase = string(got.Status.Phase)
		}
		return nil, fmt.Errorf("the HostProcess pod did not finish in time (%s): %w", phase, err)
	}
	logs, err := pods.GetLogs(created.Name, &corev1.PodLogOptions{LimitBytes: ptr.To(n.MaxBytes)}).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	if got.Status.Phase == corev1.PodFailed {
		return nil, fmt.Errorf("the HostProcess pod failed: %s", strings.TrimSpace(string(logs)))
	}
	return logs, nil
}

// HNSPod is the HostProcess pod that runs HNSScript on node with the
// host's PowerShell: host network, hostProcess, SYSTEM, never restarted.
func HNSPod(node string) *corev1.Pod {
	p := ospod.Probe("winconform-hns", string(corev1.Windows))
	p.Name = ""
	p.GenerateName = "winconform-hns-"
	p.Spec.NodeName = node
	p.Spec.HostNetwork = true
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
	p.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
		HostProcess: ptr.To(true), RunAsUserName: ptr.To(`NT AUTHORITY\SYSTEM`),
	}}
	c := &p.Spec.Containers[0]
	c.Name = "hns"
	c.Command = []string{`C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, "-NoProfile", "-NonInteractive", "-Command", HNSScript}
	c.Ports, c.ReadinessProbe, c.Env = nil, nil, nil
	return p
}
