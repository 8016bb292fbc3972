package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/internal/version"
)

func ledgerSpec(name string, entries ...ledger.Entry) types.SpecReport {
	sr := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: name, State: types.SpecStatePassed}
	for _, e := range entries {
		e.Decide()
		data, _ := json.Marshal(e)
		sr.ReportEntries = append(sr.ReportEntries, types.ReportEntry{Name: ledger.EntryName, Value: types.WrapEntryValue(string(data))})
	}
	return sr
}

func TestLedgerCollectsSortsAndRenders(t *testing.T) {
	r := types.Report{SpecReports: types.SpecReports{
		ledgerSpec("volumes", ledger.Entry{Claim: "VOL-05", Limitation: "medium: Memory unsupported", Document: "seed 004", Era: "1.9",
			Server: "v1.37.2", Expected: ledger.Works, Observed: ledger.Limited, Evidence: "mount failed"}),
		ledgerSpec("config", ledger.Entry{Claim: "CFG-03", Limitation: "Secret volumes unsupported", Document: "seed 000", Era: "1.9",
			Server: "v1.37.2", Expected: ledger.Works, Observed: ledger.Works, Evidence: "file read back", Simulated: true}),
	}}
	entries, err := Ledger(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Claim != "CFG-03" || entries[1].Claim != "VOL-05" {
		t.Fatalf("entries not collected in claim order: %+v", entries)
	}
	// An observation on a simulated node decides nothing.
	if entries[0].Verdict != ledger.Inconclusive || entries[0].Unexpected || entries[1].Verdict != ledger.Regressed || !entries[1].Unexpected {
		t.Errorf("verdicts: %+v", entries)
	}
	if entries[1].Spec != "volumes" {
		t.Errorf("spec = %q", entries[1].Spec)
	}
	md := LedgerMarkdown(entries)
	for _, want := range []string{"| CFG-03 | Secret volumes unsupported (seed 000, 1.9) | v1.37.2 | works | works | inconclusive | file read back (on a simulated node) |",
		"**regressed (unexpected)**"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	dir := t.TempDir()
	stamp := version.Stamp{RunID: "wc-20260301t120000-0a1b2c3d", Harness: version.Info{Version: "v0.3.0", Commit: "0123456789ab"}}
	if err := WriteLedger(dir, stamp, entries); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "limitations.json"))
	var back LedgerFile
	if err := json.Unmarshal(data, &back); err != nil || len(back.Entries) != 2 || back.Entries[1].Verdict != ledger.Regressed {
		t.Errorf("limitations.json: %v %+v", err, back)
	}
	if back.Stamp != stamp {
		t.Errorf("limitations.json carries %+v, want the run's stamp %+v", back.Stamp, stamp)
	}
}

func TestLedgerEmptyAndBroken(t *testing.T) {
	if md := LedgerMarkdown(nil); !strings.Contains(md, "No limitation was checked") {
		t.Errorf("empty ledger: %s", md)
	}
	dir := t.TempDir()
	if err := WriteLedger(dir, version.Stamp{}, nil); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "limitations.json"))
	var f LedgerFile
	if err := json.Unmarshal(data, &f); err != nil || f.Entries == nil || len(f.Entries) != 0 || !strings.Contains(string(data), `"entries": []`) {
		t.Errorf("empty limitations.json = %s", data)
	}
	bad := types.Report{SpecReports: types.SpecReports{{LeafNodeType: types.NodeTypeIt, ReportEntries: []types.ReportEntry{{Name: ledger.EntryName, Value: types.WrapEntryValue("{")}}}}}
	if _, err := Ledger(bad); err == nil {
		t.Error("a broken entry was accepted")
	}
}
