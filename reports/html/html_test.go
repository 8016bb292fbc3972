package html_test

import (
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xhtml "golang.org/x/net/html"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/winconform/winconform/framework/artifacts"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/diff"
	"github.com/winconform/winconform/reports/gate"
	"github.com/winconform/winconform/reports/html"
	"github.com/winconform/winconform/reports/policy"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
)

// Texts that would break a page that did not escape them.
const (
	nastyName    = `networking <script>alert("name")</script> & 'quoted' "NET-07"`
	nastyMessage = `expected <b>1</b> & got "2" </pre><img src=x onerror=alert(1)>`
	nastyRepro   = `kubectl exec a -- sh -c "echo <x> && curl 'http://example.invalid/'"`
	plainName    = "workloads WEB-02 logs of a Windows pod"
)

// reportDir writes a report directory with a failure of each kind, a
// matrix, a ledger, a gate decision and a diff; artifacts exist for
// nastyName (by its slug) and the blocked spec (named in the summary).
func reportDir(t *testing.T) string {
	t.Helper()
	r := reporttest.Linux()
	r.Set("NET-07", reporttest.Spec{Name: nastyName, State: types.SpecStateFailed, Message: nastyMessage, Evidence: []reporttest.Ev{reporttest.OnLinux()}})
	r.Set("WEB-02", reporttest.Spec{Name: plainName, State: types.SpecStateFailed, FailedIn: types.NodeTypeBeforeAll, Message: "BeforeAll failed", Artifacts: "artifacts/named-by-the-summary"})
	r.Set("SCH-01", reporttest.Spec{Name: "scheduling SCH-01 interrupted", State: types.SpecStateInterrupted, Artifacts: "artifacts/never-written"})
	r.One("LIM-07").Ledger[0].Limitation, r.One("LIM-07").Ledger[0].Observed = "legacy <label>", ledger.Works
	cell := reporttest.Cell("linux-a", "linux-b/pod-ip", netmatrix.Regression, netmatrix.Blocked, "NET-07")
	cell.Repro = nastyRepro
	documented := reporttest.Cell("linux-a", "svc/cluster-ip", netmatrix.OK, netmatrix.Blocked)
	documented.Expect = netmatrix.Expectation{Reason: "a <documented> limitation", Doc: "seed 001"}
	r.Matrix = &netmatrix.Report{ServerVersion: "v1.37.2", CNI: "flannel/vxlan",
		Sources: []netmatrix.Peer{{Name: "linux-a", Kind: netmatrix.Pod, OS: "linux", Node: "w1"}, {Name: "outside", Kind: netmatrix.External}},
		Targets: []netmatrix.Target{{Peer: netmatrix.Peer{Name: "linux-b", Kind: netmatrix.Pod}, Mode: netmatrix.PodIP, URL: "http://10.0.0.2:8080/json"},
			{Peer: netmatrix.Peer{Name: "svc", Kind: netmatrix.Service}, Mode: netmatrix.ClusterIP, URL: "http://10.96.0.9/json"}},
		Cells: []*netmatrix.Cell{cell, documented, reporttest.Cell("outside", "svc/cluster-ip", netmatrix.Flaky, netmatrix.Reachable)},
	}
	dir := r.Write(t)
	for _, d := range []string{filepath.Join(artifacts.Dir, artifacts.Slug(synthetic(nastyName))), "artifacts/named-by-the-summary", "artifacts/nodes"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Parse("policies/windows-node-build.yaml", []byte("name: windows-node-build\nrequired:\n- labels: [os:windows]\n  level: windows-node\n"))
	if err != nil {
		t.Fatal(err)
	}
	baseRun, err := rundir.Load(reporttest.Linux().AsBaseline().Write(t))
	if err != nil {
		t.Fatal(err)
	}
	res, err := gate.Decide(gate.Input{Policy: p, PolicyFile: "policies/windows-node-build.yaml", Run: run, Baseline: baseRun, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := diff.Compare(baseRun, run).Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := html.WriteHTML(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// synthetic is a spec's full name in a reporttest run.
func synthetic(name string) string { return "[synthetic] " + name }

func parse(t *testing.T, dir string) *xhtml.Node {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, html.File))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := xhtml.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func walk(n *xhtml.Node, f func(*xhtml.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *xhtml.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func text(n *xhtml.Node) string {
	var b strings.Builder
	walk(n, func(c *xhtml.Node) {
		if c.Type == xhtml.TextNode {
			b.WriteString(c.Data)
		}
	})
	return b.String()
}

func TestSelfContainedAndEscaped(t *testing.T) {
	doc := parse(t, reportDir(t))
	var scripts, styles int
	var titles []string
	walk(doc, func(n *xhtml.Node) {
		if n.Type != xhtml.ElementNode {
			return
		}
		switch n.Data {
		case "script":
			scripts++
			if _, ok := attr(n, "src"); ok {
				t.Error("a script loads a file")
			}
		case "style":
			styles++
			if css := text(n); strings.Contains(css, "url(") || strings.Contains(css, "@import") {
				t.Error("the style sheet loads something")
			}
		case "img", "link", "iframe", "object", "embed":
			t.Errorf("a <%s> element: the page must load nothing (injected markup?)", n.Data)
		case "b":
			if text(n) == "1" {
				t.Error("a message's <b> became markup")
			}
		}
		for _, a := range n.Attr {
			if a.Key == "src" || (a.Key == "href" && (strings.Contains(a.Val, "://") || strings.HasPrefix(a.Val, "//"))) {
				t.Errorf("<%s %s=%q>: an external reference", n.Data, a.Key, a.Val)
			}
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("<%s %s>: an event handler attribute", n.Data, a.Key)
			}
		}
		if v, ok := attr(n, "title"); ok && n.Data == "td" {
			titles = append(titles, v)
		}
	})
	if scripts != 1 || styles != 1 {
		t.Errorf("%d scripts and %d style sheets, want the one inline each", scripts, styles)
	}
	all := text(doc)
	for _, s := range []string{nastyName, nastyMessage, "legacy <label>"} {
		if !strings.Contains(all, s) {
			t.Errorf("the page does not show %q as text", s)
		}
	}
	found, documented := false, false
	for _, ti := range titles {
		if strings.Contains(ti, "expected: unreachable (a <documented> limitation; seed 001)") {
			documented = true
		}
		if strings.Contains(ti, "reproduce: "+nastyRepro) && strings.Contains(ti, "expected: reachable") && strings.Contains(ti, "observed: blocked") {
			found = true
		}
	}
	if !documented {
		t.Errorf("no matrix cell's title carries its documented limitation: %q", titles)
	}
	if !found {
		t.Errorf("no matrix cell's title carries its expectation, observation and command: %q", titles)
	}
}

func TestOrderAndSections(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(reportDir(t), html.File))
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	last := -1
	// The gate blocked: its verdict leads, the suites' status follows.
	for _, marker := range []string{"<h1>Release gate: BLOCKED (windows-node-build)", `id="verdict"`, "run: failed", `class="headline"`, `id="claims"`, `id="claim-NET-07"`, `id="matrix"`, `id="ledger"`, `id="gate"`, `id="diff"`, `id="failures"`} {
		i := strings.Index(page, marker)
		if i < 0 {
			t.Errorf("the page lacks %s", marker)
			continue
		}
		if i < last {
			t.Errorf("%s comes too early", marker)
		}
		last = i
	}
	// Under "shown by", what the run observed: a Linux twin shows nothing of
	// WEB-01 (it needs windows-node); NET-08 was shown on Linux.
	for id, want := range map[string]string{"WEB-01": "<td>windows-node</td><td>not shown</td>", "NET-08": "<td>linux</td><td>linux</td>", "SCH-04": "<td>scheduler</td><td>scheduler</td>"} {
		row := page[strings.Index(page, `id="claim-`+id+`"`):]
		row = row[:strings.Index(row, "</tr>")]
		if !strings.Contains(row, want) {
			t.Errorf("%s's row does not say %s: %s", id, want, row)
		}
	}
	for _, w := range []string{"BLOCKED", "no Windows node: WEB-01 only supported (linux twin)", "Newly failing: <b>NET-07, WEB-02</b>", "k-regression", "k-flaky", "exp-blocked"} {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
}

func TestArtifactLinks(t *testing.T) {
	doc := parse(t, reportDir(t))
	var links []string
	walk(doc, func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode && n.Data == "a" {
			if h, _ := attr(n, "href"); !strings.HasPrefix(h, "#") {
				links = append(links, h)
			}
		}
	})
	want := []string{"artifacts/nodes/", artifacts.Dir + "/" + artifacts.Slug(synthetic(nastyName)) + "/", "artifacts/named-by-the-summary/"}
	if strings.Join(links, " ") != strings.Join(want, " ") {
		t.Errorf("links %q, want %q (the interrupted spec's artifacts do not exist)", links, want)
	}
}

func TestBadReportDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := html.WriteHTML(dir); err == nil || !strings.Contains(err.Error(), "ginkgo/report.json") {
		t.Errorf("an empty directory: %v", err)
	}
	dir = reporttest.Linux().Write(t)
	os.WriteFile(filepath.Join(dir, gate.JSONFile), []byte(`{"format": "winconform.gate/v1", "items": [`), 0o644)
	if err := html.WriteHTML(dir); err == nil || !strings.Contains(err.Error(), "gate.json") {
		t.Errorf("a half-written gate.json: %v", err)
	}
}

func TestMinimalRun(t *testing.T) {
	// A run that probed no matrix, checked no limitation, and was not gated.
	r := reporttest.Linux()
	for i := range r.Specs {
		r.Specs[i].Ledger = nil
	}
	dir := r.Write(t)
	if err := html.WriteHTML(dir); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, html.File))
	if strings.Contains(string(data), `id="matrix"`) || strings.Contains(string(data), `id="gate"`) || !strings.Contains(string(data), "No limitation was checked") {
		t.Error("sections without data are shown")
	}
}

// TestScreenshot renders the page in headless Chromium. It runs where
// Chromium is on PATH, and fails in CI (CI=true) where it is not: .ci/run installs it.
func TestScreenshot(t *testing.T) {
	browser, err := html.FindBrowser()
	if errors.Is(err, html.ErrNoBrowser) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v: .ci/run installs chromium", err)
		}
		t.Skip(err)
	}
	dir := reportDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := html.Screenshot(ctx, dir, browser, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, html.ScreenshotFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// The whole page: 1400 wide, as tall as the page (its 91 claims, the
	// matrix, the ledger, the gate, the diff and the failures run far past
	// one screen), not a fixed viewport that cuts them off.
	b := img.Bounds()
	if b.Dx() != html.ScreenshotWidth || b.Dy() <= 4000 {
		t.Errorf("screenshot %dx%d: want %d wide and the whole page (taller than 4000), not one screen of it", b.Dx(), b.Dy(), html.ScreenshotWidth)
	}
	// The page's foot is in it: its last text line is near the bottom.
	inked := false
	for y := b.Dy() - 200; y < b.Dy() && !inked; y++ {
		for x := 0; x < b.Dx(); x += 3 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r>>8 < 160 && g>>8 < 160 && bl>>8 < 160 {
				inked = true
				break
			}
		}
	}
	if !inked {
		t.Error("the bottom of the screenshot is blank: the page's end is not in it")
	}
	// A page that rendered has colours: the status bar, the badges, text.
	colours := map[uint32]bool{}
	for y := 0; y < img.Bounds().Dy(); y += 7 {
		for x := 0; x < img.Bounds().Dx(); x += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|b>>8] = true
		}
	}
	if len(colours) < 20 {
		t.Errorf("the screenshot has %d colours: a blank page?", len(colours))
	}
	if out := os.Getenv("WINCONFORM_SCREENSHOT_OUT"); out != "" {
		data, _ := os.ReadFile(filepath.Join(dir, html.ScreenshotFile))
		os.WriteFile(out, data, 0o644)
	}
}

// The cluster line says what the Linux kubelets ran on (the summary's
// cgroup, from the cluster's facts).
func TestClusterLineSaysTheCgroup(t *testing.T) {
	r := reporttest.Linux()
	r.Facts.ServerVersion = "v1.35.4"
	off := false
	for i := range r.Facts.Nodes {
		r.Facts.Nodes[i].CgroupVersion, r.Facts.Nodes[i].FailCgroupV1 = 1, &off
	}
	dir := r.Write(t)
	if err := html.WriteHTML(dir); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, html.File))
	if want := "Cluster: Kubernetes v1.35.4, CNI flannel/vxlan, 2 Linux node(s), 0 Windows node(s); Linux kubelets on cgroup v1, failCgroupV1 off."; !strings.Contains(string(data), want) {
		t.Errorf("report.html lacks %q", want)
	}
	dir = reporttest.Linux().Write(t)
	html.WriteHTML(dir)
	data, _ = os.ReadFile(filepath.Join(dir, html.File))
	if strings.Contains(string(data), "Linux kubelets on") {
		t.Error("a cluster whose kubelets said nothing of cgroups has a cgroup in its report")
	}
}

// A gate.json (or diff.json) of another run, left in a reused report
// directory, is not shown beside this run's results: the page says it is
// another run's and how to gate this one.
func TestGateOfAnotherRunIsNotShown(t *testing.T) {
	p, err := policy.Parse("policies/linux-only.yaml", []byte("name: linux-only\nrequired:\n- claims: [NET-08]\n"))
	if err != nil {
		t.Fatal(err)
	}
	earlier := reporttest.Linux().Write(t)
	run, err := rundir.Load(earlier)
	if err != nil {
		t.Fatal(err)
	}
	res, err := gate.Decide(gate.Input{Policy: p, PolicyFile: "policies/linux-only.yaml", Run: run, Now: time.Now()})
	if err != nil || res.Blocked() {
		t.Fatalf("the earlier run's gate: %v %v", err, res.Reasons)
	}
	// This run: NET-08 failed; the directory still holds the earlier run's SHIP.
	now := reporttest.Linux()
	now.Fail("NET-08", "dns")
	dir := now.Write(t)
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := html.WriteHTML(dir); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, html.File))
	page := string(data)
	if strings.Contains(page, `id="verdict"`) || strings.Contains(page, "SHIP") || strings.Contains(page, `id="gate"`) {
		t.Error("report.html shows the gate of another run beside this run's results")
	}
	if !strings.Contains(page, "gate.json is not shown: it states the decision on run "+run.Summary.RunID) {
		t.Error("report.html does not say that gate.json is another run's")
	}
}

// report renders no verdict it did not get from the gate's evaluation of
// the same record: a gate.json written by hand, or edited, is not shown
// however well it names the run, its record's digest included; the
// gate's own, decided on this record, is (made again from its inputs).
func TestOnlyAGateThatFollowsFromTheRecordIsShown(t *testing.T) {
	p, err := policy.Parse("p.yaml", []byte("name: p\nrequired:\n- claims: [NET-08]\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := reporttest.Linux()
	r.Fail("NET-08", "dns")
	dir := r.Write(t)
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	blocked, err := gate.Decide(gate.Input{Policy: p, PolicyFile: "p.yaml", Run: run, Now: time.Now()})
	if err != nil || !blocked.Blocked() {
		t.Fatalf("the gate: %v %v", err, blocked.Decision)
	}
	render := func(g gate.Result) string {
		t.Helper()
		if err := g.Write(dir); err != nil {
			t.Fatal(err)
		}
		page, err := html.Render(dir)
		if err != nil {
			t.Fatal(err)
		}
		return string(page)
	}
	if page := render(blocked); !strings.Contains(page, `id="verdict"`) || !strings.Contains(page, "BLOCKED") {
		t.Error("the gate's own decision on this record is not shown")
	}
	shipped := blocked
	shipped.Decision, shipped.Reasons, shipped.Groups = gate.Ship, []string{}, []gate.Group{}
	edited := blocked
	edited.Items = append([]gate.Item{}, blocked.Items...)
	for i := range edited.Items {
		edited.Items[i].Decision = gate.Pass
	}
	edited.Decision, edited.Reasons = gate.Ship, []string{}
	lenient := blocked
	lenient.Inputs.Policy.OtherFailures = "report"
	lenient.Decision = gate.Ship
	unbound := blocked
	unbound.Inputs.Record = ""
	for name, g := range map[string]gate.Result{
		"SHIP written over a blocked decision":     shipped,
		"every item edited to pass":                edited,
		"another policy claimed than decided with": lenient,
		"no record named":                          unbound,
	} {
		page := render(g)
		if strings.Contains(page, `id="verdict"`) || strings.Contains(page, "SHIP") {
			t.Errorf("%s: report.html shows the verdict", name)
		}
		if !strings.Contains(page, "gate.json is not shown") {
			t.Errorf("%s: report.html does not say why gate.json is not shown", name)
		}
	}
}

// Above a blocked gate, the page never says the run succeeded: the
// verdict comes first, the suites' status after it.
func TestBlockedGateComesBeforeSucceeded(t *testing.T) {
	dir := reporttest.Linux().Write(t)
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(run.Summary.Status, "succeeded") {
		t.Fatalf("status %q: the test wants a run that succeeded", run.Summary.Status)
	}
	p, err := policy.Parse("policies/windows-node-build.yaml", []byte("name: windows-node-build\nrequired:\n- labels: [os:windows]\n  level: windows-node\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := gate.Decide(gate.Input{Policy: p, PolicyFile: "policies/windows-node-build.yaml", Run: run, Now: time.Now()})
	if err != nil || !res.Blocked() {
		t.Fatalf("gate: %v, blocked %v", err, res.Blocked())
	}
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := html.WriteHTML(dir); err != nil {
		t.Fatal(err)
	}
	doc := parse(t, dir)
	page := text(doc)
	blocked, succeeded := strings.Index(page, "BLOCKED"), strings.Index(page, "succeeded")
	if blocked < 0 || succeeded < 0 || succeeded < blocked {
		t.Errorf("\"succeeded\" at %d, \"BLOCKED\" at %d: the page says the run succeeded above the blocked gate:\n%.400s", succeeded, blocked, page)
	}
}

// Writing report.html again (gate, diff, report) takes its screenshot again
// where there is one, so that report.png never shows an older page; where
// Chromium cannot be found, the stale screenshot is removed, and said.
func TestRewritingThePageRefreshesItsScreenshot(t *testing.T) {
	dir := reporttest.Linux().Write(t)
	stale := []byte("an older page's screenshot")
	if err := os.WriteFile(filepath.Join(dir, html.ScreenshotFile), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	_, noBrowser := html.FindBrowser()
	if noBrowser == nil {
		if err := html.WriteHTML(dir); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(dir, html.ScreenshotFile))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := png.Decode(f); err != nil {
			t.Errorf("report.png after the page was written again: %v (still the older one?)", err)
		}
		if err := os.WriteFile(filepath.Join(dir, html.ScreenshotFile), stale, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", t.TempDir()) // no Chromium
	err := html.WriteHTML(dir)
	if err == nil || !strings.Contains(err.Error(), "removed") {
		t.Errorf("WriteHTML without Chromium: %v, want an error saying the stale screenshot was removed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, html.ScreenshotFile)); err == nil {
		t.Error("a screenshot of the older page is left beside the new report.html")
	}
	if _, err := os.Stat(filepath.Join(dir, html.File)); err != nil {
		t.Errorf("report.html: %v", err)
	}
}

// Every view shows the checked model: a run whose Windows nodes were all
// simulated, its records saying windows-node on build 10.0.20348 for every
// claim, shows no claim on Windows in report.html, summary.md or the
// JUnit file, and each says the record breaks its contract (issue 37).
func TestViewsShowOnlyTheCheckedModel(t *testing.T) {
	r := reporttest.IdealHybrid()
	for i := range r.Facts.Nodes {
		r.Facts.Nodes[i].Simulated = r.Facts.Nodes[i].OS == "windows"
	}
	dir := r.Write(t)
	if err := html.WriteHTML(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{html.File, "summary.md", reports.JUnitFile} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		page := string(data)
		if strings.Contains(page, "windows-node on 10.0.20348") || strings.Contains(page, `name="shows" value="WEB-01"`) {
			t.Errorf("%s shows a claim on Windows from simulated nodes", f)
		}
		if !strings.Contains(page, "breaks its contract") {
			t.Errorf("%s does not say the record breaks its contract", f)
		}
	}
	data, _ := os.ReadFile(filepath.Join(dir, html.File))
	if !strings.Contains(string(data), `id="violations"`) || !strings.Contains(string(data), "<code>evidence</code>") {
		t.Error("report.html does not list the violations")
	}
}

// A gate.json written by hand, as the gate would have written it under a
// policy of the writer's choosing (it names this run and its record's
// digest, and its decision follows from the policy it carries), rendered
// "Release gate: SHIP" before statements: it is not shown without the
// gate's statement bound to this run. The same decision with the gate's
// statement of it is (the control: the page would show it).
func TestAHandWrittenGateJSONIsNoVerdict(t *testing.T) {
	dir := reporttest.Linux().Write(t)
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	lenient, err := policy.Parse("mine.yaml", []byte("name: mine\nrequired:\n- claims: [NET-08]\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := gate.Decide(gate.Input{Policy: lenient, PolicyFile: "mine.yaml", Run: run, Now: time.Now()})
	if err != nil || res.Blocked() {
		t.Fatalf("the hand-written decision: %v %v", err, res.Reasons)
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, gate.JSONFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	page, err := html.Render(dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "Release gate (mine): SHIP") || strings.Contains(string(page), `id="verdict"`) {
		t.Error("report.html renders a hand-written gate.json as a verdict")
	}
	if !strings.Contains(string(page), "gate.json is not shown: no statement of the gate ("+rundir.StatementFile+") binds it to this run") {
		t.Error("report.html does not say why gate.json is not shown")
	}

	if err := res.WriteStatement(dir, run, time.Now()); err != nil {
		t.Fatal(err)
	}
	if page, err = html.Render(dir); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "Release gate (mine): SHIP") {
		t.Error("the gate's statement bound to this run is not shown")
	}
}
