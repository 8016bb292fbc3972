package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/framework/skips"
)

// spec builds the report of one It, labelled suite:networking by its container.
func spec(text string, state types.SpecState, msg string, leafLabels []string, entries ...types.ReportEntry) types.SpecReport {
	return types.SpecReport{
		ContainerHierarchyTexts:  []string{"[networking]", "pod to pod"},
		ContainerHierarchyLabels: [][]string{{"suite:networking"}, {}},
		LeafNodeType:             types.NodeTypeIt,
		LeafNodeText:             text,
		LeafNodeLabels:           leafLabels,
		State:                    state,
		Failure:                  types.Failure{Message: msg},
		RunTime:                  1500 * time.Millisecond,
		ReportEntries:            entries,
	}
}

func entry(name, value string) types.ReportEntry {
	return types.ReportEntry{Name: name, Value: types.WrapEntryValue(value), Visibility: types.ReportEntryVisibilityNever}
}

func skipEntry(key string) types.ReportEntry { return entry(skips.EntryName, key) }

func ev(level claims.Level) types.ReportEntry {
	data, _ := json.Marshal(evidence.Record{Level: level, Detail: "test"})
	return entry(evidence.EntryName, string(data))
}

func partial(level claims.Level, why string) types.ReportEntry {
	data, _ := json.Marshal(evidence.Record{Level: level, Partial: why})
	return entry(evidence.EntryName, string(data))
}

func ledgerEntry(e ledger.Entry) types.ReportEntry {
	e.Decide()
	data, _ := json.Marshal(e)
	return entry(ledger.EntryName, string(data))
}

// clusterEntry records the cluster's facts, and each node as Ready at the
// run's end as it was at its start.
func clusterEntry(nodes ...facts.Node) types.SpecReport {
	end := facts.Readiness{Nodes: []facts.NodeReadiness{}}
	for _, n := range nodes {
		end.Nodes = append(end.Nodes, facts.NodeReadiness{Name: n.Name, Ready: n.Ready})
	}
	return clusterEntryEnding(&end, nodes...)
}

// clusterEntryEnding records the cluster's facts and the readiness end
// (none when nil).
func clusterEntryEnding(end *facts.Readiness, nodes ...facts.Node) types.SpecReport {
	data, _ := json.Marshal(facts.Facts{ServerVersion: "v1.37.2", CNI: "flannel/vxlan", Nodes: nodes})
	sr := types.SpecReport{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStatePassed,
		ReportEntries: types.ReportEntries{entry(record.ClusterEntry, string(data))}}
	if end != nil {
		data, _ := json.Marshal(end)
		sr.ReportEntries = append(sr.ReportEntries, entry(record.EndEntry, string(data)))
	}
	return sr
}

// A node counts as one of the run's only when it was Ready at the run's
// start and at its end: a Windows node NotReady for the whole run, or that
// went NotReady, or whose end is unknown, is no Windows node of the run.
func TestOnlyNodesReadyAtStartAndEndCount(t *testing.T) {
	win := func(name string, ready bool) facts.Node {
		return facts.Node{Name: name, OS: "windows", Ready: ready, WindowsBuild: "10.0.20348"}
	}
	end := func(ready ...bool) *facts.Readiness {
		e := &facts.Readiness{}
		for i, r := range ready {
			e.Nodes = append(e.Nodes, facts.NodeReadiness{Name: fmt.Sprintf("win-%d", i+1), Ready: r})
		}
		return e
	}
	for _, c := range []struct {
		name  string
		start []bool
		end   *facts.Readiness
		want  int
	}{
		{"Ready at both", []bool{true, true}, end(true, true), 2},
		{"NotReady for the whole run", []bool{false, true}, end(false, true), 1},
		{"NotReady at the start only", []bool{false, true}, end(true, true), 1},
		{"gone NotReady by the end", []bool{true, true}, end(true, false), 1},
		{"gone from the cluster by the end", []bool{true, true}, end(true), 1},
		{"no readiness at the end", []bool{true, true}, nil, 0},
		{"the nodes unreadable at the end", []bool{true, true}, &facts.Readiness{Nodes: []facts.NodeReadiness{{Name: "win-1", Ready: true}}, Error: "timeout"}, 0},
	} {
		var nodes []facts.Node
		for i, r := range c.start {
			nodes = append(nodes, win(fmt.Sprintf("win-%d", i+1), r))
		}
		s := Summarize(types.Report{SuiteSucceeded: true, SpecReports: types.SpecReports{clusterEntryEnding(c.end, nodes...)}})
		if s.Cluster.WindowsNodes != c.want || len(s.Cluster.Uncounted) != len(c.start)-c.want {
			t.Errorf("%s: %d Windows node(s) counted, uncounted %q; want %d", c.name, s.Cluster.WindowsNodes, s.Cluster.Uncounted, c.want)
		}
	}
}

var linuxOnly = []facts.Node{{Name: "cp", OS: "linux", ControlPlane: true, Ready: true}, {Name: "w", OS: "linux", Ready: true}}

func claimOf(t *testing.T, s Summary, id string) Claim {
	t.Helper()
	for _, c := range s.Claims {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("summary has no claim %s", id)
	return Claim{}
}

// sampleReport exercises every outcome on a cluster without Windows nodes;
// the run selects everything but os:none (NET-04's spec).
func sampleReport() types.Report {
	return types.Report{
		SuiteDescription: "winconform",
		SuiteSucceeded:   false,
		SuiteConfig:      types.SuiteConfig{LabelFilter: "!os:none"},
		SpecReports: types.SpecReports{
			clusterEntry(linuxOnly...),
			spec("passes", types.SpecStatePassed, "", []string{"claim:NET-07", "os:linux"}, ev(claims.Linux)),
			spec("fails", types.SpecStateFailed, "expected 1\nto equal 2", []string{"claim:NET-02", "os:windows"}, ev(claims.WindowsNode)),
			spec("skips", types.SpecStateSkipped, "no Windows node in this cluster", []string{"claim:NET-03", "os:windows"}, skipEntry("no-windows-node")),
			spec("filtered", types.SpecStateSkipped, "", []string{"claim:NET-04", "os:none"}),
			// WEB-01: the Linux twin passes, the Windows entry skips: supported, not shown.
			spec("web windows", types.SpecStateSkipped, "no Windows node in this cluster", []string{"claim:WEB-01", "os:windows"}, skipEntry("no-windows-node")),
			spec("web linux twin", types.SpecStatePassed, "", []string{"claim:WEB-01", "os:linux", "twin"}, ev(claims.Linux)),
			// SCH-01 is shown by the scheduler on simulated nodes; SCH-05 is not.
			spec("sch-01", types.SpecStatePassed, "", []string{"claim:SCH-01", "os:windows"}, ev(claims.Scheduler)),
			spec("sch-05", types.SpecStatePassed, "", []string{"claim:SCH-05", "os:windows"}, ev(claims.Scheduler)),
			// LIM-01 is an API claim; LIM-09's API echo only supports it.
			spec("lim-01", types.SpecStatePassed, "", []string{"claim:LIM-01", "os:windows"}, ev(claims.API)),
			spec("lim-09 echo", types.SpecStatePassed, "", []string{"claim:LIM-09", "os:windows"}, ev(claims.API)),
			// A setup node failed: the claims behind it are blocked.
			{ContainerHierarchyTexts: []string{"matrix"}, LeafNodeType: types.NodeTypeIt, LeafNodeText: "net-05", LeafNodeLabels: []string{"claim:NET-05"},
				State: types.SpecStateFailed, Failure: types.Failure{Message: "deploying the peers failed", FailureNodeType: types.NodeTypeBeforeAll}},
			spec("net-06", types.SpecStateSkipped, "Spec skipped because a BeforeAll node failed", []string{"claim:NET-06"}),
			// CFG-03's documented limitation no longer holds on a real node,
			// where the server version was expected to keep it: drift.
			spec("cfg-03 windows", types.SpecStatePassed, "", []string{"claim:CFG-03", "os:windows"}, ev(claims.WindowsNode),
				ledgerEntry(ledger.Entry{Claim: "CFG-03", Expected: ledger.Limited, Observed: ledger.Works})),
			// CFG-04: only its Linux twin ran: a Linux node says nothing of a Windows limitation.
			spec("cfg-04 windows", types.SpecStateSkipped, "no Windows node in this cluster", []string{"claim:CFG-04", "os:windows"}, skipEntry("no-windows-node")),
			spec("cfg-04 linux twin", types.SpecStatePassed, "", []string{"claim:CFG-04", "os:linux", "twin"}, ev(claims.Linux)),
			// LIM-05 on a simulated node: inconclusive.
			spec("lim-05", types.SpecStateSkipped, "inconclusive: LIM-05: simulated", []string{"claim:LIM-05", "os:windows"}, ev(claims.Scheduler), skipEntry("inconclusive")),
			// NET-20: only the Linux part was probed.
			spec("net-20", types.SpecStatePassed, "", []string{"claim:NET-20", "os:linux", "os:windows"}, ev(claims.Linux), partial(claims.Linux, "no cell probed from Windows pods")),
			// NET-08 was interrupted while it ran.
			spec("net-08", types.SpecStateInterrupted, "interrupted by user", []string{"claim:NET-08", "os:linux"}),
			// A passing spec that recorded no evidence shows nothing.
			spec("no evidence", types.SpecStatePassed, "", []string{"claim:INF-01", "os:linux"}),
		},
	}
}

func TestSummarizeOutcomes(t *testing.T) {
	s := Summarize(sampleReport())
	if s.Format != Format || s.Suite != "winconform" || s.Succeeded || s.Interrupted {
		t.Errorf("format %q suite %q succeeded %v interrupted %v", s.Format, s.Suite, s.Succeeded, s.Interrupted)
	}
	if len(s.Claims) != len(claims.All()) || s.Total != len(claims.All()) {
		t.Fatalf("%d claims (total %d), want one per catalogue entry (%d)", len(s.Claims), s.Total, len(claims.All()))
	}
	for i, c := range claims.All() {
		if s.Claims[i].ID != c.ID || s.Claims[i].Kind != string(c.Kind) || s.Claims[i].Title != c.Title || s.Claims[i].Level != c.Level {
			t.Errorf("claims[%d] = %s, want catalogue order %s", i, s.Claims[i].ID, c.ID)
		}
	}
	cases := []struct {
		id, outcome, why string
	}{
		{"NET-07", Shown, ""},
		{"NET-02", Failed, "pod to pod fails: expected 1"},
		{"NET-03", Skipped, "no-windows-node"},
		{"NET-04", NotRun, ""},
		{"WEB-01", Supported, "linux twin; skipped: no-windows-node"},
		{"SCH-01", Shown, ""},
		{"SCH-05", Supported, "simulated nodes"},
		{"LIM-01", Shown, ""},
		{"LIM-09", Supported, "API only"},
		{"NET-05", Blocked, "deploying the peers failed"},
		{"NET-06", Blocked, "a BeforeAll node failed"},
		{"CFG-03", Drift, "the documented limitation no longer holds"},
		{"CFG-04", Skipped, "no-windows-node"},
		{"LIM-05", Inconclusive, "LIM-05: simulated"},
		{"NET-20", Supported, "partial: no cell probed from Windows pods"},
		{"NET-08", Interrupted, "net-08 (interrupted)"},
		{"INF-01", Skipped, "only machinery checks ran"}, // passed without evidence: no support either
		{"VOL-01", NotCovered, ""},
	}
	for _, c := range cases {
		got := claimOf(t, s, c.id)
		if got.Outcome != c.outcome || !strings.Contains(got.Why, c.why) {
			t.Errorf("%s: outcome %q why %q, want %q with %q", c.id, got.Outcome, got.Why, c.outcome, c.why)
		}
	}
	if got := claimOf(t, s, "WEB-01"); !reflect.DeepEqual(got.Evidence, map[claims.Level]int{claims.Linux: 1}) ||
		!reflect.DeepEqual(got.Specs, map[string]int{SpecPassed: 1, SpecSkipped: 1}) {
		t.Errorf("WEB-01 evidence %v specs %v", got.Evidence, got.Specs)
	}
	if want := []string{"[networking] pod to pod no evidence"}; !reflect.DeepEqual(s.Unrecorded, want) {
		t.Errorf("Unrecorded = %v, want %v", s.Unrecorded, want)
	}
	if s.Shown != 3 || s.ShownOnWindows != 0 {
		t.Errorf("shown %d on Windows %d, want 3 and 0", s.Shown, s.ShownOnWindows)
	}
	if want := map[string]int{"linux twin": 1, "simulated nodes": 1, "API only": 1, "partial: no cell probed from Windows pods": 1}; !reflect.DeepEqual(s.SupportedBy, want) {
		t.Errorf("SupportedBy = %v, want %v", s.SupportedBy, want)
	}
	if want := map[string]int{"no-windows-node": 3, "inconclusive": 1}; !reflect.DeepEqual(s.SkipReasons, want) {
		t.Errorf("SkipReasons = %v, want %v (the filtered spec is not a skip)", s.SkipReasons, want)
	}
	for _, o := range Outcomes {
		if s.Outcomes[o] != s.Counts()[o] {
			t.Errorf("Outcomes[%s] = %d, Counts %d", o, s.Outcomes[o], s.Counts()[o])
		}
	}
}

// No claim about Windows is ever shown by anything but a Windows result,
// whatever else passed.
func TestNoWindowsClaimShownWithoutWindows(t *testing.T) {
	var specs types.SpecReports
	for _, c := range claims.All() {
		for _, l := range []claims.Level{claims.Linux, claims.API, claims.Scheduler} {
			specs = append(specs, spec(c.ID+" "+string(l), types.SpecStatePassed, "", []string{"claim:" + c.ID}, ev(l)))
		}
	}
	s := Summarize(types.Report{SuiteSucceeded: true, SpecReports: specs})
	for _, c := range s.Claims {
		if c.Outcome == Shown && c.Level.OnWindows() {
			t.Errorf("%s (level %s) shown by results off Windows: %+v", c.ID, c.Level, c)
		}
	}
	if s.Shown != 18 || s.ShownOnWindows != 0 {
		t.Errorf("shown %d (on Windows %d), want 18 and 0: the claims the catalogue lets a cluster without Windows show", s.Shown, s.ShownOnWindows)
	}
}

func TestShownOnWindows(t *testing.T) {
	r := types.Report{SuiteSucceeded: true, SpecReports: types.SpecReports{
		clusterEntry(facts.Node{Name: "win", OS: "windows", Ready: true, WindowsBuild: "10.0.20348"}),
		spec("web", types.SpecStatePassed, "", []string{"claim:WEB-01"}, ev(claims.WindowsNode)),
		spec("sch", types.SpecStatePassed, "", []string{"claim:SCH-01"}, ev(claims.WindowsNode)),
		spec("inf", types.SpecStatePassed, "", []string{"claim:INF-03"}, ev(claims.WindowsNode)),
	}}
	s := Summarize(r)
	if s.Shown != 2 || s.ShownOnWindows != 2 {
		t.Errorf("shown %d on Windows %d, want 2 and 2", s.Shown, s.ShownOnWindows)
	}
	if got := claimOf(t, s, "INF-03"); got.Outcome != Supported || got.Why != "Windows node, not the machine" {
		t.Errorf("INF-03 = %+v, want supported by a Windows node only", got)
	}
	if !strings.Contains(s.Status, "1 Windows node(s), builds 10.0.20348") {
		t.Errorf("status %q", s.Status)
	}
}

func TestStatusSaysWhenTheClusterHadNoWindowsNode(t *testing.T) {
	s := Summarize(sampleReport())
	if want := "failed; the cluster had no Windows node: nothing was shown on Windows"; s.Status != want {
		t.Errorf("status %q, want %q", s.Status, want)
	}
	r := sampleReport()
	r.SpecReports[0] = clusterEntry(append(linuxOnly, facts.Node{Name: "kwok-1", OS: "windows", Simulated: true, Ready: true})...)
	r.SuiteSucceeded = true
	if got := Summarize(r).Status; got != "succeeded; the cluster had no real Windows node (1 simulated): nothing was shown on Windows" {
		t.Errorf("status with a simulated node %q", got)
	}
	r.SpecReports = r.SpecReports[1:]
	if got := Summarize(r).Status; !strings.Contains(got, "the cluster's nodes are unknown") {
		t.Errorf("status without cluster facts %q", got)
	}
}

// The report says what the Linux kubelets ran on: on a cgroup v1 host a
// kubelet from 1.35 runs only with failCgroupV1: false, which the facts read
// from each kubelet.
func TestClusterViewCgroup(t *testing.T) {
	off := false
	r := sampleReport()
	r.SpecReports[0] = clusterEntry(
		facts.Node{Name: "cp", OS: "linux", ControlPlane: true, Ready: true, CgroupVersion: 1, FailCgroupV1: &off},
		facts.Node{Name: "w", OS: "linux", Ready: true, CgroupVersion: 1, FailCgroupV1: &off})
	s := Summarize(r)
	if got := s.Cluster.Cgroup; got != "cgroup v1, failCgroupV1 off" {
		t.Errorf("cgroup v1: %q", got)
	}
	if md := s.Markdown(); !strings.Contains(md, "Cluster: Kubernetes "+s.Cluster.ServerVersion+"; Linux kubelets on cgroup v1, failCgroupV1 off.\n") {
		t.Errorf("summary.md does not say the cgroup:\n%s", md)
	}
	if md := Summarize(sampleReport()).Markdown(); strings.Contains(md, "Linux kubelets on") {
		t.Error("summary.md says a cgroup the facts do not know")
	}
	r.SpecReports[0] = clusterEntry(facts.Node{Name: "cp", OS: "linux", Ready: true, CgroupVersion: 2})
	if got := Summarize(r).Cluster.Cgroup; got != "cgroup v2" {
		t.Errorf("cgroup v2: %q", got)
	}
	if got := Summarize(sampleReport()).Cluster.Cgroup; got != "" {
		t.Errorf("facts without kubelets' answers: %q", got)
	}
}

// A run on a pre-release of Kubernetes is marked as one: in the facts it
// recorded, or read from the server's version in a record made before the
// facts carried the mark; a release is not.
func TestClusterViewPreRelease(t *testing.T) {
	for _, tc := range []struct {
		facts facts.Facts
		want  bool
	}{
		{facts.Facts{ServerVersion: "v1.38.0-beta.0", PreRelease: true}, true},
		{facts.Facts{ServerVersion: "v1.38.0-beta.0"}, true},
		{facts.Facts{ServerVersion: "v1.37.2"}, false},
	} {
		r := sampleReport()
		f := tc.facts
		f.CNI = "flannel/vxlan"
		f.Nodes = []facts.Node{{Name: "cp", OS: "linux", ControlPlane: true, Ready: true}}
		data, _ := json.Marshal(f)
		r.SpecReports[0].ReportEntries = types.ReportEntries{entry(record.ClusterEntry, string(data))}
		s := Summarize(r)
		if s.Cluster.PreRelease != tc.want {
			t.Errorf("%s: preRelease %v, want %v", f.ServerVersion, s.Cluster.PreRelease, tc.want)
		}
		line := "Cluster: Kubernetes " + f.ServerVersion + " (a pre-release).\n"
		if got := strings.Contains(s.Markdown(), line); got != tc.want {
			t.Errorf("%s: summary.md says %q: %v, want %v\n%s", f.ServerVersion, line, got, tc.want, s.Markdown())
		}
		js, _ := json.Marshal(s)
		if got := strings.Contains(string(js), `"preRelease":true`); got != tc.want {
			t.Errorf("%s: summary.json marks a pre-release: %v, want %v", f.ServerVersion, got, tc.want)
		}
	}
}

func TestHeadline(t *testing.T) {
	s := Summarize(sampleReport())
	// Every claim the sample does not cover counts as not covered: 17 are.
	n := len(claims.All())
	want := fmt.Sprintf("Shown: 3 of %d (on Windows: 0). Failed: 1. Supported only: 4 (API only 1, linux twin 1, partial: no cell probed from Windows pods 1, simulated nodes 1). "+
		"Skipped: 3. Inconclusive: 1. Drift: 1. Blocked: 2. Interrupted: 1. Not run: 1. Not covered: %d.", n, n-17)
	if s.Headline != want {
		t.Errorf("headline\n%s\nwant\n%s", s.Headline, want)
	}
}

func TestBeforeSuiteFailureBlocksEverySelectedSpec(t *testing.T) {
	r := types.Report{SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "no cluster\nmore"}},
		spec("a", types.SpecStateSkipped, "", []string{"claim:NET-07"}),
		spec("b", types.SpecStateSkipped, "", []string{"claim:LIM-07"}),
	}}
	s := Summarize(r)
	for _, id := range []string{"NET-07", "LIM-07"} {
		if got := claimOf(t, s, id); got.Outcome != Blocked || !strings.Contains(got.Why, "SynchronizedBeforeSuite failed: no cluster") {
			t.Errorf("%s = %+v, want blocked by the SynchronizedBeforeSuite", id, got)
		}
	}
}

func TestInterruptedRunListsSpecsThatNeverRan(t *testing.T) {
	r := types.Report{
		SpecialSuiteFailureReasons: []string{"Interrupted by User"},
		SuiteConfig:                types.SuiteConfig{LabelFilter: "suite:networking"},
		SpecReports: types.SpecReports{
			spec("ran", types.SpecStatePassed, "", []string{"claim:NET-07"}, ev(claims.Linux)),
			spec("cut", types.SpecStateInterrupted, "interrupted", []string{"claim:NET-08"}),
			spec("never", types.SpecStateSkipped, "", []string{"claim:NET-15"}),
			{ContainerHierarchyTexts: []string{"other"}, ContainerHierarchyLabels: [][]string{{"suite:other"}}, LeafNodeType: types.NodeTypeIt,
				LeafNodeText: "not selected", LeafNodeLabels: []string{"claim:LIM-07"}, State: types.SpecStateSkipped},
		},
	}
	s := Summarize(r)
	if !s.Interrupted || !strings.HasPrefix(s.Status, "was interrupted (partial report)") {
		t.Errorf("interrupted %v status %q", s.Interrupted, s.Status)
	}
	if want := []string{"[networking] pod to pod never"}; !reflect.DeepEqual(s.NeverRan, want) {
		t.Errorf("NeverRan = %v, want %v", s.NeverRan, want)
	}
	for id, want := range map[string]string{"NET-07": Shown, "NET-08": Interrupted, "NET-15": Interrupted, "LIM-07": NotRun} {
		if got := claimOf(t, s, id).Outcome; got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
}

func TestFailedWinsInAnyOrder(t *testing.T) {
	for _, order := range [][2]types.SpecState{{types.SpecStatePassed, types.SpecStateFailed}, {types.SpecStateFailed, types.SpecStatePassed}} {
		r := types.Report{SpecReports: types.SpecReports{
			spec("one", order[0], "boom", []string{"claim:NET-07"}, ev(claims.Linux)),
			spec("two", order[1], "boom", []string{"claim:NET-07"}, ev(claims.Linux)),
		}}
		if got := claimOf(t, Summarize(r), "NET-07").Outcome; got != Failed {
			t.Errorf("order %v: %s, want failed", order, got)
		}
	}
}

func TestMarkdownOpensWithStatusAndHeadline(t *testing.T) {
	s := Summarize(sampleReport())
	md := s.Markdown()
	lines := strings.Split(md, "\n")
	if lines[0] != "# winconform run: "+s.Status || lines[2] != "**"+s.Headline+"**" {
		t.Errorf("first lines:\n%s\n%s\n%s", lines[0], lines[1], lines[2])
	}
	for _, want := range []string{
		"| WEB-01 | feature | windows-node | not shown | supported | linux twin; skipped: no-windows-node | linux 1 | passed 1, skipped 1 |",
		"| NET-07 | path | linux | linux | shown |  | linux 1 | passed 1 |",
		"## Passing specs that recorded no evidence",
		"- **[networking] pod to pod fails** (failed, ",
		"| no-windows-node | 3 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

// summary.json is an output: the summary as JSON, for other tools; the
// harness itself reads the run's record (rundir), never this file.
func TestWriteSummary(t *testing.T) {
	dir := t.TempDir()
	s := Summarize(sampleReport())
	if err := s.Write(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	var got Summary
	if err != nil || json.Unmarshal(data, &got) != nil || got.Format != Format {
		t.Fatalf("summary.json: %v %.80q", err, data)
	}
	if got.Headline != s.Headline || len(got.Claims) != len(s.Claims) || claimOf(t, got, "WEB-01").Evidence[claims.Linux] != 1 {
		t.Errorf("read back %+v", got.Claims[0])
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || !strings.HasPrefix(string(md), "# winconform run: ") {
		t.Errorf("summary.md: %v %.40q", err, md)
	}
}
