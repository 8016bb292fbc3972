package rundir_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/reporttest"
	"github.com/winconform/winconform/reports/rundir"
)

func wantErr(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := reporttest.Write(t, reporttest.Dir{
		Summary: reporttest.Summary(reporttest.LinuxCluster, nil),
		Matrix:  &netmatrix.Report{Cells: []*netmatrix.Cell{reporttest.Cell("a", "b/pod-ip", netmatrix.OK, netmatrix.Reachable, "NET-07")}},
		Ledger:  []reports.LedgerEntry{},
		Retried: []string{"networking NET-07"},
	})
	r, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Matrix == nil || len(r.Matrix.Cells) != 1 || r.Ledger == nil || len(r.Retried) != 1 || r.Retried[0] != "networking NET-07" {
		t.Errorf("read %+v", r)
	}
	if r.Cluster != nil {
		t.Error("cluster.json read where there is none")
	}
}

func TestSpecsSlowestFirst(t *testing.T) {
	it := func(text string, took time.Duration, state types.SpecState) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, State: state, RunTime: took}
	}
	dir := reporttest.Write(t, reporttest.Dir{
		Summary: reporttest.Summary(reporttest.LinuxCluster, nil),
		Specs: []types.SpecReport{
			it("quick", time.Second, types.SpecStatePassed),
			{LeafNodeType: types.NodeTypeBeforeSuite, LeafNodeText: "", State: types.SpecStatePassed, RunTime: time.Minute},
			it("slow", 20*time.Second, types.SpecStateFailed),
			it("skipped", 10*time.Millisecond, types.SpecStateSkipped),
		},
	})
	r, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []rundir.SpecTime{{Spec: "slow", State: "failed", Took: 20 * time.Second}, {Spec: "quick", State: "passed", Took: time.Second},
		{Spec: "skipped", State: "skipped", Took: 10 * time.Millisecond}}
	if !reflect.DeepEqual(r.Specs, want) {
		t.Errorf("specs %+v, want %+v (It specs only, slowest first)", r.Specs, want)
	}
}

func TestOptionalFilesAbsent(t *testing.T) {
	r, err := rundir.Load(reporttest.Write(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, nil)}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Matrix != nil || r.Ledger != nil || r.Retried != nil {
		t.Errorf("absent files read as present: %+v", r)
	}
}

func TestBadDirectories(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		_, err := rundir.Load(filepath.Join(t.TempDir(), "nope"))
		wantErr(t, err, "nope", "no such report directory", "make e2e")
	})
	t.Run("a file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "f")
		os.WriteFile(f, nil, 0o644)
		_, err := rundir.Load(f)
		wantErr(t, err, "is a file", "summary.json")
	})
	t.Run("empty", func(t *testing.T) {
		dir := t.TempDir()
		_, err := rundir.Load(dir)
		wantErr(t, err, filepath.Join(dir, "summary.json"), "no summary.json", "make e2e")
	})
	t.Run("summary truncated", func(t *testing.T) {
		dir := reporttest.Write(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, nil)})
		path := filepath.Join(dir, "summary.json")
		data, _ := os.ReadFile(path)
		os.WriteFile(path, data[:len(data)/2], 0o644)
		_, err := rundir.Load(dir)
		wantErr(t, err, path, "half written", "rerun the suites")
	})
	t.Run("summary empty", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "summary.json"), nil, 0o644)
		_, err := rundir.Load(dir)
		wantErr(t, err, "summary.json", "half written")
	})
	t.Run("older format", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"suite":"winconform","claims":[{"id":"NET-01","status":"passed"}]}`), 0o644)
		_, err := rundir.Load(dir)
		if !errors.Is(err, reports.ErrOldFormat) {
			t.Fatalf("got %v, want ErrOldFormat", err)
		}
		wantErr(t, err, "summary.json", "rerun the suites")
	})
	for _, name := range []string{"network-matrix.json", "limitations.json", "cluster.json", "ginkgo/report.json"} {
		t.Run(name+" truncated", func(t *testing.T) {
			dir := reporttest.Write(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, nil)})
			path := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, []byte(`{"cells": [`), 0o644)
			_, err := rundir.Load(dir)
			wantErr(t, err, path, "half written")
		})
	}
	t.Run("matrix of another layout", func(t *testing.T) {
		dir := reporttest.Write(t, reporttest.Dir{Summary: reporttest.Summary(reporttest.LinuxCluster, nil)})
		os.WriteFile(filepath.Join(dir, "network-matrix.json"), []byte(`{"cells": "none"}`), 0o644)
		_, err := rundir.Load(dir)
		wantErr(t, err, "network-matrix.json", "rerun the suites")
	})
}

// Each file of a report directory carries its run's ID: a directory that
// mixes two runs' files (a cluster.json or a network matrix of an earlier
// run beside this run's summary) is refused, naming both runs; files of a
// winconform before run IDs are read as they are.
func TestLoadRefusesFilesOfAnotherRun(t *testing.T) {
	s := reporttest.Summary(reporttest.LinuxCluster, nil)
	dir := reporttest.Write(t, reporttest.Dir{Summary: s})
	other := version.For("wc-20250101t000000-deadbeef")
	if err := reports.WriteCluster(dir, other, &facts.Facts{ServerVersion: "v1.37.2"}); err != nil {
		t.Fatal(err)
	}
	_, err := rundir.Load(dir)
	wantErr(t, err, "cluster.json belongs to run wc-20250101t000000-deadbeef", "summary.json to run "+s.RunID, "mixes two runs")

	dir = reporttest.Write(t, reporttest.Dir{Summary: s})
	if err := reports.WriteLedger(dir, other, nil); err != nil {
		t.Fatal(err)
	}
	_, err = rundir.Load(dir)
	wantErr(t, err, "limitations.json belongs to run wc-20250101t000000-deadbeef")

	dir = reporttest.Write(t, reporttest.Dir{Summary: s})
	if err := reports.WriteCluster(dir, s.Stamp, &facts.Facts{ServerVersion: "v1.37.2"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "limitations.json"), []byte("[]"), 0o644) // an older winconform's ledger
	r, err := rundir.Load(dir)
	if err != nil || r.Cluster == nil || r.Cluster.ServerVersion != "v1.37.2" || r.Ledger == nil {
		t.Errorf("the run's own files: %v %+v", err, r)
	}
}
