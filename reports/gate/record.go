package gate

import (
	"fmt"
	"strings"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/reports"
	"github.com/winconform/winconform/reports/rundir"
)

// CheckRecord refuses a run whose record the gate cannot decide on: one
// that names no run, was recorded under another claim catalogue, was a dry
// run, never reached its end, or holds an evidence record its own cluster
// cannot have made (Consistent). rundir.Load already refused a record that
// is half written, a run.json of another run, and a run the CLI marked
// started that never ended.
func CheckRecord(r *rundir.Run) error {
	record := reports.GinkgoFile
	switch {
	case !r.Recorded:
		return fmt.Errorf("%s: the record names no run (no run entry: written by a winconform before run records, or the run stopped before its first setup): rerun the suites with this winconform", r.Dir)
	case r.Record.Catalogue != claims.Version():
		return fmt.Errorf("%s: run %s was recorded under claim catalogue %s by winconform %s; this winconform (%s) reads catalogue %s, with other claims or levels: gate the run with the winconform that recorded it, or rerun the suites with this one",
			r.Dir, r.Record.RunID, r.Record.Catalogue, r.Record.Harness, r.Summary.Harness, claims.Version())
	case r.DryRun:
		return fmt.Errorf("%s: run %s was a dry run (--ginkgo.dry-run): nothing ran, so nothing can be decided", r.Dir, r.Record.RunID)
	case r.Ended.IsZero() || r.Ended.Before(r.Started):
		return fmt.Errorf("%s: the record (%s) of run %s never reached its end: what it holds is partial; rerun the suites", r.Dir, record, r.Record.RunID)
	}
	if problems := Consistent(r); len(problems) > 0 {
		return fmt.Errorf("%s: the record of run %s is inconsistent with its own cluster, so no verdict can rest on it (%d problem(s)):\n  %s",
			r.Dir, r.Record.RunID, len(problems), strings.Join(problems, "\n  "))
	}
	return nil
}

// Consistent holds every evidence record of the run's specs against the
// cluster's facts in the same record, and lists what no run on that
// cluster can have recorded: a result on a Windows node (windows-node,
// domain) that names no node, or a node that is not one of the cluster's
// real Windows nodes, or a build other than that node's; a result on a
// Windows machine that names neither machine nor node; a Linux result on a
// node that is not one of the cluster's real Linux nodes.
func Consistent(r *rundir.Run) []string {
	nodes := map[string]facts.Node{}
	if r.Cluster != nil {
		for _, n := range r.Cluster.Nodes {
			nodes[n.Name] = n
		}
	}
	var out []string
	for _, sp := range r.Summary.Specs {
		for _, rec := range sp.Evidence {
			for _, p := range checkRecord(rec, nodes, r.Cluster != nil) {
				out = append(out, fmt.Sprintf("spec %q: a %s record %s", sp.Name, rec.Level, p))
			}
		}
	}
	return out
}

func checkRecord(rec evidence.Record, nodes map[string]facts.Node, known bool) []string {
	var out []string
	onWindows := rec.Level == claims.WindowsNode || rec.Level == claims.Domain || rec.Level == claims.WindowsMachine
	switch {
	case !onWindows && rec.Level != claims.Linux:
		return nil // the API server's, or the scheduler's (on nodes made during the run)
	case onWindows && !known:
		return []string{"on a cluster the run never reached"}
	case (rec.Level == claims.WindowsNode || rec.Level == claims.Domain) && len(rec.Nodes) == 0:
		out = append(out, "names no node (a result on a Windows node names the nodes it was obtained on)")
	case rec.Level == claims.WindowsMachine && len(rec.Nodes)+len(rec.Machines) == 0:
		out = append(out, "names no machine and no node")
	}
	for _, name := range rec.Nodes {
		n, ok := nodes[name]
		switch {
		case !known:
		case !ok:
			out = append(out, fmt.Sprintf("names node %s, which the cluster did not have", name))
		case n.Simulated:
			out = append(out, fmt.Sprintf("names node %s, which is simulated (kwok): it shows nothing of %s", name, rec.Level))
		case onWindows && n.OS != "windows":
			out = append(out, fmt.Sprintf("names node %s, a %s node", name, n.OS))
		case !onWindows && n.OS != "linux":
			out = append(out, fmt.Sprintf("names node %s, a %s node", name, n.OS))
		case onWindows && evidence.BuildOf(rec.Build) != buildOf(n):
			out = append(out, fmt.Sprintf("says build %s for node %s, whose build is %s", noneIfEmpty(rec.Build), name, noneIfEmpty(n.WindowsBuild)))
		}
	}
	return out
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// buildOf is a node's build as a record has it: its label when that is a
// build, else none.
func buildOf(n facts.Node) string {
	if (evidence.Record{Level: claims.WindowsNode, Build: n.WindowsBuild}).Check() != nil {
		return ""
	}
	return evidence.BuildOf(n.WindowsBuild)
}
