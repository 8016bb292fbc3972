package netmatrix

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/framework/probeclient"
)

// A cluster with a remote node joined through the underlay: the kind
// network's control plane and worker, and lin-r on a network of its own.
const (
	linR      = "lin-r"
	ipLinU    = "10.244.2.10"
	addrCP    = "172.18.0.4"
	addrR     = "192.168.80.2"
	addrHost  = "192.168.80.1"
	svcLinCIP = "http://10.96.0.20:80/json"
)

var (
	uPodKind  = Peer{Name: "linux-a", Kind: Pod, OS: "linux", Node: linW, BackendIPs: []string{ipLinA}}
	uPodR     = Peer{Name: "linux-u1", Kind: Pod, OS: "linux", Node: linR, Underlay: true, BackendIPs: []string{ipLinU}}
	uNodeCP   = Peer{Name: linCP, Kind: Node, OS: "linux", Node: linCP, ControlPlane: true, Address: addrCP, BackendIPs: []string{addrCP}}
	uNodeR    = Peer{Name: linR, Kind: Node, OS: "linux", Node: linR, Underlay: true, Address: addrR, BackendIPs: []string{addrR}}
	uSvcLinux = Peer{Name: "svc-linux", Kind: Service, OS: "linux", BackendNodes: []string{linW, linCP}, BackendIPs: []string{ipLinA}}
)

func underlayTargets() []Target {
	return []Target{
		{Peer: uPodKind, Mode: PodIP, URL: "http://" + ipLinA + ":8080/json"},
		{Peer: uPodR, Mode: PodIP, URL: "http://" + ipLinU + ":8080/json"},
		{Peer: uPodR, Mode: Ping, URL: "icmp://" + ipLinU},
		{Peer: uPodKind, Mode: PodName, URL: "http://linux-a.matrix:8080/json"},
		{Peer: uSvcLinux, Mode: ClusterIP, URL: svcLinCIP},
		{Peer: uSvcLinux, Mode: ServiceFQDN, URL: "http://svc-linux.ns.svc.cluster.local:80/json"},
		{Peer: uSvcLinux, Mode: NodePort, URL: "http://" + addrR + ":30080/json", Via: linR, ViaOS: "linux", ViaUnderlay: true},
		{Peer: uSvcLinux, Mode: NodePort, URL: "http://" + addrCP + ":30080/json", Via: linCP, ViaOS: "linux"},
		{Peer: uNodeCP, Mode: NodeIP, URL: "http://" + addrCP + ":31480/json"},
		{Peer: uNodeR, Mode: NodeIP, URL: "http://" + addrR + ":31480/json"},
	}
}

func hasPart(parts []ClaimPart, claim, part string) bool {
	return slices.Contains(parts, ClaimPart{Claim: claim, Part: part})
}

// INF-10's parts are the cells that cross the underlay, each the way its
// part says; the cells on the kind network alone evidence none of them.
func TestUnderlayCellsEvidenceINF10(t *testing.T) {
	ts := underlayTargets()
	tg := func(id string) Target { return targetByID(t, ts, id) }
	cases := []struct {
		src  Peer
		t    Target
		part string // "" for no INF-10 part
	}{
		{uPodKind, tg("linux-u1/pod-ip"), "pod to pod into the machines' network"},
		{uPodKind, tg("linux-u1/icmp"), "pod to pod into the machines' network"},
		{uPodR, tg("linux-a/pod-ip"), "pod to pod out of it"},
		{uPodR, tg("svc-linux/service-fqdn"), "DNS from its pods"},
		{uPodR, tg("linux-a/pod-dns"), "pod names from its pods"},
		{uPodR, tg("svc-linux/cluster-ip"), "ClusterIP from its pods"},
		{uNodeCP, tg("svc-linux/nodeport@" + linR), "NodePort through its node"},
		{uNodeR, tg("svc-linux/nodeport@" + linCP), "NodePort from its node"},
		{uNodeCP, tg("linux-u1/pod-ip"), "the control plane to its pods"},
		{uNodeR, tg("linux-a/pod-ip"), "its node to pods"},
		{uNodeCP, tg(linR + "/node-ip"), "node to node, each seeing the other's own address"},
		{uNodeR, tg(linCP + "/node-ip"), "node to node back, each seeing the other's own address"},
		// On the kind network alone: no INF-10 part, and no crossing.
		{uPodKind, tg("svc-linux/cluster-ip"), ""},
		{uPodKind, tg("linux-a/pod-dns"), ""},
		{uNodeCP, tg("svc-linux/nodeport@" + linCP), ""},
		{uNodeCP, tg("linux-a/pod-ip"), ""},
	}
	for _, c := range cases {
		parts := PartsFor(c.src, c.t)
		var inf []string
		for _, p := range parts {
			if p.Claim == "INF-10" {
				inf = append(inf, p.Part)
			}
		}
		switch {
		case c.part == "" && len(inf) > 0:
			t.Errorf("%s -> %s is on the kind network alone, yet evidences INF-10 %v", c.src.Name, c.t.ID(), inf)
		case c.part != "" && !hasPart(parts, "INF-10", c.part):
			t.Errorf("%s -> %s: INF-10 parts %v, want %q", c.src.Name, c.t.ID(), inf, c.part)
		case c.part != "" && len(inf) != 1:
			t.Errorf("%s -> %s matches INF-10 parts %v, want only %q", c.src.Name, c.t.ID(), inf, c.part)
		}
		if got, want := CrossesUnderlay(c.src, c.t), c.part != ""; got != want {
			t.Errorf("CrossesUnderlay(%s, %s) = %v, want %v", c.src.Name, c.t.ID(), got, want)
		}
	}
	// A node's own address is probed from other nodes only.
	if Applicable(uPodKind, tg(linCP+"/node-ip")) {
		t.Errorf("a pod probes a node's own address")
	}
	if !Applicable(uNodeR, tg(linCP+"/node-ip")) || Applicable(uNodeCP, tg(linCP+"/node-ip")) {
		t.Errorf("node-ip: the remote node must probe the control plane's address, and the control plane not its own")
	}
}

// A node-ip cell is reachable only when the target saw the source calling
// from its own address: the kind host's masquerade (the address the
// remote node sees when the underlay's nat RETURN is gone) is a wrong
// answer, however well the path works.
func TestNodeIPCellSeesTheCallersOwnAddress(t *testing.T) {
	target := Target{Peer: uNodeR, Mode: NodeIP, URL: "http://" + addrR + ":31480/json"}
	for _, tc := range []struct {
		caller string
		want   Verdict
	}{
		{addrCP, OK},
		{addrHost, Wrong},
	} {
		src := &fakeSource{peer: uNodeCP, probe: per(func(_ int, _ string) probeclient.Result {
			r := okResult(addrR)
			r.Detail.Caller = tc.caller
			return r
		})}
		m := &Matrix{Sources: []Source{src}, Targets: []Target{target}, Applies: Applicable, Workers: 1}
		m.Run(context.Background(), nil)
		cells := m.Cells()
		if len(cells) != 1 {
			t.Fatalf("%d cells, want 1", len(cells))
		}
		c := cells[0]
		if c.Verdict != tc.want {
			t.Errorf("caller %s: verdict %s (%s), want %s", tc.caller, c.Verdict, c.Why, tc.want)
		}
		if tc.want == Wrong && !strings.Contains(c.Describe(), "saw the call coming from "+addrHost) {
			t.Errorf("the wrong answer does not say what the target saw: %s", c.Describe())
		}
	}
}
