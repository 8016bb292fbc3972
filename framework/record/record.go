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
	// EndEntry is the cluster's nodes' readiness at the run's end, which
	// the suite's SynchronizedAfterSuite adds once every process is done.
	EndEntry = "winconform.cluster-end"
	// MatrixEntry says the run probed the network matrix and wrote its
	// file: how many cells, and the file's digest.
	MatrixEntry = "winconform.matrix"
)

// Matrix is what MatrixEntry records of the network matrix file the run
// wrote: its cells, and the SHA-256 of its bytes ("sha256:<hex>").
type Matrix struct {
	Cells  int    `json:"cells"`
	SHA256 string `json:"sha256"`
}

// AddMatrix records that the run wrote the network matrix file m describes.
func AddMatrix(m Matrix) { add(MatrixEntry, m) }

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

// AddEnd records the nodes' readiness at the run's end: call it in the
// last function of SynchronizedAfterSuite (the first process, after all).
// A node counts as one of the run's only when it was Ready at the start
// (the facts) and at the end.
func AddEnd(e facts.Readiness) { add(EndEntry, e) }

// Record is what Read finds.
type Record struct {
	Run Run
	// Recorded is false when the report holds no run entry.
	Recorded bool
	// Cluster is nil when the run did not reach the cluster; End nil when
	// the run did not reach its end (or predates the entry).
	Cluster *facts.Facts
	End     *facts.Readiness
}

func add(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain data
	}
	ginkgo.AddReportEntry(name, string(data), ginkgo.ReportEntryVisibilityNever)
}

// Read finds the run's record in Ginkgo's report: its run entry, the
// cluster's facts and the readiness at the end. Each entry is decoded
// strictly (a key its type lacks is refused), and an entry written twice
// means the report mixes two runs.
func Read(r types.Report) (Record, error) {
	var out Record
	for _, sr := range r.SpecReports {
		for _, e := range sr.ReportEntries {
			var v any
			switch e.Name {
			case RunEntry:
				if out.Recorded {
					return Record{}, fmt.Errorf("the report holds two %s entries: it mixes two runs", RunEntry)
				}
				out.Recorded, v = true, &out.Run
			case ClusterEntry:
				if out.Cluster != nil {
					return Record{}, fmt.Errorf("the report holds two %s entries: it mixes two runs", ClusterEntry)
				}
				out.Cluster = &facts.Facts{}
				v = out.Cluster
			case EndEntry:
				if out.End != nil {
					return Record{}, fmt.Errorf("the report holds two %s entries: it mixes two runs", EndEntry)
				}
				out.End = &facts.Readiness{}
				v = out.End
			default:
				continue
			}
			if err := Decode(e.StringRepresentation(), v); err != nil {
				return Record{}, fmt.Errorf("%s entry: %w", e.Name, err)
			}
		}
	}
	return out, nil
}

// Decode decodes an entry's JSON into v, refusing a key v has no field
// for and anything after the value.
func Decode(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more after the value")
	}
	return nil
}
