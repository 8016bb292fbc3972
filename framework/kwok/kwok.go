// Package kwok runs kwok (sigs.k8s.io/kwok) as a process the harness starts
// and stops, to simulate Windows nodes on a cluster that has none: the
// scheduler, the API server and the controllers treat them as real nodes,
// and kwok makes the pods bound to them Running without running anything.
//
// A Sim manages only the nodes it made. Its ID is <name>.<run ID>: a run
// may start several Sims (one per spec container, on parallel processes), so
// the run's ID alone does not tell them apart. kwok is told to manage the
// nodes whose annotations carry kwok.x-k8s.io/node=fake and this Sim's ID,
// and every node carries the isolation taint winconform.io/simulated=<Sim
// ID>:NoSchedule, so that only pods that tolerate this Sim's taint land on
// its nodes: two Sims of one run, another run's, or another kwok on the
// cluster leave each other's nodes and pods alone. A Sim names its nodes
// <name>-<run ID>-<build number>, so that a second Sim of the same name in a
// run fails at its first node (the API server refuses the name), and Start
// refuses one whose ID already marks nodes. Stop deletes the nodes and ends
// the process; the process also dies with the harness (Linux: parent-death
// signal).
//
// The pods kwok runs get IPs from Options.CIDR (default DefaultCIDR), which
// Start checks against the real nodes' pod CIDRs; the Stage objects kwok
// plays are embedded (stages.yaml), not read from the module cache.
package kwok

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/winconform/winconform/internal/kubefile"
	"github.com/winconform/winconform/internal/runid"
	"github.com/winconform/winconform/internal/winrelease"
)

// Stages is kwok's configuration: the Stage objects it plays (see stages.yaml).
//
//go:embed stages.yaml
var Stages string

// Labels, annotations and the taint of simulated nodes.
const (
	// AnnotationNode is kwok's own annotation; kwok manages nodes where it is "fake".
	AnnotationNode = "kwok.x-k8s.io/node"
	// LabelRun carries the run's ID (several Sims may share it).
	LabelRun = "winconform.io/kwok-run"
	// AnnotationSim and LabelSim carry the Sim's ID (<name>.<run ID>),
	// which kwok's selector and the isolation taint use.
	AnnotationSim = "winconform.io/kwok-sim"
	LabelSim      = "winconform.io/kwok-sim"
	// AnnotationOwner is "<host>/<pid>" of the process that started kwok,
	// so that Start can remove nodes a killed harness left behind.
	AnnotationOwner = "winconform.io/kwok-owner"
	// LabelSimulated marks every node a Sim makes.
	LabelSimulated = "winconform.io/simulated"
	// TaintKey is the isolation taint's key; its value is the Sim's ID.
	TaintKey = "winconform.io/simulated"

	LabelOS           = "kubernetes.io/os"
	LabelArch         = "kubernetes.io/arch"
	LabelHostname     = "kubernetes.io/hostname"
	LabelWindowsBuild = "node.kubernetes.io/windows-build"
	// The deprecated beta labels, which kubelets of this era still set.
	LabelBetaOS   = "beta.kubernetes.io/os"
	LabelBetaArch = "beta.kubernetes.io/arch"
)

// DefaultCIDR is where simulated pods get their IPs: outside the local
// cluster's pod CIDR (10.244.0.0/16) and service CIDR (10.96.0.0/12).
const DefaultCIDR = "10.253.0.0/16"

// DefaultTimeout bounds each wait (a node turning Ready, a node going away).
const DefaultTimeout = time.Minute

// Options says how to run kwok.
type Options struct {
	// Binary is the kwok executable (v0.8.0).
	Binary string
	// Kubeconfig is the cluster's kubeconfig, for kwok and (unless Client is
	// set) for the Sim's own API calls.
	Kubeconfig string
	// Client is used instead of a client built from Kubeconfig.
	Client kubernetes.Interface
	// CIDR is the range simulated pods get their IPs from (DefaultCIDR).
	CIDR string
	// RunID is the run's ID (the run mints it where it begins; kwok never
	// makes one).
	RunID string
	// Name tells this Sim from the run's others (kwokspec: its spec
	// container's prefix): a DNS label, unique within the run. With the
	// run's ID it makes the Sim's ID and names its nodes.
	Name string
	// Labels and Annotations go on every node the Sim adds (the
	// harness's run and its start, say).
	Labels, Annotations map[string]string
	// Timeout bounds each wait (DefaultTimeout).
	Timeout time.Duration
	// LogPath is where kwok's output goes (a file in the Sim's temporary
	// directory when empty); errors quote its last lines.
	LogPath string
	// KubeletVersion is what simulated nodes report (the server's version when empty).
	KubeletVersion string
}

// Sim is a running kwok and the nodes it simulates.
type Sim struct {
	opts    Options
	client  kubernetes.Interface
	dir     string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	exitErr error

	mu      sync.Mutex
	nodes   []string
	stopped bool
}

// Start checks opts, writes kwok's configuration, and starts kwok. It
// removes nodes that earlier Sims on this host left behind when their
// process was killed.
func Start(ctx context.Context, opts Options) (*Sim, error) {
	if opts.Binary == "" {
		return nil, errors.New("kwok: no kwok binary (pass --kwok-binary; make build puts it in _output/bin/kwok)")
	}
	if st, err := os.Stat(opts.Binary); err != nil {
		return nil, fmt.Errorf("kwok: binary %s: %w", opts.Binary, err)
	} else if st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("kwok: %s is not an executable file", opts.Binary)
	}
	if opts.Kubeconfig == "" {
		return nil, errors.New("kwok: no kubeconfig")
	}
	if opts.CIDR == "" {
		opts.CIDR = DefaultCIDR
	}
	if _, _, err := net.ParseCIDR(opts.CIDR); err != nil {
		return nil, fmt.Errorf("kwok: pod CIDR %q: %w", opts.CIDR, err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.RunID == "" {
		return nil, errors.New("kwok: no run ID: the run's own (e2e.Options.RunID) names the simulated nodes")
	}
	if err := runid.Check(opts.RunID); err != nil {
		return nil, err
	}
	if errs := validation.IsDNS1123Label(opts.Name); len(errs) > 0 {
		return nil, fmt.Errorf("kwok: simulator name %q: %s: give each simulator of a run its own name, such as wc-sched", opts.Name, strings.Join(errs, "; "))
	}
	id := ID(opts.RunID, opts.Name)
	if errs := validation.IsValidLabelValue(id); len(errs) > 0 {
		return nil, fmt.Errorf("kwok: simulator ID %q (name %q, run %s): %s: shorten the name", id, opts.Name, opts.RunID, strings.Join(errs, "; "))
	}
	client := opts.Client
	if client == nil {
		_, cs, err := kubefile.Clients("kubeconfig", opts.Kubeconfig, 0)
		if err != nil {
			return nil, fmt.Errorf("kwok: %w", err)
		}
		client = cs
	}
	if err := checkCIDR(ctx, client, opts.CIDR); err != nil {
		return nil, err
	}
	if opts.KubeletVersion == "" {
		if v, err := client.Discovery().ServerVersion(); err == nil {
			opts.KubeletVersion = v.GitVersion
		}
	}
	removeOrphans(ctx, client, opts.Timeout)
	if err := checkUnclaimed(ctx, client, id); err != nil {
		return nil, err
	}

	dir, err := os.MkdirTemp("", "winconform-kwok-")
	if err != nil {
		return nil, fmt.Errorf("kwok: %w", err)
	}
	config := filepath.Join(dir, "stages.yaml")
	if err := os.WriteFile(config, []byte(Stages), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("kwok: %w", err)
	}
	logPath := opts.LogPath
	if logPath == "" {
		logPath = filepath.Join(dir, "kwok.log")
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("kwok: log: %w", err)
	}
	s := &Sim{opts: opts, client: client, dir: dir, logPath: logPath, exited: make(chan struct{})}
	// Not CommandContext: the process outlives Start's context and ends in Stop.
	s.cmd = exec.Command(opts.Binary, Args(opts.Kubeconfig, config, id, opts.CIDR)...)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	s.cmd.SysProcAttr = sysProcAttr()
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("kwok: starting %s: %w", opts.Binary, err)
	}
	go func() {
		s.exitErr = s.cmd.Wait()
		logFile.Close()
		close(s.exited)
	}()
	// kwok fails fast on a bad configuration or flag; give it a moment to.
	select {
	case <-s.exited:
		err := fmt.Errorf("kwok exited at once (%v): %s", s.exitErr, s.logTail())
		os.RemoveAll(dir)
		return nil, err
	case <-time.After(time.Second):
	case <-ctx.Done():
		s.kill()
		os.RemoveAll(dir)
		return nil, ctx.Err()
	}
	return s, nil
}

// ID is the ID of the Sim name of run runID: <name>.<run ID>. Neither part
// holds a dot, so two Sims have one ID only when they have one name and one
// run.
func ID(runID, name string) string { return name + "." + runID }

// Args is kwok's command line for the Sim whose ID is simID.
func Args(kubeconfig, config, simID, cidr string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--config=" + config,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + Selector(simID),
		"--cidr=" + cidr,
		"--node-lease-duration-seconds=40",
	}
}

// Selector is the annotation selector of a Sim's nodes.
func Selector(simID string) string {
	return AnnotationNode + "=fake," + AnnotationSim + "=" + simID
}

// checkUnclaimed refuses a Sim whose ID already marks nodes: another Sim of
// the run has its name, and the two would manage, taint and tolerate as one.
func checkUnclaimed(ctx context.Context, cs kubernetes.Interface, simID string) error {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: LabelSim + "=" + simID})
	if err != nil {
		return fmt.Errorf("kwok: listing nodes: %w", err)
	}
	if len(list.Items) > 0 {
		var names []string
		for _, n := range list.Items {
			names = append(names, n.Name)
		}
		return fmt.Errorf("kwok: simulator %s already has nodes %v: another simulator of the run has its name; give each its own", simID, names)
	}
	return nil
}

// checkCIDR refuses a pod CIDR that overlaps a real node's pod CIDR (the
// cluster's pod network).
func checkCIDR(ctx context.Context, cs kubernetes.Interface, cidr string) error {
	_, want, err := net.ParseCIDR(cidr)
	if err != nil {
		return err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("kwok: listing nodes: %w", err)
	}
	for _, n := range nodes.Items {
		if n.Annotations[AnnotationNode] != "" {
			continue // simulated: its podCIDR is not used by kwok's pods
		}
		cidrs := n.Spec.PodCIDRs
		if len(cidrs) == 0 && n.Spec.PodCIDR != "" {
			cidrs = []string{n.Spec.PodCIDR}
		}
		for _, c := range cidrs {
			_, have, err := net.ParseCIDR(c)
			if err == nil && Overlap(want, have) {
				return fmt.Errorf("kwok: pod CIDR %s overlaps node %s's pod CIDR %s: choose another", cidr, n.Name, c)
			}
		}
	}
	return nil
}

// Overlap says whether two networks share an address.
func Overlap(a, b *net.IPNet) bool {
	return a.Contains(b.IP) || b.Contains(a.IP)
}

// ID is the Sim's ID, <name>.<run ID> (ID).
func (s *Sim) ID() string { return ID(s.opts.RunID, s.opts.Name) }

// LogPath is where kwok's output goes.
func (s *Sim) LogPath() string { return s.logPath }

// Taint is the isolation taint every node of this Sim carries.
func (s *Sim) Taint() corev1.Taint { return IsolationTaint(s.ID()) }

// Toleration tolerates the isolation taint of this Sim's nodes.
func (s *Sim) Toleration() corev1.Toleration { return IsolationToleration(s.ID()) }

// IsolationTaint is the taint on the nodes of the Sim whose ID is simID.
func IsolationTaint(simID string) corev1.Taint {
	return corev1.Taint{Key: TaintKey, Value: simID, Effect: corev1.TaintEffectNoSchedule}
}

// IsolationToleration tolerates IsolationTaint(simID).
func IsolationToleration(simID string) corev1.Toleration {
	return corev1.Toleration{Key: TaintKey, Operator: corev1.TolerationOpEqual, Value: simID, Effect: corev1.TaintEffectNoSchedule}
}

// Nodes lists the names of the nodes this Sim made.
func (s *Sim) Nodes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.nodes...)
}

// NodeName is the name of the Sim's node of build: <name>-<run ID>-<build
// number>.
func (s *Sim) NodeName(build string) string {
	return fmt.Sprintf("%s-%s-%s", s.opts.Name, s.opts.RunID, build[strings.LastIndex(build, ".")+1:])
}

// AddWindowsNode makes the Sim's simulated Windows node of build
// (10.0.17763, 10.0.20348, ...), named NodeName(build), with the isolation
// taint and taints, waits until kwok reports it Ready as a Windows node,
// and returns it.
func (s *Sim) AddWindowsNode(ctx context.Context, build string, taints ...corev1.Taint) (*corev1.Node, error) {
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return nil, errors.New("kwok: the simulator is stopped")
	}
	name := s.NodeName(build)
	n, err := WindowsNode(name, build, s.opts.KubeletVersion, append([]corev1.Taint{s.Taint()}, taints...)...)
	if err != nil {
		return nil, err
	}
	n.Labels[LabelRun], n.Labels[LabelSim] = s.opts.RunID, s.ID()
	n.Annotations[AnnotationSim] = s.ID()
	for k, v := range s.opts.Labels {
		n.Labels[k] = v
	}
	for k, v := range s.opts.Annotations {
		n.Annotations[k] = v
	}
	host, _ := os.Hostname()
	n.Annotations[AnnotationOwner] = host + "/" + strconv.Itoa(os.Getpid())
	if _, err := s.client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("kwok: creating node %s: %w", name, err)
	}
	s.mu.Lock()
	s.nodes = append(s.nodes, name)
	s.mu.Unlock()
	return s.waitWindows(ctx, n)
}

// waitWindows waits until the node is Ready, and sets its nodeInfo back to
// Windows if kwok initialised it otherwise.
func (s *Sim) waitWindows(ctx context.Context, want *corev1.Node) (*corev1.Node, error) {
	var got *corev1.Node
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, s.opts.Timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-s.exited:
			return false, fmt.Errorf("kwok exited (%v)", s.exitErr)
		default:
		}
		n, err := s.client.CoreV1().Nodes().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		got = n
		if !Ready(n) {
			last = "not Ready yet"
			return false, nil
		}
		if info := n.Status.NodeInfo; info.OperatingSystem != string(corev1.Windows) || info.KernelVersion != want.Status.NodeInfo.KernelVersion || info.OSImage != want.Status.NodeInfo.OSImage {
			last = fmt.Sprintf("nodeInfo says %s %q %q", info.OperatingSystem, info.OSImage, info.KernelVersion)
			patch, _ := json.Marshal(map[string]any{"status": map[string]any{"nodeInfo": map[string]string{
				"operatingSystem": "windows", "osImage": want.Status.NodeInfo.OSImage, "kernelVersion": want.Status.NodeInfo.KernelVersion,
			}}})
			if _, err := s.client.CoreV1().Nodes().Patch(ctx, want.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
				last = "patching nodeInfo: " + err.Error()
			}
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return got, fmt.Errorf("kwok: node %s did not turn Ready as a Windows node within %s (%s; last: %s); kwok's log: %s",
			want.Name, s.opts.Timeout, err, last, s.logTail())
	}
	return got, nil
}

// Ready says whether n's Ready condition is True.
func Ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WindowsNode is the Node object of a simulated Windows node of build, as a
// Windows kubelet of this era registers it: labels (OS, arch, hostname,
// windows-build, and the deprecated beta OS and arch), nodeInfo (OS, image,
// kernel version = build and revision), capacity, and an address from
// TEST-NET-1 (RFC 5737) that nothing answers on. It is marked simulated;
// the Sim that adds it marks its run and itself.
func WindowsNode(name, build, kubeletVersion string, taints ...corev1.Taint) (*corev1.Node, error) {
	v, err := winrelease.Parse(build)
	if err != nil || v.HasRevision {
		return nil, fmt.Errorf("kwok: Windows build %q: want major.minor.build, e.g. 10.0.20348", build)
	}
	// A build of no known release is a Windows Server of some update.
	image, revision := "Windows Server Datacenter", 1
	if r, ok := v.Release(); ok {
		image, revision = r.Product+" Datacenter", r.Revision
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("4"),
		corev1.ResourceMemory:           resource.MustParse("16Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				LabelOS: "windows", LabelArch: "amd64", LabelHostname: name,
				LabelWindowsBuild: build,
				LabelBetaOS:       "windows", LabelBetaArch: "amd64",
				LabelSimulated: "true",
				"type":         "kwok",
			},
			Annotations: map[string]string{
				AnnotationNode:                 "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
		},
		Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: fakeAddress(name)},
				{Type: corev1.NodeHostName, Address: name},
			},
			NodeInfo: corev1.NodeSystemInfo{
				OperatingSystem: "windows",
				Architecture:    "amd64",
				OSImage:         image,
				KernelVersion:   fmt.Sprintf("%s.%d", build, revision),
				KubeletVersion:  kubeletVersion,
			},
		},
	}, nil
}

// fakeAddress is a TEST-NET-1 address derived from the node's name.
func fakeAddress(name string) string {
	var h uint32 = 2166136261
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	return fmt.Sprintf("192.0.2.%d", 1+h%254)
}

// Stop deletes the Sim's nodes (and the pods still bound to them, and their
// leases), waits until they are gone, ends kwok and removes its files. It
// is safe to call more than once; kwok is ended also when the API calls fail.
func (s *Sim) Stop(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	nodes := append([]string(nil), s.nodes...)
	s.mu.Unlock()

	var errs []error
	defer func() {
		s.kill()
		if s.opts.LogPath == "" {
			os.RemoveAll(s.dir)
		} else {
			os.Remove(filepath.Join(s.dir, "stages.yaml"))
			os.Remove(s.dir)
		}
	}()
	errs = append(errs, deleteNodes(ctx, s.client, nodes, s.opts.Timeout)...)
	return errors.Join(errs...)
}

// deleteNodes removes the pods bound to nodes, the nodes and their leases,
// and waits (bounded) until the nodes are gone.
func deleteNodes(ctx context.Context, cs kubernetes.Interface, nodes []string, timeout time.Duration) []error {
	var errs []error
	zero := int64(0)
	for _, name := range nodes {
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
		if err != nil {
			errs = append(errs, fmt.Errorf("kwok: listing pods on %s: %w", name, err))
		} else {
			for _, p := range pods.Items {
				err := cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
				if err != nil && !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("kwok: deleting pod %s/%s on %s: %w", p.Namespace, p.Name, name, err))
				}
			}
		}
		if err := cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("kwok: deleting node %s: %w", name, err))
		}
		if err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("kwok: deleting lease of %s: %w", name, err))
		}
	}
	for _, name := range nodes {
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("kwok: node %s still exists after %s: %w", name, timeout, err))
		}
	}
	return errs
}

// removeOrphans deletes simulated nodes that a process on this host made
// and that outlived it (a harness killed before it could stop kwok).
func removeOrphans(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) {
	host, _ := os.Hostname()
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: LabelSimulated + "=true"})
	if err != nil {
		return
	}
	var orphans []string
	for _, n := range list.Items {
		if orphaned(n.Annotations[AnnotationOwner], host) {
			orphans = append(orphans, n.Name)
		}
	}
	if len(orphans) > 0 {
		deleteNodes(ctx, cs, orphans, timeout)
	}
}

// orphaned says whether owner ("<host>/<pid>") names a process on host that is gone.
func orphaned(owner, host string) bool {
	h, p, ok := strings.Cut(owner, "/")
	if !ok || h != host || host == "" {
		return false
	}
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	return !pidAlive(pid)
}

// kill ends kwok: SIGTERM to its process group, SIGKILL after five seconds.
func (s *Sim) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	terminate(s.cmd.Process)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		forceKill(s.cmd.Process)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
	}
}

// Exited is closed when the kwok process has ended.
func (s *Sim) Exited() <-chan struct{} { return s.exited }

// logTail is the end of kwok's output, for error messages.
func (s *Sim) logTail() string {
	data, err := os.ReadFile(s.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	data = bytes.TrimSpace(data)
	const max = 2000
	if len(data) > max {
		data = data[len(data)-max:]
	}
	if len(data) == 0 {
		return "(empty)"
	}
	return string(data)
}
