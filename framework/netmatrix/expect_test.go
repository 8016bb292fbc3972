package netmatrix

import (
	"strings"
	"testing"

	"github.com/winconform/winconform/framework/probeclient"
	"github.com/winconform/winconform/internal/kubelines"
)

func TestObserve(t *testing.T) {
	pod := podTargets(peerWinA)[0]
	svc := serviceTargets(peerSvcLinux)[0]
	ping := podTargets(peerWinA)[2]
	outside := outsideTarget()
	cases := []struct {
		name    string
		r       probeclient.Result
		t       Target
		want    Observation
		wantWhy string // substrings, "|"-separated; "" means Why must be empty
	}{
		{"ok from the pod", okResult(ipWinA), pod, Reachable, ""},
		{"ok from a service backend", okResult(ipLinB), svc, Reachable, ""},
		{"ok from a stranger, pod", okResult("10.9.9.9"), pod, WrongAnswer, "10.9.9.9|" + ipWinA},
		{"ok from a stranger, service", okResult("10.9.9.9"), svc, WrongAnswer, "answered by 10.9.9.9, which is not " + ipLinA + " or " + ipLinB},
		{"ok without a pod IP, service", okResult(""), svc, WrongAnswer, ipLinA},
		{"ping ignores backends", okResult("10.9.9.9"), ping, Reachable, ""},
		{"ping with no detail", okResult(""), ping, Reachable, ""},
		{"no backends: any answer", okResult("203.0.113.7"), outside, Reachable, ""},
		{"unsupported", failResult("unsupported", "raw sockets need privileges"), ping, ProbeError, "raw sockets need privileges"},
		{"invalid target", failResult("invalid-target", "bad URL"), pod, ProbeError, "bad URL"},
		{"synthesized probe error", failResult("probe-error", "exec failed"), pod, ProbeError, "exec failed"},
		{"timeout", failResult("timeout", "i/o timeout"), pod, Blocked, ""},
		{"refused", failResult("refused", "connection refused"), svc, Blocked, ""},
		{"dns", failResult("dns", "no such host"), svc, Blocked, ""},
		{"reset", failResult("reset", "connection reset by peer"), outside, Blocked, ""},
		{"unreachable", failResult("unreachable", "no route to host"), pod, Blocked, ""},
		// An answer that is not the target's is no blocked path: a 404 from
		// a Service IP is a wrong answer.
		{"http status", failResult("http-status", "404 Not Found"), svc, WrongAnswer, "http-status|404"},
		{"mismatch", failResult("mismatch", "not the probe's answer"), pod, WrongAnswer, "mismatch"},
		{"unclassified", failResult("other", "something odd"), pod, Unclassified, "other: something odd"},
		{"no class at all", failResult("", "?"), pod, Unclassified, "?"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := observe(c.r, c.t)
			if got != c.want {
				t.Errorf("observe = %s (%q), want %s", got, why, c.want)
			}
			if c.wantWhy == "" {
				if why != "" {
					t.Errorf("why %q, want none", why)
				}
				return
			}
			for _, s := range strings.Split(c.wantWhy, "|") {
				if !strings.Contains(why, s) {
					t.Errorf("why %q does not contain %q", why, s)
				}
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	reach := Expectation{Reachable: true}
	unreach := Expectation{Reachable: false, Rule: "r"}
	cases := []struct {
		e    Expectation
		o    Observation
		want Verdict
	}{
		{reach, Reachable, OK},
		{reach, Blocked, Regression},
		{reach, ProbeError, Broken},
		{reach, NotProbed, Skipped},
		{unreach, Reachable, Drift},
		{unreach, Blocked, OK},
		{unreach, ProbeError, Broken},
		{unreach, NotProbed, Skipped},
		{reach, WrongAnswer, Wrong},
		{unreach, WrongAnswer, Wrong},
		{reach, Unclassified, Wrong},
		{unreach, Unclassified, Wrong},
	}
	for _, c := range cases {
		if got := verdict(c.e, c.o); got != c.want {
			t.Errorf("verdict(reachable=%v, %s) = %s, want %s", c.e.Reachable, c.o, got, c.want)
		}
	}
}

func documented(version, cni string) Profile {
	return Profile{ServerVersion: version, CNI: cni, Rules: DocumentedLimits}
}

func TestExpectWindowsNodeToClusterIP(t *testing.T) {
	p := documented("v1.37.2", "flannel/vxlan")
	// svc-windows's backends run on win-1 only.
	local := serviceTargets(peerSvcWindows)[0]
	e := p.Expect(nodeWin1, local)
	if e.Reachable || e.Rule != "windows-host-to-local-service-ip" || e.Claim != "NET-21" || e.Doc != DocSchedulingGuide || e.Reason == "" {
		t.Errorf("win-1 -> its own Service's ClusterIP: %+v, want unreachable by windows-host-to-local-service-ip (NET-21)", e)
	}
	remote := p.Expect(nodeWin2, local)
	if remote.Reachable || remote.Rule != "windows-host-to-service-ip" || remote.Claim != "NET-21" || remote.Doc != DocTroubleshooting {
		t.Errorf("win-2 -> a ClusterIP with backends elsewhere: %+v, want unreachable by windows-host-to-service-ip", remote)
	}
	linuxBacked := p.Expect(nodeWin1, serviceTargets(peerSvcLinux)[0])
	if linuxBacked.Reachable || linuxBacked.Rule != "windows-host-to-service-ip" {
		t.Errorf("win-1 -> Linux-backed ClusterIP: %+v, want windows-host-to-service-ip", linuxBacked)
	}
	// Only the ClusterIP: a Windows node reaches pod IPs and other nodes' NodePorts.
	for _, tg := range []Target{podTargets(peerWinA)[0], podTargets(peerLinA)[0], outsideTarget()} {
		if e := p.Expect(nodeWin1, tg); !e.Reachable || e.Rule != "" {
			t.Errorf("win-1 -> %s: %+v, want reachable", tg.ID(), e)
		}
	}
}

func TestExpectWindowsNodeNodePort(t *testing.T) {
	p := documented("v1.37.2", "flannel/vxlan")
	ts := serviceTargets(peerSvcLinux, win1, win2, linCP)
	self := p.Expect(nodeWin1, targetByID(t, ts, "svc-linux/nodeport@"+win1))
	if self.Reachable || self.Rule != "windows-host-local-nodeport" || self.Claim != "NET-27" || self.Doc != DocTroubleshooting {
		t.Errorf("win-1 -> NodePort via itself: %+v, want unreachable by windows-host-local-nodeport (NET-27)", self)
	}
	for _, via := range []string{win2, linCP} {
		if e := p.Expect(nodeWin1, targetByID(t, ts, "svc-linux/nodeport@"+via)); !e.Reachable {
			t.Errorf("win-1 -> NodePort via %s: %+v, want reachable", via, e)
		}
	}
	// A Linux node reaches a NodePort through its own address.
	if e := p.Expect(nodeLinCP, targetByID(t, ts, "svc-linux/nodeport@"+linCP)); !e.Reachable {
		t.Errorf("lin-cp -> NodePort via itself: %+v, want reachable", e)
	}
}

func TestExpectLinuxNodeReachesEverything(t *testing.T) {
	for _, prof := range []Profile{documented("v1.37.2", "flannel/vxlan"), documented("v1.13.5", "flannel/host-gw"), documented("", "")} {
		for _, src := range []Peer{nodeLinCP, nodeLinW} {
			for _, tg := range fullTargets() {
				if e := prof.Expect(src, tg); !e.Reachable || e != (Expectation{Reachable: true}) {
					t.Errorf("%s (%s %s) -> %s: %+v, want plainly reachable", src.Name, prof.ServerVersion, prof.CNI, tg.ID(), e)
				}
			}
		}
	}
}

func TestExpectWindowsPodOutboundNAT(t *testing.T) {
	ext := outsideTarget()
	cases := []struct {
		version, cni string
		reachable    bool
	}{
		{"v1.13.5", "flannel/host-gw", false},
		{"1.13.5", "flannel/host-gw", false},
		{"v1.10.0", "flannel/host-gw", false},
		{"v1.13", "flannel/host-gw", false},
		{"v1.14.0", "flannel/host-gw", true},
		{"v1.14.1", "flannel/host-gw", true},
		{"v1.37.2", "flannel/host-gw", true},
		{"v1.13.5", "flannel/vxlan", true},
		{"v1.13.5", "", true},
		{"v1.13.5", "calico", true},
		// An unknown version keeps the documented limitation.
		{"", "flannel/host-gw", false},
		{"not-a-version", "flannel/host-gw", false},
	}
	for _, c := range cases {
		e := documented(c.version, c.cni).Expect(peerWinA, ext)
		if e.Reachable != c.reachable {
			t.Errorf("windows pod -> outside on %q %q: %+v, want reachable=%v", c.version, c.cni, e, c.reachable)
		}
		if !c.reachable && (e.Rule != "windows-pod-outbound-nat-host-gw" || e.Claim != "NET-17" || e.Doc != DocFlannelHostGW) {
			t.Errorf("windows pod -> outside on %q %q: %+v, want the NET-17 host-gw rule", c.version, c.cni, e)
		}
	}
	// Only Windows pods, only to the outside.
	p := documented("v1.13.5", "flannel/host-gw")
	if e := p.Expect(peerLinA, ext); !e.Reachable {
		t.Errorf("linux pod -> outside on host-gw 1.13: %+v, want reachable", e)
	}
	if e := p.Expect(nodeWin1, ext); !e.Reachable {
		t.Errorf("windows node -> outside on host-gw 1.13: %+v, want reachable", e)
	}
	for _, tg := range fullTargets() {
		if tg.Kind == External {
			continue
		}
		if e := p.Expect(peerWinA, tg); !e.Reachable {
			t.Errorf("windows pod -> %s on host-gw 1.13: %+v, want reachable", tg.ID(), e)
		}
	}
}

// Which clusters a rule covers is its claim's catalogue entry's to say
// (through the ledger): NET-17 holds with flannel host-gw before 1.14 only;
// NET-21 on every version and CNI.
func TestProfileCoversAsTheCatalogueSays(t *testing.T) {
	always := func(Peer, Target) bool { return true }
	cases := []struct {
		name    string
		profile Profile
		claim   string
		want    bool
	}{
		{"NET-17, host-gw 1.13", Profile{ServerVersion: "v1.13.5", CNI: "flannel/host-gw"}, "NET-17", true},
		{"NET-17, host-gw 1.13 with build metadata", Profile{ServerVersion: "v1.13.5+k3s1", CNI: "flannel/host-gw"}, "NET-17", true},
		{"NET-17, host-gw 1.14 (exclusive)", Profile{ServerVersion: "v1.14.0", CNI: "flannel/host-gw"}, "NET-17", false},
		{"NET-17, vxlan 1.13", Profile{ServerVersion: "v1.13.5", CNI: "flannel/vxlan"}, "NET-17", false},
		{"NET-17, unknown CNI", Profile{ServerVersion: "main", CNI: "calico"}, "NET-17", false},
		{"NET-17, host-gw, unparseable version", Profile{ServerVersion: "main", CNI: "flannel/host-gw"}, "NET-17", true},
		{"NET-21, any version", Profile{ServerVersion: "v1.37.2", CNI: "flannel/vxlan"}, "NET-21", true},
		{"NET-27, no version", Profile{}, "NET-27", true},
		{"not in the catalogue: kept", Profile{ServerVersion: "v1.2.3"}, "XYZ-01", true},
	}
	for _, c := range cases {
		rule := Rule{ID: "r", Claim: c.claim, Match: always}
		if got := c.profile.covers(rule); got != c.want {
			t.Errorf("%s: covers = %v, want %v", c.name, got, c.want)
		}
		p := c.profile
		p.Rules = []Rule{rule}
		if e := p.Expect(peerLinA, outsideTarget()); e.Reachable == c.want {
			t.Errorf("%s: Expect %+v, want reachable=%v", c.name, e, !c.want)
		}
	}
}

func TestExpectFirstMatchingCoveredRuleWins(t *testing.T) {
	yes := func(Peer, Target) bool { return true }
	no := func(Peer, Target) bool { return false }
	p := Profile{ServerVersion: "v1.30.0", CNI: "x", Rules: []Rule{
		{ID: "no-match", Claim: "C0", Match: no},
		{ID: "not-covered", Claim: "NET-17", Match: yes}, // flannel host-gw only
		{ID: "first", Claim: "C2", Reason: "because", Doc: "doc", Match: yes},
		{ID: "second", Claim: "C3", Match: yes},
	}}
	want := Expectation{Reachable: false, Rule: "first", Claim: "C2", Reason: "because", Doc: "doc"}
	if got := p.Expect(peerLinA, outsideTarget()); got != want {
		t.Errorf("Expect = %+v, want %+v", got, want)
	}
	if got := (Profile{}).Expect(nodeWin1, serviceTargets(peerSvcWindows)[0]); got != (Expectation{Reachable: true}) {
		t.Errorf("the zero profile expects %+v, want reachable", got)
	}
}

func TestDocumentedLimitsAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range DocumentedLimits {
		if r.ID == "" || r.Claim == "" || r.Reason == "" || r.Doc == "" || r.Match == nil {
			t.Errorf("rule %+v lacks an ID, claim, reason, document or match", r)
		}
		if seen[r.ID] {
			t.Errorf("rule ID %s twice", r.ID)
		}
		seen[r.ID] = true
	}
	// windows-host-to-local-service-ip must come before the general rule,
	// or the more precise one never applies.
	if DocumentedLimits[0].ID != "windows-host-to-local-service-ip" || DocumentedLimits[1].ID != "windows-host-to-service-ip" {
		t.Errorf("rule order %s, %s: the local-service rule must precede the general one", DocumentedLimits[0].ID, DocumentedLimits[1].ID)
	}
}

func TestExpectationString(t *testing.T) {
	if got := (Expectation{Reachable: true, Reason: "ignored"}).String(); got != "reachable" {
		t.Errorf("String = %q, want reachable", got)
	}
	e := Expectation{Reason: "no NAT", Doc: "the doc"}
	if got := e.String(); got != "unreachable (no NAT; the doc)" {
		t.Errorf("String = %q", got)
	}
}

func TestRuleBuildBounds(t *testing.T) {
	rule := Rule{ID: "r", SinceBuild: "10.0.17763", UntilBuild: "10.0.20348",
		Match: func(src Peer, t Target) bool { return src.Kind == Node }}
	p := Profile{ServerVersion: "v1.37.2", Rules: []Rule{rule}}
	for build, unreachable := range map[string]bool{
		"10.0.17763":      true,  // ltsc2019: inside [since, until)
		"10.0.17763.5458": true,  // a revision of it
		"10.0.20348":      false, // ltsc2022: the limitation was lifted
		"10.0.14393":      false, // before it applied
		"":                true,  // an unknown build keeps the limitation
	} {
		got := p.Expect(Peer{Kind: Node, Build: build}, Target{})
		if got.Reachable == unreachable {
			t.Errorf("build %q: reachable = %v, want %v", build, got.Reachable, !unreachable)
		}
	}
}

// The documented network limitations on every line the harness supports:
// a Windows node's host still cannot reach Service IPs (NET-21) nor a
// NodePort through its own address (NET-27), as the current documentation
// says; outbound NAT from Windows pods (NET-17) works with either flannel
// back end, lifted since 1.14.
func TestExpectOnEverySupportedLine(t *testing.T) {
	for _, l := range kubelines.Lines() {
		for _, cni := range []string{"flannel/vxlan", "flannel/host-gw"} {
			p := documented(l.Version, cni)
			if e := p.Expect(nodeWin1, serviceTargets(peerSvcWindows)[0]); e.Reachable || e.Claim != "NET-21" {
				t.Errorf("%s %s: win-1 -> its own Service's ClusterIP: %+v, want unreachable (NET-21)", l.Version, cni, e)
			}
			ts := serviceTargets(peerSvcLinux, win1, win2, linCP)
			if e := p.Expect(nodeWin1, targetByID(t, ts, "svc-linux/nodeport@"+win1)); e.Reachable || e.Claim != "NET-27" {
				t.Errorf("%s %s: win-1 -> NodePort via itself: %+v, want unreachable (NET-27)", l.Version, cni, e)
			}
			if e := p.Expect(peerWinA, outsideTarget()); !e.Reachable {
				t.Errorf("%s %s: windows pod -> outside: %+v, want reachable (NET-17 lifted in 1.14)", l.Version, cni, e)
			}
		}
	}
}
