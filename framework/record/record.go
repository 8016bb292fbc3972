// Package record is what a run writes of itself into Ginkgo's report, beside
// each spec's evidence (framework/evidence): which run it is, by which
// harness, under which claim catalogue, and the cluster's facts as the run
// found them. Ginkgo's report (ginkgo/report.json) with these entries is the
// run's record: every verdict, the gate's included, is derived from it (and
// from the network matrix the suites write beside it), never from the files
// derived from it for people (summary.json, limitations.json, Markdown,
// HTML).
//
// Both entries are added by the suite's SynchronizedBeforeSuite on its first
// process, the run's before anything else, so that a run that stopped early
// still says what it was.
package record

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/internal/version"
)

// The report entries.
const (
	RunEntry     = "winconform.run"
	ClusterEntry = "winconform.cluster"
)

// Run is what a run records of itself.
type Run struct {
	// Stamp is the run's ID and the harness that ran it.
	version.Stamp
	// Catalogue is the version of the claim catalogue the run was recorded
	// under (claims.Version), Claims its claim IDs.
	Catalogue string   `json:"catalogue"`
	Claims    []string `json:"claims"`
	// RerunOf names the report directory whose failed specs this run reran.
	RerunOf string `json:"rerunOf,omitempty"`
	// Properties are the name=value pairs the run was given for its JUnit
	// file (--junit-property): the JUnit test suite carries them.
	Properties [][2]string `json:"properties,omitempty"`
}

// New is the record of run runID by this harness under this catalogue.
func New(runID, rerunOf string, properties ...[2]string) Run {
	return Run{Stamp: version.For(runID), Catalogue: claims.Version(), Claims: claims.IDs(), RerunOf: rerunOf, Properties: properties}
}

// ParseProperty reads a JUnit property given as name=value: a name of
// letters, digits, '.', '_' and '-', and any value.
func ParseProperty(s string) ([2]string, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok || !propertyName.MatchString(name) {
		return [2]string{}, fmt.Errorf("JUnit property %q: write it as name=value, the name of letters, digits, '.', '_' and '-' (such as build=20348.2340)", s)
	}
	return [2]string{name, value}, nil
}

var propertyName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// Add records r in the running node's report: call it first in the first
// function of SynchronizedBeforeSuite.
func Add(r Run) { add(RunEntry, r) }

// AddCluster records the cluster's facts, once the run has read them.
func AddCluster(fs *facts.Facts) { add(ClusterEntry, fs) }

func add(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain data
	}
	ginkgo.AddReportEntry(name, string(data), ginkgo.ReportEntryVisibilityNever)
}

// Read finds the run's record and the cluster's facts in Ginkgo's report:
// ok is false when the report holds no run entry (a run that never began,
// or a report of another program); fs is nil when the run did not reach
// the cluster.
func Read(r types.Report) (run Run, fs *facts.Facts, ok bool, err error) {
	for _, sr := range r.SpecReports {
		for _, e := range sr.ReportEntries {
			switch e.Name {
			case RunEntry:
				if ok {
					return run, nil, false, fmt.Errorf("the report holds two %s entries: it mixes two runs", RunEntry)
				}
				if err := json.Unmarshal([]byte(e.StringRepresentation()), &run); err != nil {
					return run, nil, false, fmt.Errorf("%s entry: %w", RunEntry, err)
				}
				ok = true
			case ClusterEntry:
				if fs != nil {
					return run, nil, false, fmt.Errorf("the report holds two %s entries: it mixes two runs", ClusterEntry)
				}
				fs = &facts.Facts{}
				if err := json.Unmarshal([]byte(e.StringRepresentation()), fs); err != nil {
					return run, nil, false, fmt.Errorf("%s entry: %w", ClusterEntry, err)
				}
			}
		}
	}
	return run, fs, ok, nil
}
