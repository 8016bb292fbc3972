package netmatrix

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/winconform/winconform/framework/probeclient"
	"github.com/winconform/winconform/internal/version"
)

// tableMatrix is the small cluster's 23 targets probed from a Linux pod and
// a Windows node on a current cluster, with a regression, a probe error, a
// drift and two limitations seen as documented.
func tableMatrix(t *testing.T) *Matrix {
	t.Helper()
	ts := fullTargets()
	u := func(id string) string { return targetByID(t, ts, id).URL }
	backend := answerFromBackend(ts)
	pod := &fakeSource{peer: peerLinA, probe: per(func(call int, url string) probeclient.Result {
		switch url {
		case u("windows-a/pod-dns"):
			return failResult("dns", "no such host")
		case u("windows-a/icmp"):
			return failResult("unsupported", "raw sockets need privileges")
		}
		return backend(call, url)
	})}
	node := &fakeSource{peer: nodeWin1, probe: per(func(call int, url string) probeclient.Result {
		switch url {
		case u("svc-windows/cluster-ip"), u("svc-linux/cluster-ip"), u("svc-windows/nodeport@win-1"):
			return failResult("timeout", "i/o timeout")
		}
		return backend(call, url)
	})}
	m := &Matrix{Sources: []Source{pod, node}, Targets: ts, Claims: ClaimsFor, Applies: Applicable, Workers: 2,
		Profile: documented("v1.37.2", "flannel/vxlan")}
	m.Run(context.Background(), nil)
	return m
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func TestSymbol(t *testing.T) {
	var nilCell *Cell
	cases := map[rune]*Cell{
		' ':           nilCell,
		SymReachable:  {Observed: Reachable},
		SymBlocked:    {Observed: Blocked},
		SymProbeError: {Observed: ProbeError},
		SymSkipped:    {Observed: NotProbed},
	}
	for want, c := range cases {
		if got := c.Symbol(); got != want {
			t.Errorf("Symbol of %v = %q, want %q", c, got, want)
		}
	}
	if got := (&Cell{}).Symbol(); got != SymSkipped {
		t.Errorf("Symbol of a zero cell = %q, want %q", got, SymSkipped)
	}
	// A wrong answer or an unclassified error is no blocked path; a flaky
	// cell shows as flaky whatever its last observation.
	for _, c := range []struct {
		cell *Cell
		want rune
	}{
		{&Cell{Observed: WrongAnswer, Verdict: Wrong}, SymWrong},
		{&Cell{Observed: Unclassified, Verdict: Wrong}, SymWrong},
		{&Cell{Observed: Reachable, Verdict: Flaky}, SymFlaky},
		{&Cell{Observed: Blocked, Verdict: Flaky}, SymFlaky},
	} {
		if got := c.cell.Symbol(); got != c.want {
			t.Errorf("Symbol of %+v = %q, want %q", c.cell, got, c.want)
		}
	}
}

func TestSourceLabel(t *testing.T) {
	cases := map[string]Peer{
		"linux-a (linux pod @lin-cp)": peerLinA,
		"win-1 (windows node)":        nodeWin1,
		"lin-cp (linux node)":         nodeLinCP,
		"outside-client (external)":   outsideCli,
	}
	for want, p := range cases {
		if got := sourceLabel(p); got != want {
			t.Errorf("sourceLabel(%s) = %q, want %q", p.Name, got, want)
		}
	}
	long := Peer{Name: strings.Repeat("p", 60), Kind: Pod, OS: "windows", Node: "n"}
	if got := sourceLabel(long); len(got) != nameWidth || got != long.Name[:nameWidth] {
		t.Errorf("sourceLabel of a long name = %q (%d), want its first %d characters", got, len(got), nameWidth)
	}
}

func TestHeaderAndRowsLineUp(t *testing.T) {
	m := tableMatrix(t)
	h := lines(m.header())
	ts := m.Targets
	if want := "network matrix: 2 sources x 23 targets  (. reachable, X blocked, ? wrong answer or unclassified error, ~ flaky (the two probes disagreed), ! probe error, - not probed; blank: not applicable)"; h[0] != want {
		t.Errorf("header line %q, want %q", h[0], want)
	}
	for i, tg := range ts {
		if want := fmt.Sprintf("  %3d %s", i+1, tg.ID()); h[1+i] != want {
			t.Errorf("legend line %d = %q, want %q", i+1, h[1+i], want)
		}
	}
	digits := h[1+len(ts):]
	if len(digits) != 2 {
		t.Fatalf("%d digit rows for 23 targets, want 2 (tens, ones):\n%s", len(digits), strings.Join(digits, "\n"))
	}
	pad := strings.Repeat(" ", nameWidth+1)
	if want := pad + "         11111111112222"; digits[0] != want {
		t.Errorf("tens row\n%q\nwant\n%q", digits[0], want)
	}
	if want := pad + "12345678901234567890123"; digits[1] != want {
		t.Errorf("ones row\n%q\nwant\n%q", digits[1], want)
	}

	// The rows: one character per target, under its number.
	for _, s := range m.Sources {
		row := strings.TrimSuffix(m.rowLine(s), "\n")
		if len(row) != nameWidth+1+len(ts) {
			t.Fatalf("row %q is %d long, want %d", row, len(row), nameWidth+1+len(ts))
		}
		if !strings.HasPrefix(row, fmt.Sprintf("%-*s ", nameWidth, sourceLabel(s.Peer()))) {
			t.Errorf("row %q does not start with the padded label", row)
		}
		for i, tg := range ts {
			col := nameWidth + 1 + i
			n := i + 1
			if digits[1][col] != byte('0'+n%10) || (n >= 10 && digits[0][col] != byte('0'+n/10)) || (n < 10 && digits[0][col] != ' ') {
				t.Errorf("target %d: digits %q%q at column %d", n, digits[0][col], digits[1][col], col)
			}
			var want byte = ' '
			if Applicable(s.Peer(), tg) {
				want = byte(cellOf(t, m, s.Peer().Name, tg.ID()).Symbol())
			}
			if row[col] != want {
				t.Errorf("%s -> %s (column %d): %q, want %q", s.Peer().Name, tg.ID(), col, row[col], want)
			}
		}
	}
	// The symbols, spelled out.
	pod := strings.TrimSuffix(m.rowLine(m.Sources[0]), "\n")[nameWidth+1:]
	// linux-a: itself blank; linux-b, windows-a (name blocked, ping probe
	// error), windows-b; both Services but not their NodePorts; outside.
	if want := "   ....X!......  ...  ."; pod != want {
		t.Errorf("linux-a's row %q, want %q", pod, want)
	}
	node := strings.TrimSuffix(m.rowLine(m.Sources[1]), "\n")[nameWidth+1:]
	// win-1: pod IPs only; ClusterIPs and svc-windows's NodePort through
	// itself blocked as documented; svc-linux's through itself reachable.
	if want := ".  .  .  .  X  ..X  .X."; node != want {
		t.Errorf("win-1's row %q, want %q", node, want)
	}
}

func TestHeaderColumnsForManyTargets(t *testing.T) {
	for _, n := range []int{1, 9, 10, 99, 100, 105} {
		var ts []Target
		for i := 0; i < n; i++ {
			p := Peer{Name: fmt.Sprintf("p%03d", i), Kind: Pod, OS: "linux", Node: "n", BackendIPs: []string{fmt.Sprintf("10.1.%d.%d", i/200, i%200+1)}}
			ts = append(ts, Target{Peer: p, Mode: PodIP, URL: webURL(p.BackendIPs[0], 80)})
		}
		src := &fakeSource{peer: Peer{Name: "src", Kind: Pod, OS: "linux", Node: "m"}, probe: per(answerFromBackend(ts))}
		m := &Matrix{Sources: []Source{src}, Targets: ts, Applies: Applicable}
		out := &syncBuffer{}
		m.Run(context.Background(), out)
		all := lines(out.String())
		wantRows := 1
		if n >= 10 {
			wantRows++
		}
		if n >= 100 {
			wantRows++
		}
		digits := all[1+n : 1+n+wantRows]
		row := all[1+n+wantRows]
		if !strings.HasPrefix(row, "src (linux pod @m)") {
			t.Fatalf("%d targets: line after the digit rows is %q, want the source's row", n, row)
		}
		if len(row) != nameWidth+1+n {
			t.Errorf("%d targets: row is %d long, want %d", n, len(row), nameWidth+1+n)
		}
		for _, d := range digits {
			if len(d) != nameWidth+1+n {
				t.Errorf("%d targets: digit row %q is %d long, want %d", n, d, len(d), nameWidth+1+n)
			}
		}
		for i := 0; i < n; i++ {
			col, num := nameWidth+1+i, i+1
			// Read the column's number top-down.
			var s string
			for _, d := range digits {
				s += string(d[col])
			}
			if got := strings.TrimSpace(s); got != fmt.Sprint(num) {
				t.Errorf("%d targets: column %d reads %q, want %d", n, col, s, num)
			}
			if row[col] != SymReachable {
				t.Errorf("%d targets: column %d of the row is %q", n, col, row[col])
			}
		}
	}
}

func TestFooter(t *testing.T) {
	m := tableMatrix(t)
	f := lines(m.footer())
	// linux-a has 16 cells, win-1 11.
	if want := "verdicts: 24 ok, 1 regression, 0 wrong, 0 flaky, 1 drift, 1 probe error, 0 skipped"; f[0] != want {
		t.Errorf("footer %q, want %q", f[0], want)
	}
	ts := m.Targets
	u := func(id string) string { return targetByID(t, ts, id).URL }
	want := []string{
		"  regression: linux-a -> windows-a/pod-dns: expected reachable, blocked (dns: no such host), also on the second probe; reproduce: repro-from linux-a " + u("windows-a/pod-dns"),
		"  probe-error: linux-a -> windows-a/icmp: expected reachable, probe-error (unsupported: raw sockets need privileges), also on the second probe; reproduce: repro-from linux-a " + u("windows-a/icmp"),
		"  drift: win-1 -> svc-linux/nodeport@win-1: expected unreachable (" + DocumentedLimits[2].Reason + "; " + DocTroubleshooting + "), reachable, also on the second probe; reproduce: repro-from win-1 " + u("svc-linux/nodeport@win-1"),
	}
	if !reflect.DeepEqual(f[1:], want) {
		t.Errorf("notable cells\n%s\nwant\n%s", strings.Join(f[1:], "\n"), strings.Join(want, "\n"))
	}
}

func TestDescribe(t *testing.T) {
	c := &Cell{Source: "a", Target: "b/pod-ip", Expect: Expectation{Reachable: true}, Observed: Reachable, Verdict: OK, Repro: "cmd"}
	if got, want := c.Describe(), "ok: a -> b/pod-ip: expected reachable, reachable; reproduce: cmd"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	c = &Cell{Source: "a", Target: "b/pod-ip", Expect: Expectation{Reachable: true}, Observed: Blocked, Verdict: Regression,
		Result: probeclient.Result{OK: true, Detail: probeclient.Detail{PodIP: "1.2.3.4"}}, Why: "answered by 1.2.3.4, which is not 5.6.7.8", Repro: "cmd"}
	if got, want := c.Describe(), "regression: a -> b/pod-ip: expected reachable, blocked (answered by 1.2.3.4, which is not 5.6.7.8); reproduce: cmd"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}

func TestMarkdown(t *testing.T) {
	m := tableMatrix(t)
	md := m.Markdown()
	ts := m.Targets
	u := func(id string) string { return targetByID(t, ts, id).URL }
	if !strings.HasPrefix(md, "# Network matrix\n\nCluster: Kubernetes v1.37.2, CNI flannel/vxlan.") {
		t.Errorf("Markdown does not start with the title and the cluster:\n%s", md)
	}
	head := "| source |"
	sep := "|---|"
	for i := range ts {
		head += fmt.Sprintf(" %d |", i+1)
		sep += "---|"
	}
	if !strings.Contains(md, "\n"+head+"\n"+sep+"\n") {
		t.Errorf("Markdown lacks the table head %q", head)
	}
	for _, s := range m.Sources {
		row := "| " + sourceLabel(s.Peer()) + " |"
		for _, c := range strings.TrimSuffix(m.rowLine(s), "\n")[nameWidth+1:] {
			row += " `" + string(c) + "` |"
		}
		if !strings.Contains(md, "\n"+row+"\n") {
			t.Errorf("Markdown lacks the row %q", row)
		}
	}
	if !strings.Contains(md, "\n| # | target | URL |\n|---|---|---|\n") {
		t.Errorf("Markdown lacks the target legend's head")
	}
	for i, tg := range ts {
		if line := fmt.Sprintf("\n| %d | %s | `%s` |\n", i+1, tg.ID(), tg.URL); !strings.Contains(md, line) {
			t.Errorf("Markdown lacks the legend line %q", line)
		}
	}
	notAsExpected := md[strings.Index(md, "## Cells that are not as expected"):strings.Index(md, "## Documented limitations seen")]
	for _, entry := range []string{
		"- **regression** linux-a -> windows-a/pod-dns (claims NET-06): expected reachable, observed blocked (dns: no such host)\n  ```\n  repro-from linux-a " + u("windows-a/pod-dns") + "\n  ```\n",
		"- **probe-error** linux-a -> windows-a/icmp (claims NET-25): expected reachable, observed probe-error (unsupported: raw sockets need privileges)\n  ```\n  repro-from linux-a " + u("windows-a/icmp") + "\n  ```\n",
		"- **drift** win-1 -> svc-linux/nodeport@win-1 (claims NET-27): expected unreachable (" + DocumentedLimits[2].Reason + "; " + DocTroubleshooting + "), observed reachable\n  ```\n  repro-from win-1 " + u("svc-linux/nodeport@win-1") + "\n  ```\n",
	} {
		if !strings.Contains(notAsExpected, entry) {
			t.Errorf("\"Cells that are not as expected\" lacks\n%s\nin\n%s", entry, notAsExpected)
		}
	}
	if n := strings.Count(notAsExpected, "\n- **"); n != 3 {
		t.Errorf("%d cells not as expected, want 3:\n%s", n, notAsExpected)
	}
	seen := md[strings.Index(md, "## Documented limitations seen"):]
	want := "## Documented limitations seen\n\n" +
		"- win-1 -> svc-linux/cluster-ip: blocked, as documented (" + DocumentedLimits[1].Reason + "; " + DocTroubleshooting + ")\n" +
		"- win-1 -> svc-windows/cluster-ip: blocked, as documented (" + DocumentedLimits[0].Reason + "; " + DocSchedulingGuide + ")\n" +
		"- win-1 -> svc-windows/nodeport@win-1: blocked, as documented (" + DocumentedLimits[2].Reason + "; " + DocTroubleshooting + ")\n"
	if seen != want {
		t.Errorf("documented limitations\n%s\nwant\n%s", seen, want)
	}
}

func TestMarkdownWhenAllIsAsExpected(t *testing.T) {
	ts := []Target{podTargets(peerWinA)[0], outsideTarget()}
	src := &fakeSource{peer: peerLinA, probe: per(answerFromBackend(ts))}
	m := &Matrix{Sources: []Source{src}, Targets: ts, Applies: Applicable, Profile: Profile{ServerVersion: "v1.30.0", CNI: "calico"}}
	m.Run(context.Background(), nil)
	md := m.Markdown()
	if !strings.Contains(md, "## Cells that are not as expected\n\nNone.\n") {
		t.Errorf("Markdown does not say None. for a clean matrix:\n%s", md)
	}
	if !strings.HasSuffix(md, "## Documented limitations seen\n\nNone on this cluster.\n") {
		t.Errorf("Markdown does not end with \"None on this cluster.\":\n%s", md)
	}
	if !strings.Contains(md, "| linux-a (linux pod @lin-cp) | `.` | `.` |\n") {
		t.Errorf("Markdown lacks the row:\n%s", md)
	}
}

func TestReportAndWriteRoundTrip(t *testing.T) {
	m := tableMatrix(t)
	r := m.Report()
	if r.ServerVersion != "v1.37.2" || r.CNI != "flannel/vxlan" {
		t.Errorf("report keys %q %q", r.ServerVersion, r.CNI)
	}
	if !reflect.DeepEqual(r.Sources, []Peer{peerLinA, nodeWin1}) {
		t.Errorf("report sources %+v", r.Sources)
	}
	if !reflect.DeepEqual(r.Targets, m.Targets) || !reflect.DeepEqual(r.Cells, m.Cells()) {
		t.Errorf("report targets or cells differ from the matrix's")
	}

	dir := filepath.Join(t.TempDir(), "reports", "nested")
	stamp := version.Stamp{RunID: "wc-20260301t120000-0a1b2c3d", Harness: version.Info{Version: "v0.3.0", Commit: "0123456789ab"}}
	written, err := m.Write(dir, stamp)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "network-matrix.json"))
	if err != nil {
		t.Fatal(err)
	}
	// What the run records binds the file it wrote: its digest and cells.
	if sum := sha256.Sum256(data); written.SHA256 != "sha256:"+hex.EncodeToString(sum[:]) || written.Cells != len(m.Cells()) {
		t.Errorf("Write recorded %+v, not the file it wrote (%d cells)", written, len(m.Cells()))
	}
	var got Report
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("decoding network-matrix.json: %v", err)
	}
	if got.ServerVersion != r.ServerVersion || got.CNI != r.CNI {
		t.Errorf("decoded keys %q %q", got.ServerVersion, got.CNI)
	}
	if got.Stamp != stamp {
		t.Errorf("network-matrix.json carries the stamp %+v, want the run's %+v", got.Stamp, stamp)
	}
	if !reflect.DeepEqual(got.Sources, r.Sources) {
		t.Errorf("decoded sources\n%+v\nwant\n%+v", got.Sources, r.Sources)
	}
	if !reflect.DeepEqual(got.Targets, r.Targets) {
		t.Errorf("decoded targets\n%+v\nwant\n%+v", got.Targets, r.Targets)
	}
	if len(got.Cells) != len(r.Cells) {
		t.Fatalf("decoded %d cells, want %d", len(got.Cells), len(r.Cells))
	}
	for i := range got.Cells {
		if !reflect.DeepEqual(got.Cells[i], r.Cells[i]) {
			t.Errorf("cell %d decoded as\n%+v\nwant\n%+v", i, *got.Cells[i], *r.Cells[i])
		}
	}
	// A re-probed cell keeps its first result in the JSON.
	var reprobed int
	for _, c := range got.Cells {
		if c.Reprobed {
			reprobed++
			if c.First == nil {
				t.Errorf("%s -> %s: reprobed without first", c.Source, c.Target)
			}
		}
	}
	// 3 mismatches, and the 3 documented limitations seen blocked (each
	// confirmed by a second probe).
	if reprobed != 6 {
		t.Errorf("%d re-probed cells in the JSON, want 6", reprobed)
	}
	// Field names are the documented ones.
	for _, key := range []string{`"serverVersion": "v1.37.2"`, `"cni": "flannel/vxlan"`, `"backendIPs"`, `"mode": "nodeport"`,
		`"via": "win-1"`, `"viaOS": "windows"`, `"observed": "blocked"`, `"verdict": "regression"`, `"reprobed": true`, `"first": {`,
		`"rule": "windows-host-to-local-service-ip"`, `"claim": "NET-21"`, `"claims": [`, `"repro": "repro-from`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("network-matrix.json lacks %s", key)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "network-matrix.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(md) != m.Markdown() {
		t.Errorf("network-matrix.md differs from Markdown()")
	}
}

func TestWriteFailsOnAFile(t *testing.T) {
	m := tableMatrix(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Write(file, version.Stamp{}); err == nil {
		t.Errorf("Write into a path that is a file succeeded")
	}
}
