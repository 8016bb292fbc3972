package netmatrix

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/winconform/winconform/framework/probeclient"
)

// fakeSource is a Source whose Probe is a function; it records every batch
// it is given, in call order.
type fakeSource struct {
	peer  Peer
	probe func(ctx context.Context, call int, targets []string) ([]probeclient.Result, error)

	mu      sync.Mutex
	batches [][]string
}

func (f *fakeSource) Peer() Peer { return f.peer }

func (f *fakeSource) Probe(ctx context.Context, targets []string) ([]probeclient.Result, error) {
	f.mu.Lock()
	call := len(f.batches)
	f.batches = append(f.batches, slices.Clone(targets))
	f.mu.Unlock()
	if f.probe == nil {
		return nil, fmt.Errorf("fake source %s has no probe function", f.peer.Name)
	}
	return f.probe(ctx, call, targets)
}

func (f *fakeSource) Repro(target string) string { return "repro-from " + f.peer.Name + " " + target }

// Batches returns a copy of the batches received so far.
func (f *fakeSource) Batches() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([][]string, len(f.batches))
	for i, b := range f.batches {
		out[i] = slices.Clone(b)
	}
	return out
}

// per builds a probe function from one answer per (call, target).
func per(answer func(call int, url string) probeclient.Result) func(context.Context, int, []string) ([]probeclient.Result, error) {
	return func(_ context.Context, call int, targets []string) ([]probeclient.Result, error) {
		out := make([]probeclient.Result, len(targets))
		for i, u := range targets {
			r := answer(call, u)
			r.Index, r.Target = i, u
			out[i] = r
		}
		return out, nil
	}
}

// okResult is a successful probe answered by podIP.
func okResult(podIP string) probeclient.Result {
	return probeclient.Result{OK: true, LatencyMs: 1.5, Attempts: 1, Detail: probeclient.Detail{PodIP: podIP, StatusCode: 200}}
}

// failResult is a failed probe of class class.
func failResult(class, msg string) probeclient.Result {
	return probeclient.Result{OK: false, ErrorClass: class, Error: msg, Attempts: 1}
}

// answerFromBackend answers every URL of targets OK, from the target's first
// backend IP (or 192.0.2.1 when any answer will do).
func answerFromBackend(targets []Target) func(call int, url string) probeclient.Result {
	byURL := map[string]Target{}
	for _, t := range targets {
		byURL[t.URL] = t
	}
	return func(_ int, url string) probeclient.Result {
		t, ok := byURL[url]
		if !ok {
			return failResult("invalid-target", "unknown URL "+url)
		}
		if len(t.BackendIPs) > 0 {
			return okResult(t.BackendIPs[0])
		}
		return okResult("192.0.2.1")
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A small cluster: a Linux control-plane node, a Linux worker, two
// Windows nodes.
const (
	linCP  = "lin-cp"
	linW   = "lin-w"
	win1   = "win-1"
	win2   = "win-2"
	ipLinA = "10.244.0.10"
	ipLinB = "10.244.1.10"
	ipWinA = "10.244.2.10"
	ipWinB = "10.244.3.10"
)

var (
	peerLinA = Peer{Name: "linux-a", Kind: Pod, OS: "linux", Node: linCP, BackendIPs: []string{ipLinA}}
	peerLinB = Peer{Name: "linux-b", Kind: Pod, OS: "linux", Node: linW, BackendIPs: []string{ipLinB}}
	peerWinA = Peer{Name: "windows-a", Kind: Pod, OS: "windows", Node: win1, BackendIPs: []string{ipWinA}}
	peerWinB = Peer{Name: "windows-b", Kind: Pod, OS: "windows", Node: win2, BackendIPs: []string{ipWinB}}

	peerSvcLinux   = Peer{Name: "svc-linux", Kind: Service, OS: "linux", BackendNodes: []string{linCP, linW}, BackendIPs: []string{ipLinA, ipLinB}}
	peerSvcWindows = Peer{Name: "svc-windows", Kind: Service, OS: "windows", BackendNodes: []string{win1}, BackendIPs: []string{ipWinA}}

	nodeLinCP   = Peer{Name: linCP, Kind: Node, OS: "linux", Node: linCP, ControlPlane: true}
	nodeLinW    = Peer{Name: linW, Kind: Node, OS: "linux", Node: linW}
	nodeWin1    = Peer{Name: win1, Kind: Node, OS: "windows", Node: win1}
	nodeWin2    = Peer{Name: win2, Kind: Node, OS: "windows", Node: win2}
	outsideCli  = Peer{Name: "outside-client", Kind: External}
	outsideSrv  = Peer{Name: "outside-server", Kind: External}
	outsideURL  = "http://192.0.2.50:8080/json"
	nodeIPs     = map[string]string{linCP: "172.18.0.2", linW: "172.18.0.3", win1: "172.18.0.4", win2: "172.18.0.5"}
	nodeOSes    = map[string]string{linCP: "linux", linW: "linux", win1: "windows", win2: "windows"}
	serviceIPs  = map[string]string{"svc-linux": "10.96.0.100", "svc-windows": "10.96.0.200"}
	serviceNPs  = map[string]int{"svc-linux": 30080, "svc-windows": 30081}
	clusterName = "cluster.local"
)

func podTargets(p Peer) []Target {
	return []Target{
		{Peer: p, Mode: PodIP, URL: webURL(p.BackendIPs[0], 8080)},
		{Peer: p, Mode: PodName, URL: webURL(p.Name+".matrix", 8080)},
		{Peer: p, Mode: Ping, URL: "icmp://" + p.BackendIPs[0]},
	}
}

func serviceTargets(p Peer, via ...string) []Target {
	ts := []Target{
		{Peer: p, Mode: ClusterIP, URL: webURL(serviceIPs[p.Name], 80)},
		{Peer: p, Mode: ServiceName, URL: webURL(p.Name, 80)},
		{Peer: p, Mode: ServiceFQDN, URL: webURL(p.Name+".ns.svc."+clusterName, 80)},
	}
	for _, n := range via {
		ts = append(ts, Target{Peer: p, Mode: NodePort, URL: webURL(nodeIPs[n], serviceNPs[p.Name]), Via: n, ViaOS: nodeOSes[n]})
	}
	return ts
}

func outsideTarget() Target { return Target{Peer: outsideSrv, Mode: Address, URL: outsideURL} }

// fullTargets is every kind of target of the small cluster.
func fullTargets() []Target {
	var ts []Target
	ts = append(ts, podTargets(peerLinA)...)
	ts = append(ts, podTargets(peerLinB)...)
	ts = append(ts, podTargets(peerWinA)...)
	ts = append(ts, podTargets(peerWinB)...)
	ts = append(ts, serviceTargets(peerSvcLinux, linCP, win1)...)
	ts = append(ts, serviceTargets(peerSvcWindows, linCP, win1)...)
	ts = append(ts, outsideTarget())
	return ts
}

// targetByID finds a target by ID or fails the test.
func targetByID(t *testing.T, ts []Target, id string) Target {
	t.Helper()
	for _, x := range ts {
		if x.ID() == id {
			return x
		}
	}
	t.Fatalf("no target %s", id)
	return Target{}
}

// cellOf finds a run matrix's cell or fails the test.
func cellOf(t *testing.T, m *Matrix, source, target string) *Cell {
	t.Helper()
	for _, c := range m.Cells() {
		if c.Source == source && c.Target == target {
			return c
		}
	}
	t.Fatalf("no cell %s -> %s", source, target)
	return nil
}

// urlsOf are the URLs of the targets src applies to, in target order.
func urlsOf(src Peer, ts []Target) []string {
	var out []string
	for _, t := range ts {
		if Applicable(src, t) {
			out = append(out, t.URL)
		}
	}
	return out
}
