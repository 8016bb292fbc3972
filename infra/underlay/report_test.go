package underlay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The underlay check's rungs go beside the run's report, stamped with its
// run; no report, no file.
func TestWriteStamped(t *testing.T) {
	dir := t.TempDir()
	if err := (*Report)(nil).WriteStamped(filepath.Join(dir, "underlay-check.json"), "wc-261129090000-0001"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "underlay-check.json")); err == nil {
		t.Error("an underlay report for a check that never ran")
	}
	rep := &Report{Machines: []MachineReport{{Machine: "wc-remote", OS: "linux", Shape: Routed, Rungs: []Rung{
		{Name: "vxlan-out", Result: RungFailed, Problem: "no DOCKER-USER rule for udp/4789", Fix: "winconform up --name kind"},
	}}}}
	if err := rep.WriteStamped(filepath.Join(dir, "underlay-check.json"), "wc-261129090000-0001"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "underlay-check.json"))
	var got struct {
		RunID    string          `json:"runID"`
		Machines []MachineReport `json:"machines"`
	}
	if err := json.Unmarshal(data, &got); err != nil || got.RunID != "wc-261129090000-0001" || len(got.Machines) != 1 || got.Machines[0].Rungs[0].Fix != "winconform up --name kind" {
		t.Errorf("%s: %s (%v)", "underlay-check.json", data, err)
	}
}
