package rundir_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/netmatrix"
	"github.com/winconform/winconform/internal/suiterun"
	"github.com/winconform/winconform/internal/version"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
	"github.com/winconform/winconform/testing/reporttest"
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
	r := reporttest.Linux()
	r.Matrix = &netmatrix.Report{Cells: []*netmatrix.Cell{reporttest.Cell("a", "b/pod-ip", netmatrix.OK, netmatrix.Reachable, "NET-07")}}
	r.One("NET-07").Attempts = 2
	run, err := rundir.Load(r.Write(t))
	if err != nil {
		t.Fatal(err)
	}
	if run.Matrix == nil || len(run.Matrix.Cells) != 1 || len(run.Ledger) == 0 || len(run.Summary.Flaky) != 1 || run.Summary.Flaky[0].Spec != "[synthetic] "+reporttest.SpecName("NET-07") {
		t.Errorf("read %+v", run)
	}
	if !run.Recorded || run.Record.RunID != r.ID || run.Summary.RunID != r.ID || run.Cluster == nil || len(run.Cluster.Nodes) != 2 || run.State == nil {
		t.Errorf("the record: recorded %v, run %q (summary %q), cluster %+v, run.json %+v", run.Recorded, run.Record.RunID, run.Summary.RunID, run.Cluster, run.State)
	}
	if !run.Started.Equal(reporttest.Started) || !run.Ended.After(run.Started) {
		t.Errorf("started %s, ended %s", run.Started, run.Ended)
	}
}

// Only the record counts: the files derived from it (summary.json,
// limitations.json, cluster.json) are never read back, so that editing one
// changes nothing read from the directory.
func TestDerivedFilesAreNotRead(t *testing.T) {
	r := reporttest.Linux()
	r.Fail("NET-07", "it failed")
	dir := r.Write(t)
	for _, name := range []string{reports.SummaryFile, reports.LimitationsFile, reports.ClusterFile} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(`{"cells": [`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reporttest.Reseal(t, dir) // the manifest written again: the record alone decides
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatalf("a directory whose derived files were broken: %v", err)
	}
	for _, c := range run.Summary.Claims {
		if c.ID == "NET-07" && c.Outcome != reports.Failed {
			t.Errorf("NET-07 %s, want failed as the record says", c.Outcome)
		}
	}
	if run.Cluster == nil || len(run.Ledger) == 0 {
		t.Errorf("the cluster and the ledger come from the record: %+v %+v", run.Cluster, run.Ledger)
	}
}

func TestSpecsSlowestFirst(t *testing.T) {
	r := reporttest.Linux()
	r.Specs = []reporttest.Spec{{Name: "quick"}, {Name: "slow", State: types.SpecStateFailed}, {Name: "skipped", State: types.SpecStateSkipped}}
	dir := r.Write(t)
	took := map[string]time.Duration{"[synthetic] quick": time.Second, "[synthetic] slow": 20 * time.Second, "[synthetic] skipped": 10 * time.Millisecond}
	editRecord(t, dir, func(g *types.Report) {
		for i, sr := range g.SpecReports {
			g.SpecReports[i].RunTime = took[sr.FullText()]
			if sr.LeafNodeType != types.NodeTypeIt {
				g.SpecReports[i].RunTime = time.Minute
			}
		}
	})
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []rundir.SpecTime{{Spec: "[synthetic] slow", State: "failed", Took: 20 * time.Second}, {Spec: "[synthetic] quick", State: "passed", Took: time.Second},
		{Spec: "[synthetic] skipped", State: "skipped", Took: 10 * time.Millisecond}}
	if !reflect.DeepEqual(run.Specs, want) {
		t.Errorf("specs %+v, want %+v (It specs only, slowest first)", run.Specs, want)
	}
}

func TestOptionalFilesAbsent(t *testing.T) {
	r := reporttest.Linux()
	r.NoRunFile = true
	run, err := rundir.Load(r.Write(t))
	if err != nil {
		t.Fatal(err)
	}
	if run.Matrix != nil || run.State != nil || run.Summary.Flaky != nil {
		t.Errorf("absent files read as present: %+v", run)
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
		wantErr(t, err, "is a file", reports.GinkgoFile)
	})
	t.Run("empty", func(t *testing.T) {
		dir := t.TempDir()
		_, err := rundir.Load(dir)
		wantErr(t, err, filepath.Join(dir, reports.GinkgoFile), "the run's record", "make e2e")
	})
	t.Run("only a summary", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, reports.SummaryFile), []byte(`{"format":"winconform.summary/v5","claims":[]}`), 0o644)
		_, err := rundir.Load(dir)
		wantErr(t, err, "no "+reports.GinkgoFile)
	})
	t.Run("two suites in one record", func(t *testing.T) {
		dir := reporttest.Linux().Write(t)
		path := filepath.Join(dir, reports.GinkgoFile)
		data, _ := os.ReadFile(path)
		one := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(data)), "["), "]")
		os.WriteFile(path, []byte("["+one+","+one+"]"), 0o644)
		_, err := rundir.Load(dir)
		wantErr(t, err, "holds 2 suite reports")
	})
	for _, name := range []string{reports.MatrixFile, reports.GinkgoFile, rundir.RunFile} {
		t.Run(name+" truncated", func(t *testing.T) {
			dir := reporttest.Linux().Write(t)
			path := filepath.Join(dir, name)
			os.WriteFile(path, []byte(`{"cells": [`), 0o644)
			_, err := rundir.Load(dir)
			if name == rundir.RunFile {
				wantErr(t, err, path, "not a run file")
				return
			}
			wantErr(t, err, path, "half written")
		})
	}
	t.Run("matrix of another layout", func(t *testing.T) {
		dir := reporttest.Linux().Write(t)
		os.WriteFile(filepath.Join(dir, reports.MatrixFile), []byte(`{"cells": "none"}`), 0o644)
		_, err := rundir.Load(dir)
		wantErr(t, err, reports.MatrixFile, "rerun the suites")
	})
}

// A network matrix or run.json of another run beside the record is
// refused, naming both runs.
func TestLoadRefusesFilesOfAnotherRun(t *testing.T) {
	r := reporttest.Linux()
	r.Matrix = &netmatrix.Report{}
	dir := r.Write(t)
	data, _ := json.Marshal(netmatrix.Report{Stamp: version.For("wc-20250101t000000-deadbeef")})
	if err := os.WriteFile(filepath.Join(dir, reports.MatrixFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := rundir.Load(dir)
	wantErr(t, err, "network-matrix.json belongs to run wc-20250101t000000-deadbeef", "to run "+r.ID, "mixes two runs")
}

func editRecord(t *testing.T, dir string, edit func(*types.Report)) {
	t.Helper()
	rep, err := suiterun.ReadReport(filepath.Join(dir, reports.GinkgoFile))
	if err != nil {
		t.Fatal(err)
	}
	edit(&rep)
	if err := os.Remove(filepath.Join(dir, reports.GinkgoFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := rundir.Write(dir, rep, filepath.Join(dir, reports.JUnitFile)); err != nil {
		t.Fatal(err)
	}
}
