package reports

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
)

func listReport() types.Report {
	it := func(containers []string, cl [][]string, text string, leaf []string) types.SpecReport {
		return types.SpecReport{
			ContainerHierarchyTexts: containers, ContainerHierarchyLabels: cl,
			LeafNodeType: types.NodeTypeIt, LeafNodeText: text, LeafNodeLabels: leaf,
			State: types.SpecStatePassed, // selected by a dry run (it reports the specs its filters leave out as skipped)
		}
	}
	return types.Report{SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeBeforeSuite, LeafNodeText: "", LeafNodeLabels: []string{"claim:WEB-01"}},
		it([]string{"[networking]"}, [][]string{{"suite:networking"}}, "windows to linux", []string{"os:windows", "claim:NET-03", "claim:NET-01", "needs:windows-node"}),
		it([]string{"[limitations]"}, [][]string{{"suite:limitations", "os:linux"}}, "control plane is linux", []string{"claim:LIM-07", "os:linux"}),
		it([]string{"[networking]"}, [][]string{{"suite:networking"}}, "bad labels", []string{"claim:NET-99", "os:macos"}),
		it([]string{"[limitations]"}, nil, "no labels", nil),
	}}
}

func TestSpecs(t *testing.T) {
	got := Specs(listReport())
	want := []Listed{
		{Name: "[limitations] control plane is linux", Labels: []string{"claim:LIM-07", "os:linux", "suite:limitations"}, Selected: true},
		{Name: "[limitations] no labels", Labels: nil, Selected: true},
		{Name: "[networking] bad labels", Labels: []string{"claim:NET-99", "os:macos", "suite:networking"}, Selected: true},
		{Name: "[networking] windows to linux", Labels: []string{"claim:NET-01", "claim:NET-03", "needs:windows-node", "os:windows", "suite:networking"}, Selected: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Specs() =\n %+v\nwant\n %+v", got, want)
	}
}

func TestSpecsDoesNotReorderReportLabels(t *testing.T) {
	r := listReport()
	Specs(r)
	if got := r.SpecReports[1].LeafNodeLabels; !reflect.DeepEqual(got, []string{"os:windows", "claim:NET-03", "claim:NET-01", "needs:windows-node"}) {
		t.Errorf("Specs sorted the report's own labels: %v", got)
	}
}

func TestLabelProblems(t *testing.T) {
	got := LabelProblems(Specs(listReport()))
	want := []string{
		"[limitations] no labels: needs exactly one suite: label",
		"[limitations] no labels: has no claim: label",
		"[limitations] no labels: has no os: label",
		"[networking] bad labels: claim:NET-99 is not in the catalogue",
		"[networking] bad labels: os:macos is neither linux nor windows",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LabelProblems() =\n %q\nwant\n %q", got, want)
	}
	if p := LabelProblems([]Listed{{Name: "ok", Labels: []string{"suite:a", "claim:NET-07", "os:linux"}}}); len(p) != 0 {
		t.Errorf("LabelProblems on a good spec = %q", p)
	}
	// Labels that contradict the claim's catalogue entry are problems too.
	p := LabelProblems([]Listed{{Name: "imitation", Labels: []string{"suite:a", "claim:WEB-01", "os:linux"}}})
	if len(p) != 1 || !strings.Contains(p[0], "imitation: os:linux contradicts claim WEB-01") {
		t.Errorf("LabelProblems on an untagged Linux twin = %q", p)
	}
}

func TestUncovered(t *testing.T) {
	specs := Specs(listReport())
	unc := Uncovered(specs)
	if len(unc) != len(claims.All())-3 {
		t.Errorf("%d uncovered, want %d", len(unc), len(claims.All())-3)
	}
	for _, id := range unc {
		if id == "NET-01" || id == "NET-03" || id == "LIM-07" {
			t.Errorf("%s is covered but listed as uncovered", id)
		}
		if id == "NET-99" {
			t.Error("an ID outside the catalogue is listed")
		}
	}
	// In catalogue order.
	all := claims.All()
	j := 0
	for _, id := range unc {
		for j < len(all) && all[j].ID != id {
			j++
		}
		if j == len(all) {
			t.Fatalf("Uncovered() = %v is not in catalogue order", unc)
		}
	}
	if len(Uncovered(nil)) != len(all) {
		t.Error("with no specs, every claim is uncovered")
	}
}

func TestWriteList(t *testing.T) {
	var b bytes.Buffer
	WriteList(&b, Specs(listReport()))
	out := b.String()
	if !strings.HasPrefix(out, "[limitations] control plane is linux\n    [claim:LIM-07, os:linux, suite:limitations]\n[limitations] no labels\n    []\n") {
		t.Errorf("WriteList spec lines:\n%s", out)
	}
	unc := Uncovered(Specs(listReport()))
	wantTail := fmt.Sprintf("\n4 of 4 specs selected; 3 of %d claims covered; not yet covered: ", len(claims.All())) + strings.Join(unc, " ") + "\n"
	if !strings.HasSuffix(out, wantTail) {
		t.Errorf("WriteList tail:\n%s\nwant suffix\n%s", out, wantTail)
	}
	if !strings.Contains(out, "not yet covered: CFG-01 CFG-02") {
		t.Errorf("uncovered list does not start with CFG-01 CFG-02:\n%s", out)
	}
}

func TestWriteListAllCovered(t *testing.T) {
	var specs []Listed
	for _, c := range claims.All() {
		specs = append(specs, Listed{Name: "covers " + c.ID, Labels: []string{"claim:" + c.ID}, Selected: true})
	}
	var b bytes.Buffer
	WriteList(&b, specs)
	out := b.String()
	n := len(claims.All())
	if !strings.HasSuffix(out, fmt.Sprintf("\n%d of %d specs selected; %d of %d claims covered\n", n, n, n, n)) {
		t.Errorf("WriteList with every claim covered ends %q", out[max(0, len(out)-80):])
	}
	if strings.Contains(out, "not yet covered") {
		t.Error("WriteList mentions uncovered claims when there are none")
	}
}

// A dry run reports the specs its selection leaves out as skipped: the list
// shows the selection alone, and says how many of all it is.
func TestWriteListPrintsTheSelection(t *testing.T) {
	r := listReport()
	r.SpecReports[1].State = types.SpecStatePassed
	for _, i := range []int{2, 3, 4} {
		r.SpecReports[i].State = types.SpecStateSkipped
	}
	var b strings.Builder
	WriteList(&b, Specs(r))
	out := b.String()
	if !strings.Contains(out, "[networking] windows to linux") || strings.Contains(out, "control plane is linux") || strings.Contains(out, "no labels") {
		t.Errorf("the list is not the selection:\n%s", out)
	}
	if !strings.Contains(out, "1 of 4 specs selected") {
		t.Errorf("the list does not count the selection:\n%s", out)
	}
}
