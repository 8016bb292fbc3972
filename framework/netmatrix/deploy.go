package netmatrix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/winconform/winconform/framework/skips"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/podexec"
	"github.com/winconform/winconform/infra/kube"
	"github.com/winconform/winconform/infra/windows/remote"
)

// Env is what deploying the matrix needs.
type Env struct {
	Config        *rest.Config
	Clientset     kubernetes.Interface
	Facts         *facts.Facts
	Kubeconfig    string // for reproduction commands
	ClusterDomain string // e.g. cluster.local
	// ProbeBinary is the local probe (Linux), for the client and the
	// server outside the cluster; "" leaves both out.
	ProbeBinary string
	// ExternalURL is a server outside the cluster to use instead of a local one.
	ExternalURL string
	// Labels and Annotations go on the matrix's namespace (the run's ID
	// and start, so that what an interrupted or killed run leaves can be
	// found).
	Labels, Annotations map[string]string
	// Machines reach Windows nodes' hosts, by node name (from the inventory).
	Machines map[string]remote.Exec
	// Probing is how every source probes.
	Probing Probing
	Log     io.Writer
}

// Absence says why a claim has no cells on this cluster: a skip reason
// (framework/skips), whose key the record's reader knows.
type Absence = skips.Reason

// Deployment is the matrix's peers in a namespace of their own.
type Deployment struct {
	Namespace string
	Matrix    *Matrix
	// Absent lists, per claim, why it has no cells here.
	Absent  map[string]Absence
	env     Env
	cleanup []func(context.Context) error
}

const (
	subdomain   = "matrix"
	partOf      = "winconform-netmatrix"
	servicePort = 80
	// nodeProbePort is the port of the host-network pod that probes from a
	// Linux node; it only needs to answer its readiness probe.
	nodeProbePort = 31480
)

// Deploy creates the peers (probe pods per OS, Services, a host-network pod
// on the control plane, a server outside the cluster), waits for them, and
// returns the matrix ready to run. Cleanup removes everything, also after a
// failed Deploy.
func Deploy(ctx context.Context, env Env) (*Deployment, error) {
	if env.Log == nil {
		env.Log = io.Discard
	}
	d := &Deployment{env: env, Absent: map[string]Absence{}}
	nsLabels := map[string]string{"pod-security.kubernetes.io/enforce": "privileged", "app.kubernetes.io/part-of": partOf}
	for k, v := range env.Labels {
		nsLabels[k] = v
	}
	ns, err := env.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "netmatrix-", Labels: nsLabels, Annotations: env.Annotations,
	}}, metav1.CreateOptions{})
	if err != nil {
		return d, fmt.Errorf("creating the matrix's namespace: %w", err)
	}
	d.Namespace = ns.Name
	d.cleanup = append(d.cleanup, func(ctx context.Context) error {
		return env.Clientset.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
	})
	m := &Matrix{
		Profile: Profile{ServerVersion: env.Facts.ServerVersion, CNI: env.Facts.CNI, Rules: DocumentedLimits},
		Claims:  ClaimsFor, Parts: PartsFor, Applies: Applicable, Workers: 4,
	}
	d.Matrix = m
	pods, peers := d.podPlan()
	nodePods, nodePeers := d.nodeSources()
	pods = append(pods, nodePods...)
	if _, err := env.Clientset.CoreV1().Services(ns.Name).Create(ctx, ospod.HeadlessService(subdomain), metav1.CreateOptions{}); err != nil {
		return d, err
	}
	var svcs []*corev1.Service
	for _, os := range []string{"linux", "windows"} {
		if hasOS(peers, os) {
			svc, err := env.Clientset.CoreV1().Services(ns.Name).Create(ctx, service(os), metav1.CreateOptions{})
			if err != nil {
				return d, err
			}
			svcs = append(svcs, svc)
		}
	}
	started, err := d.startPods(ctx, pods)
	if err != nil {
		return d, err
	}
	exec := podexec.Client{Config: env.Config, Clientset: env.Clientset}
	for _, p := range started {
		peer, ok := peers[p.Name]
		if !ok {
			continue // a node source, added below
		}
		peer.Node, peer.BackendIPs = p.Spec.NodeName, []string{p.Status.PodIP}
		peers[p.Name] = peer
		m.Sources = append(m.Sources, PodSource{Self: peer, Exec: exec, Namespace: ns.Name, Pod: p.Name, Container: "probe",
			Binary: ospod.ProbeBinary(peer.OS), Kubeconfig: env.Kubeconfig, Probing: env.Probing})
		m.Targets = append(m.Targets,
			Target{Peer: peer, Mode: PodIP, URL: webURL(p.Status.PodIP, ospod.HTTPPort)},
			Target{Peer: peer, Mode: PodName, URL: webURL(p.Name+"."+subdomain, ospod.HTTPPort)},
			Target{Peer: peer, Mode: Ping, URL: "icmp://" + p.Status.PodIP})
	}
	// Each node source is a target too, by its node's own address, where
	// another node source calls it: that node must see the caller's own
	// address (no NAT between nodes; what the underlay keeps).
	for _, p := range nodePods {
		peer := nodePeers[p.Name]
		m.Sources = append(m.Sources, PodSource{Self: peer, Exec: exec, Namespace: ns.Name, Pod: p.Name, Container: "probe",
			Binary: ospod.ProbeBinary("linux"), Kubeconfig: env.Kubeconfig, Probing: env.Probing})
		if len(nodePods) > 1 && peer.Address != "" {
			t := peer
			t.BackendIPs = []string{peer.Address}
			m.Targets = append(m.Targets, Target{Peer: t, Mode: NodeIP, URL: webURL(peer.Address, nodeProbePort)})
		}
	}
	for _, svc := range svcs {
		if err := d.serviceTargets(ctx, svc, started); err != nil {
			return d, err
		}
	}
	if err := d.outside(ctx); err != nil {
		return d, err
	}
	d.settle(ctx, time.Minute)
	d.windowsHosts()
	d.recordAbsences(peers)
	return d, nil
}

// settle waits, up to timeout in all, until every pod source and the Linux
// node source reach every Service by its ClusterIP: right after a cluster
// or a Service is made, kube-proxy may not have programmed every node yet.
// The matrix then measures a converged cluster; a path that never
// converges still shows in it, blocked.
func (d *Deployment) settle(ctx context.Context, timeout time.Duration) {
	var urls []string
	for _, t := range d.Matrix.Targets {
		if t.Mode == ClusterIP {
			urls = append(urls, t.URL)
		}
	}
	if len(urls) == 0 {
		return
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, s := range d.Matrix.Sources {
		p := s.Peer()
		if p.Kind != Pod && !(p.Kind == Node && p.OS == string(corev1.Linux)) {
			continue
		}
		err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			rs, err := s.Probe(ctx, urls)
			if err != nil {
				return false, nil
			}
			for _, r := range rs {
				if !r.OK {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			fmt.Fprintf(d.env.Log, "netmatrix: %s did not reach every ClusterIP within %s; probing anyway\n", p.Name, timeout)
			return
		}
	}
	fmt.Fprintf(d.env.Log, "netmatrix: every source reached every ClusterIP after %s\n", time.Since(start).Round(100*time.Millisecond))
}

// podPlan places two probe pods on one node of each OS and a third on
// another node of that OS, when there is one, preferring nodes on the
// cluster's own network; then one more pod on each node of the OS joined
// through the underlay that has none yet. That pod is no Service's
// endpoint: the Services' paths from the kind network stay off the
// underlay, and the paths from that pod to them all cross it.
func (d *Deployment) podPlan() ([]*corev1.Pod, map[string]Peer) {
	var pods []*corev1.Pod
	peers := map[string]Peer{}
	for _, os := range []string{"linux", "windows"} {
		nodes := d.env.Facts.Select(facts.Query{OS: os, Real: true, Ready: true})
		if len(nodes) == 0 {
			continue
		}
		sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Underlay == "" && nodes[j].Underlay != "" })
		place := []facts.Node{nodes[0], nodes[0]}
		if len(nodes) > 1 {
			place = append(place, nodes[1])
		}
		extra := 0
		for _, n := range nodes[min(2, len(nodes)):] {
			if n.Underlay != "" && !slices.ContainsFunc(place, func(p facts.Node) bool { return p.Name == n.Name }) {
				place = append(place, n)
				extra++
			}
		}
		for i, n := range place {
			name := fmt.Sprintf("%s-%c", os, 'a'+i)
			endpoint := i < len(place)-extra
			if !endpoint {
				name = fmt.Sprintf("%s-u%d", os, i-(len(place)-extra)+1)
			}
			p := ospod.Probe(name, os, ospod.OnNode(n), ospod.WithDNSName(name, subdomain))
			p.Labels["app.kubernetes.io/part-of"] = partOf
			if endpoint {
				p.Labels["winconform.io/os"] = os
			}
			pods = append(pods, p)
			peers[name] = Peer{Name: name, Kind: Pod, OS: os, Node: n.Name, Build: n.WindowsBuild, Underlay: n.Underlay != ""}
		}
	}
	return pods, peers
}

// nodeSources are host-network pods from which Linux nodes' own network
// stacks probe: on a control-plane node, and on each node joined through
// the underlay.
func (d *Deployment) nodeSources() ([]*corev1.Pod, map[string]Peer) {
	var pods []*corev1.Pod
	peers := map[string]Peer{}
	add := func(n facts.Node, controlPlane bool) {
		p := ospod.Probe("node-"+n.Name, "linux", ospod.OnNode(n))
		p.Spec.HostNetwork = true
		c := &p.Spec.Containers[0]
		c.Command = ospod.ProbeCommand("linux", "serve", "--name", n.Name, "--http-port", strconv.Itoa(nodeProbePort), "--tcp-port", "0", "--udp-port", "0")
		c.Ports = nil
		c.ReadinessProbe.HTTPGet.Port = intstr.FromInt32(nodeProbePort)
		pods = append(pods, p)
		peers[p.Name] = Peer{Name: n.Name, Kind: Node, OS: "linux", Node: n.Name, ControlPlane: controlPlane, Underlay: n.Underlay != "", Address: n.InternalIP}
	}
	for _, n := range d.env.Facts.ControlPlane() {
		if n.OS == string(corev1.Linux) && !n.Simulated && n.Ready {
			add(n, true)
			break
		}
	}
	for _, n := range d.env.Facts.Select(facts.Query{OS: "linux", Real: true, Ready: true}) {
		if n.Underlay != "" && !n.ControlPlane {
			add(n, false)
		}
	}
	return pods, peers
}

func service(os string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "svc-" + os},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: map[string]string{"app.kubernetes.io/part-of": partOf, "winconform.io/os": os},
			Ports:    []corev1.ServicePort{{Name: "http", Port: servicePort, TargetPort: intstr.FromInt32(ospod.HTTPPort)}},
		},
	}
}

func (d *Deployment) startPods(ctx context.Context, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	client := d.env.Clientset.CoreV1().Pods(d.Namespace)
	for _, p := range pods {
		if _, err := client.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("creating pod %s: %w", p.Name, err)
		}
	}
	var out []*corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		out = out[:0]
		for _, p := range pods {
			got, err := client.Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil || !kube.PodReady(got) {
				return false, nil
			}
			out = append(out, got)
		}
		return true, nil
	})
	if err != nil {
		var problems []string
		for _, p := range pods {
			if got, err := client.Get(context.WithoutCancel(ctx), p.Name, metav1.GetOptions{}); err == nil && !kube.PodReady(got) {
				problems = append(problems, p.Name+" "+kube.DescribePod(got))
			}
		}
		return nil, fmt.Errorf("the matrix's pods did not turn Ready within 3m: %v", problems)
	}
	return out, nil
}

// serviceTargets waits until svc has every ready endpoint it should, then
// adds it by ClusterIP, short name, fully qualified name and NodePort on
// every Ready node.
func (d *Deployment) serviceTargets(ctx context.Context, svc *corev1.Service, pods []*corev1.Pod) error {
	os := svc.Spec.Selector["winconform.io/os"]
	var ips, nodes []string
	for _, p := range pods {
		if p.Labels["winconform.io/os"] == os && p.Labels["app.kubernetes.io/part-of"] == partOf {
			ips = append(ips, p.Status.PodIP)
			if !slices.Contains(nodes, p.Spec.NodeName) {
				nodes = append(nodes, p.Spec.NodeName)
			}
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		slices, err := d.env.Clientset.DiscoveryV1().EndpointSlices(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc.Name})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					ready += len(e.Addresses)
				}
			}
		}
		return ready == len(ips), nil
	})
	if err != nil {
		return fmt.Errorf("service %s did not get its %d endpoints within a minute", svc.Name, len(ips))
	}
	peer := Peer{Name: svc.Name, Kind: Service, OS: os, BackendNodes: nodes, BackendIPs: ips}
	for _, n := range d.env.Facts.Nodes {
		if n.Underlay != "" && slices.Contains(nodes, n.Name) {
			peer.Underlay = true
		}
	}
	fqdn := fmt.Sprintf("%s.%s.svc.%s", svc.Name, d.Namespace, d.env.ClusterDomain)
	m := d.Matrix
	m.Targets = append(m.Targets,
		Target{Peer: peer, Mode: ClusterIP, URL: webURL(svc.Spec.ClusterIP, servicePort)},
		Target{Peer: peer, Mode: ServiceName, URL: webURL(svc.Name, servicePort)},
		Target{Peer: peer, Mode: ServiceFQDN, URL: webURL(fqdn, servicePort)})
	np := svc.Spec.Ports[0].NodePort
	for _, n := range d.env.Facts.Select(facts.Query{Real: true, Ready: true}) {
		if n.InternalIP == "" {
			continue
		}
		m.Targets = append(m.Targets, Target{Peer: peer, Mode: NodePort, URL: webURL(n.InternalIP, int(np)), Via: n.Name, ViaOS: n.OS, ViaUnderlay: n.Underlay != ""})
	}
	return nil
}

// outside adds the client and the server outside the cluster: the local
// probe, and a server it runs on this machine (or ExternalURL).
func (d *Deployment) outside(ctx context.Context) error {
	env := d.env
	if env.ProbeBinary != "" {
		if _, err := os.Stat(env.ProbeBinary); err != nil {
			env.ProbeBinary = ""
			fmt.Fprintf(env.Log, "netmatrix: no local probe (%v): no client outside the cluster\n", err)
		}
	}
	if env.ProbeBinary != "" {
		d.Matrix.Sources = append(d.Matrix.Sources, LocalSource{Self: Peer{Name: "outside-client", Kind: External}, Binary: env.ProbeBinary, Probing: env.Probing})
	}
	target := env.ExternalURL
	if target == "" && env.ProbeBinary != "" {
		u, stop, err := d.localServer(ctx)
		if err != nil {
			return err
		}
		d.cleanup = append(d.cleanup, func(context.Context) error { stop(); return nil })
		target = u
	}
	if target == "" {
		return nil
	}
	if _, err := url.Parse(target); err != nil {
		return fmt.Errorf("--external-url %q: %w", target, err)
	}
	d.Matrix.Targets = append(d.Matrix.Targets, Target{Peer: Peer{Name: "outside-server", Kind: External}, Mode: Address, URL: target})
	return nil
}

// localServer runs `probe serve` on this machine, on the address the
// cluster's nodes reach it by, and returns its URL.
func (d *Deployment) localServer(ctx context.Context) (string, func(), error) {
	var nodeIP string
	for _, n := range d.env.Facts.Nodes {
		if n.InternalIP != "" {
			nodeIP = n.InternalIP
			break
		}
	}
	if nodeIP == "" {
		return "", nil, errors.New("no node has an internal IP to find this machine's address toward the cluster by")
	}
	conn, err := net.Dial("udp", net.JoinHostPort(nodeIP, "9"))
	if err != nil {
		return "", nil, fmt.Errorf("no route from this machine to node %s: %w", nodeIP, err)
	}
	host := conn.LocalAddr().(*net.UDPAddr).IP.String()
	conn.Close()
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		return "", nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(d.env.ProbeBinary, "serve", "--name", "outside-server", "--http-port", strconv.Itoa(port), "--tcp-port", "0", "--udp-port", "0")
	cmd.Stdout, cmd.Stderr = io.Discard, d.env.Log
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	u := webURL(host, port)
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil, nil
	})
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("the local probe server on %s:%d did not start", host, port)
	}
	return u, stop, nil
}

// windowsHosts adds a source for each Windows node the inventory reaches.
func (d *Deployment) windowsHosts() {
	for _, n := range d.env.Facts.Select(facts.Query{OS: "windows", Real: true, Ready: true}) {
		if e, ok := d.env.Machines[n.Name]; ok {
			d.Matrix.Sources = append(d.Matrix.Sources, RemoteSource{Self: Peer{Name: n.Name, Kind: Node, OS: "windows", Node: n.Name, Build: n.WindowsBuild, Underlay: n.Underlay != ""}, Exec: e, Probing: d.env.Probing})
		}
	}
}

// recordAbsences notes, for each claim the matrix could evidence but has
// no cell for, why.
func (d *Deployment) recordAbsences(peers map[string]Peer) {
	windows := hasOS(peers, "windows")
	for _, id := range WindowsOnlyPaths() {
		if !windows {
			d.Absent[id] = skips.NoWindowsNode
		}
	}
	if windows {
		for _, id := range []string{"NET-21", "NET-27"} {
			d.Absent[id] = skips.NoInventory
		}
	}
	for _, id := range []string{"NET-14", "NET-15", "NET-16", "NET-17"} {
		if _, set := d.Absent[id]; !set {
			d.Absent[id] = skips.NoOutsidePeer
		}
	}
	for _, id := range []string{"NET-18", "NET-19"} {
		if _, set := d.Absent[id]; !set {
			d.Absent[id] = skips.ManagedControlPlane
		}
	}
	d.Absent["NET-25"] = skips.TooFewNodes
	d.Absent["INF-10"] = skips.NoUnderlayNode
	for _, id := range d.Matrix.ClaimIDsPlanned() {
		delete(d.Absent, id)
	}
}

// WindowsOnlyPaths lists the path claims every part of which has a Windows
// end (or goes through a Windows node): without Windows nodes they have no cell.
func WindowsOnlyPaths() []string {
	var out []string
	for _, c := range claims.All() {
		if len(c.Parts) == 0 {
			continue
		}
		all := true
		for _, p := range c.Parts {
			all = all && (p.From.OS == corev1.Windows || p.To.OS == corev1.Windows || p.Via == corev1.Windows)
		}
		if all {
			out = append(out, c.ID)
		}
	}
	return out
}

// Cleanup removes what Deploy made.
func (d *Deployment) Cleanup(ctx context.Context) error {
	var errs []error
	for i := len(d.cleanup) - 1; i >= 0; i-- {
		errs = append(errs, d.cleanup[i](ctx))
	}
	return errors.Join(errs...)
}

func hasOS(peers map[string]Peer, os string) bool {
	for _, p := range peers {
		if p.OS == os {
			return true
		}
	}
	return false
}

func webURL(host string, port int) string {
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/json"
}
