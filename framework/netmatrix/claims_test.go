package netmatrix

import (
	"context"
	"reflect"
	"testing"
)

func TestApplicable(t *testing.T) {
	ts := fullTargets()
	type row struct {
		src  Peer
		want map[Mode]bool // by mode, for targets other than the source itself
	}
	rows := []row{
		{peerLinA, map[Mode]bool{PodIP: true, PodName: true, Ping: true, ClusterIP: true, ServiceName: true, ServiceFQDN: true, NodePort: false, Address: true}},
		{peerWinA, map[Mode]bool{PodIP: true, PodName: true, Ping: true, ClusterIP: true, ServiceName: true, ServiceFQDN: true, NodePort: false, Address: true}},
		{nodeLinCP, map[Mode]bool{PodIP: true, PodName: false, Ping: false, ClusterIP: true, ServiceName: false, ServiceFQDN: false, NodePort: true, Address: true}},
		{nodeWin1, map[Mode]bool{PodIP: true, PodName: false, Ping: false, ClusterIP: true, ServiceName: false, ServiceFQDN: false, NodePort: true, Address: true}},
		{outsideCli, map[Mode]bool{PodIP: false, PodName: false, Ping: false, ClusterIP: false, ServiceName: false, ServiceFQDN: false, NodePort: true, Address: false}},
	}
	for _, r := range rows {
		for _, tg := range ts {
			want := r.want[tg.Mode]
			if tg.Kind == r.src.Kind && tg.Name == r.src.Name {
				want = false // never itself
			}
			if got := Applicable(r.src, tg); got != want {
				t.Errorf("Applicable(%s, %s) = %v, want %v", r.src.Name, tg.ID(), got, want)
			}
		}
	}
	// A pod never probes itself, by any mode.
	for _, tg := range podTargets(peerLinA) {
		if Applicable(peerLinA, tg) {
			t.Errorf("linux-a probes itself by %s", tg.Mode)
		}
	}
	// Same name, other kind: not "itself".
	twin := Target{Peer: Peer{Name: "linux-a", Kind: Service}, Mode: ClusterIP, URL: "http://10.96.0.9:80/json"}
	if !Applicable(peerLinA, twin) {
		t.Errorf("a pod skipped a Service that has its name")
	}
	// A Service (or unknown kind) is never a source.
	if Applicable(peerSvcLinux, outsideTarget()) || Applicable(Peer{Name: "x"}, outsideTarget()) {
		t.Errorf("a Service or kindless peer probes")
	}
}

func TestClaimsFor(t *testing.T) {
	ts := fullTargets()
	tg := func(id string) Target { return targetByID(t, ts, id) }
	// svc-remote is a Windows-backed Service whose backends are on win-2 only.
	remoteWin := Peer{Name: "svc-remote", Kind: Service, OS: "windows", BackendNodes: []string{win2}, BackendIPs: []string{ipWinB}}
	remoteWinCIP := Target{Peer: remoteWin, Mode: ClusterIP, URL: "http://10.96.0.250:80/json"}
	cases := []struct {
		src  Peer
		t    Target
		want []string
	}{
		// Pod to pod, by IP and by name, per OS pair.
		{peerWinA, tg("windows-b/pod-ip"), []string{"NET-01"}},
		{peerWinA, tg("windows-b/pod-dns"), []string{"NET-02"}},
		{peerWinA, tg("linux-a/pod-ip"), []string{"NET-03"}},
		{peerWinA, tg("linux-a/pod-dns"), []string{"NET-04"}},
		{peerLinA, tg("windows-a/pod-ip"), []string{"NET-05"}},
		{peerLinA, tg("windows-a/pod-dns"), []string{"NET-06"}},
		{peerLinA, tg("linux-b/pod-ip"), []string{"NET-07"}},
		{peerLinA, tg("linux-b/pod-dns"), []string{"NET-08"}},
		// Pod to Service, per OS pair and mode; the FQDN adds NET-20.
		{peerLinA, tg("svc-windows/cluster-ip"), []string{"NET-09"}},
		{peerLinA, tg("svc-windows/service-dns"), []string{"NET-10"}},
		{peerLinA, tg("svc-windows/service-fqdn"), []string{"NET-10", "NET-20"}},
		{peerWinA, tg("svc-linux/cluster-ip"), []string{"NET-11"}},
		{peerWinA, tg("svc-linux/service-dns"), []string{"NET-12"}},
		{peerWinA, tg("svc-linux/service-fqdn"), []string{"NET-12", "NET-20"}},
		{peerWinB, tg("svc-windows/cluster-ip"), []string{"NET-13"}},
		{peerWinB, tg("svc-windows/service-dns"), []string{"NET-13"}},
		{peerWinB, tg("svc-windows/service-fqdn"), []string{"NET-13", "NET-20"}},
		// Linux pod to a Linux-backed Service: a control cell, except that
		// NET-20 covers Linux pods too.
		{peerLinA, tg("svc-linux/cluster-ip"), nil},
		{peerLinA, tg("svc-linux/service-dns"), nil},
		{peerLinA, tg("svc-linux/service-fqdn"), []string{"NET-20"}},
		// ICMP across nodes, whatever the OSes; not on the same node.
		{peerLinA, tg("windows-a/icmp"), []string{"NET-25"}},
		{peerLinA, tg("linux-b/icmp"), []string{"NET-25"}},
		{peerWinA, tg("windows-b/icmp"), []string{"NET-25"}},
		{Peer{Name: "linux-z", Kind: Pod, OS: "linux", Node: linCP}, tg("linux-a/icmp"), nil},
		{Peer{Name: "windows-z", Kind: Pod, OS: "windows", Node: win1}, tg("windows-a/icmp"), nil},
		// Pods to the server outside.
		{peerLinA, tg("outside-server/address"), []string{"NET-16"}},
		{peerWinA, tg("outside-server/address"), []string{"NET-17"}},
		// The Linux control-plane node.
		{nodeLinCP, tg("windows-a/pod-ip"), []string{"NET-18"}},
		{nodeLinCP, tg("svc-windows/cluster-ip"), []string{"NET-19"}},
		{nodeLinCP, tg("linux-b/pod-ip"), nil},
		{nodeLinCP, tg("svc-linux/cluster-ip"), nil},
		{nodeLinCP, tg("svc-windows/nodeport@" + linCP), nil},
		{nodeLinCP, tg("outside-server/address"), nil},
		// A Linux node that is not the control plane evidences nothing.
		{nodeLinW, tg("windows-a/pod-ip"), nil},
		{nodeLinW, tg("svc-windows/cluster-ip"), nil},
		// Windows nodes: NET-21 for a ClusterIP whose backends it hosts,
		// NET-27 for a NodePort through itself.
		{nodeWin1, tg("svc-windows/cluster-ip"), []string{"NET-21"}},
		{nodeWin2, tg("svc-windows/cluster-ip"), nil},
		{nodeWin1, remoteWinCIP, nil},
		{nodeWin2, remoteWinCIP, []string{"NET-21"}},
		{nodeWin1, tg("svc-linux/cluster-ip"), nil},
		{nodeWin1, tg("svc-linux/nodeport@" + win1), []string{"NET-27"}},
		{nodeWin1, tg("svc-windows/nodeport@" + win1), []string{"NET-27"}},
		{nodeWin2, tg("svc-linux/nodeport@" + win1), nil},
		{nodeWin1, tg("svc-linux/nodeport@" + linCP), nil},
		{nodeWin1, tg("windows-a/pod-ip"), nil},
		{nodeWin1, tg("outside-server/address"), nil},
		// The client outside: NET-14 through a Windows node, NET-15 through a Linux one.
		{outsideCli, tg("svc-linux/nodeport@" + win1), []string{"NET-14"}},
		{outsideCli, tg("svc-windows/nodeport@" + win1), []string{"NET-14"}},
		{outsideCli, tg("svc-linux/nodeport@" + linCP), []string{"NET-15"}},
		{outsideCli, tg("svc-windows/nodeport@" + linCP), []string{"NET-15"}},
		{outsideCli, tg("svc-linux/cluster-ip"), nil},
		// A Service is no source.
		{peerSvcLinux, tg("linux-a/pod-ip"), nil},
	}
	for _, c := range cases {
		got := ClaimsFor(c.src, c.t)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ClaimsFor(%s, %s) = %v, want %v", c.src.Name, c.t.ID(), got, c.want)
		}
	}
}

func TestClaimsForNeverRepeatsAClaim(t *testing.T) {
	srcs := []Peer{peerLinA, peerLinB, peerWinA, peerWinB, nodeLinCP, nodeLinW, nodeWin1, nodeWin2, outsideCli}
	for _, s := range srcs {
		for _, tg := range fullTargets() {
			seen := map[string]bool{}
			for _, id := range ClaimsFor(s, tg) {
				if id == "" || seen[id] {
					t.Errorf("ClaimsFor(%s, %s) = %v: empty or repeated", s.Name, tg.ID(), ClaimsFor(s, tg))
				}
				seen[id] = true
			}
		}
	}
}

// plannedMatrix is the small cluster with every kind of source.
func plannedMatrix() (*Matrix, []*fakeSource) {
	ts := fullTargets()
	var fakes []*fakeSource
	var sources []Source
	for _, p := range []Peer{peerLinA, peerLinB, peerWinA, peerWinB, nodeLinCP, nodeLinW, nodeWin1, outsideCli} {
		f := &fakeSource{peer: p, probe: per(answerFromBackend(ts))}
		fakes = append(fakes, f)
		sources = append(sources, f)
	}
	return &Matrix{Sources: sources, Targets: ts, Claims: ClaimsFor, Applies: Applicable, Workers: 4}, fakes
}

func TestClaimIDsPlanned(t *testing.T) {
	m, fakes := plannedMatrix()
	want := []string{"NET-01", "NET-02", "NET-03", "NET-04", "NET-05", "NET-06", "NET-07", "NET-08", "NET-09", "NET-10",
		"NET-11", "NET-12", "NET-13", "NET-14", "NET-15", "NET-16", "NET-17", "NET-18", "NET-19", "NET-20", "NET-21", "NET-25", "NET-27"}
	if got := m.ClaimIDsPlanned(); !reflect.DeepEqual(got, want) {
		t.Errorf("ClaimIDsPlanned = %v, want %v", got, want)
	}
	for _, f := range fakes {
		if len(f.Batches()) != 0 {
			t.Errorf("ClaimIDsPlanned probed %s", f.peer.Name)
		}
	}
	// Without the outside client and the Windows node, their claims go.
	m.Sources = m.Sources[:6]
	for _, id := range m.ClaimIDsPlanned() {
		if id == "NET-14" || id == "NET-15" || id == "NET-21" || id == "NET-27" {
			t.Errorf("ClaimIDsPlanned has %s without a source for it", id)
		}
	}
	// Applies filters: a cell that is not applicable evidences nothing.
	m2 := &Matrix{Sources: m.Sources, Targets: m.Targets,
		Claims:  func(Peer, Target) []string { return []string{"Z-9", "A-1"} },
		Applies: func(Peer, Target) bool { return false }}
	if got := m2.ClaimIDsPlanned(); len(got) != 0 {
		t.Errorf("ClaimIDsPlanned with nothing applicable = %v, want none", got)
	}
	m2.Applies = nil
	if got := m2.ClaimIDsPlanned(); !reflect.DeepEqual(got, []string{"A-1", "Z-9"}) {
		t.Errorf("ClaimIDsPlanned = %v, want sorted, each once", got)
	}
	m2.Claims = nil
	if got := m2.ClaimIDsPlanned(); got == nil || len(got) != 0 {
		t.Errorf("ClaimIDsPlanned without Claims = %#v, want an empty list", got)
	}
}

func TestCellsFor(t *testing.T) {
	m, _ := plannedMatrix()
	if got := m.CellsFor("NET-01"); len(got) != 0 {
		t.Errorf("CellsFor before Run = %d cells, want none", len(got))
	}
	m.Run(context.Background(), nil)
	planned := m.ClaimIDsPlanned()
	for _, id := range planned {
		cells := m.CellsFor(id)
		if len(cells) == 0 {
			t.Errorf("CellsFor(%s) is empty though it is planned", id)
		}
		for _, c := range cells {
			found := false
			for _, x := range c.Claims {
				found = found || x == id
			}
			if !found {
				t.Errorf("CellsFor(%s) returned %s -> %s with claims %v", id, c.Source, c.Target, c.Claims)
			}
		}
	}
	// Exactly the expected cells, in source then target order.
	var got []string
	for _, c := range m.CellsFor("NET-21") {
		got = append(got, c.Source+" -> "+c.Target)
	}
	if want := []string{win1 + " -> svc-windows/cluster-ip"}; !reflect.DeepEqual(got, want) {
		t.Errorf("CellsFor(NET-21) = %v, want %v", got, want)
	}
	got = nil
	for _, c := range m.CellsFor("NET-25") {
		got = append(got, c.Source+" -> "+c.Target)
	}
	want := []string{
		"linux-a -> linux-b/icmp", "linux-a -> windows-a/icmp", "linux-a -> windows-b/icmp",
		"linux-b -> linux-a/icmp", "linux-b -> windows-a/icmp", "linux-b -> windows-b/icmp",
		"windows-a -> linux-a/icmp", "windows-a -> linux-b/icmp", "windows-a -> windows-b/icmp",
		"windows-b -> linux-a/icmp", "windows-b -> linux-b/icmp", "windows-b -> windows-a/icmp",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CellsFor(NET-25) =\n%v\nwant\n%v", got, want)
	}
	if got := m.CellsFor("NET-99"); len(got) != 0 {
		t.Errorf("CellsFor(NET-99) = %d cells", len(got))
	}
	// Every cell of a planned claim is one CellsFor finds, and the other way round.
	n := 0
	for _, c := range m.Cells() {
		n += len(c.Claims)
	}
	total := 0
	for _, id := range planned {
		total += len(m.CellsFor(id))
	}
	if n != total {
		t.Errorf("%d claim references in cells, %d found through CellsFor", n, total)
	}
}

func TestTargetID(t *testing.T) {
	cases := map[string]Target{
		"linux-a/pod-ip":           {Peer: peerLinA, Mode: PodIP},
		"svc-linux/service-fqdn":   {Peer: peerSvcLinux, Mode: ServiceFQDN},
		"svc-linux/nodeport@win-1": {Peer: peerSvcLinux, Mode: NodePort, Via: win1},
		"outside-server/address":   {Peer: outsideSrv, Mode: Address},
	}
	for want, tg := range cases {
		if got := tg.ID(); got != want {
			t.Errorf("ID = %q, want %q", got, want)
		}
	}
}
