package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/winconform/winconform/internal/atomicfile"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/internal/text"
	"github.com/winconform/winconform/internal/version"
)

// JUnit test case properties the harness adds.
const (
	PropClaim    = "claim"    // one per claim the spec exercises
	PropEvidence = "evidence" // the level the spec's result was obtained at, or "none"
	PropShows    = "shows"    // the claims its result shows (comma-separated)
	PropResult   = "result"   // the harness's reading of the result
	// A spec that passed only on a retry (--flake-attempts) stays passed,
	// with its attempts and its first attempt's failure ("message (location)").
	PropAttempts     = "attempts"
	PropFirstFailure = "firstFailure"
)

// Run-level properties of the JUnit test suite the harness adds beside
// Ginkgo's: what the run showed, on what cluster, and which run and
// harness it was, so that a dashboard that reads only the JUnit can tell
// a run that showed nothing on Windows from one that did.
const (
	PropShown          = "shown"          // claims shown, of PropClaims
	PropShownOnWindows = "shownOnWindows" // of them, shown by a result on real Windows
	PropClaims         = "claims"         // claims in the catalogue
	PropWindowsNodes   = "windowsNodes"   // real Windows nodes in the cluster ("unknown" when the run did not reach it)
	PropStatus         = "status"         // the run's status line
	PropRunID          = "runID"
	PropVersion        = "version"    // the harness's module version
	PropCommit         = "commit"     // the commit it was built from, "+modified" with uncommitted changes
	PropViolations     = "violations" // invariants of the record's contract it breaks (docs/record.md): not 0, no verdict
	PropFlaky          = "flaky"      // specs that passed only on a retry, counted apart from the passes
)

// JUnitFile is the run's one JUnit file in the report directory (the name
// the e2e framework and Sonobuoy's e2e plugin use).
const JUnitFile = "junit_01.xml"

// junitConfig is the upstream e2e framework's (test/e2e/framework/internal/junit):
// no timeline for passed and skipped specs, no failure message attribute
// (spyglass would show it twice), and no labels in the test case names.
var junitConfig = reporters.JunitReportConfig{
	OmitTimelinesForSpecState: types.SpecStatePassed | types.SpecStateSkipped,
	OmitFailureMessageAttr:    true,
	OmitSpecLabels:            true,
}

// BundleNote is what a failed spec's JUnit failure says of its bundle.
func BundleNote(rel string) string {
	return "\n\nThe failure bundle (the spec's pods, events, and its nodes' kubelet, containerd, kube-proxy and CNI logs): " + rel + " in the report directory"
}

// WriteJUnit writes the run's JUnit file at path, once, from the Ginkgo
// report r: Ginkgo's JUnit (as the e2e framework configures it, specs
// sorted by name), with each test case's properties (its claims, its
// evidence level, the claims it shows, its result) and the run-level
// properties (PropShown, PropShownOnWindows, PropWindowsNodes, PropRunID,
// PropVersion, ...) among the test suite's. The file appears whole
// (written beside, then renamed).
func WriteJUnit(path string, r types.Report, s Summary) error {
	// A report node that passed (the progress reporter's
	// ReportBeforeSuite) is no test: as a passed test case it made
	// Sonobuoy count one more spec passed than ran. A failed one stays.
	r.SpecReports = slices.DeleteFunc(slices.Clone(r.SpecReports), func(sr types.SpecReport) bool {
		return sr.LeafNodeType.Is(types.NodeTypeReportBeforeSuite|types.NodeTypeReportAfterSuite) && sr.State == types.SpecStatePassed
	})
	// A spec that passed below its claims' level (a Linux twin, simulated
	// nodes, the API alone, a partial look) showed none of them: as a
	// passed test case it would count as a pass of what it only supports.
	// It is reported skipped, saying what it supported.
	bySpec := map[string]Spec{}
	for _, sp := range s.Specs {
		bySpec[sp.Name] = sp
	}
	for i, sr := range r.SpecReports {
		// A failed spec's test case names its bundle, where a dashboard
		// that reads only the JUnit sends a person first.
		if sp, ok := bySpec[sr.FullText()]; ok && sp.Artifacts != "" && sr.State.Is(types.SpecStateFailureStates) {
			sr.Failure.Message += BundleNote(sp.Artifacts)
			r.SpecReports[i] = sr
			continue
		}
		if sr.LeafNodeType != types.NodeTypeIt || sr.State != types.SpecStatePassed {
			continue
		}
		// A spec the summary fails though it passed (a claim label the
		// catalogue lacks) is a failure here too.
		if sp, ok := bySpec[sr.FullText()]; ok && sp.Result == SpecFailed {
			sr.State, sr.Failure = types.SpecStateFailed, types.Failure{Message: sp.Message, Location: sr.LeafNodeLocation, FailureNodeType: types.NodeTypeIt}
			r.SpecReports[i] = sr
			continue
		} else if f, flaky := s.Flake(sr.FullText()); ok && flaky {
			// Passed on a retry: passed, and its system-out says how it
			// first failed, where a dashboard shows a passed case's output.
			sr.CapturedStdOutErr = "winconform: flaky: " + f.Note() + firstFailureText(f.FirstFailure) + "\n" + sr.CapturedStdOutErr
			r.SpecReports[i] = sr
		}
		ids := labels.Claims(sr.Labels())
		if recs := evidence.FromEntries(sr.ReportEntries); len(ids) > 0 && !evidence.ShowsAny(recs, ids) {
			sr.State = types.SpecStateSkipped
			sr.Failure = types.Failure{Message: fmt.Sprintf("supported only: passed at %s, which shows none of %s (%s)", levelsOf(recs), strings.Join(ids, ", "), SupportedOnlyNote)}
			r.SpecReports[i] = sr
		}
	}
	// A record that breaks its contract decides nothing: a dashboard that
	// reads only the JUnit sees one failed case naming each violation.
	if len(s.Violations) > 0 {
		var lines []string
		for _, v := range s.Violations {
			lines = append(lines, v.String())
		}
		r.SpecReports = append(r.SpecReports, types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: ContractCase, State: types.SpecStateFailed,
			StartTime: r.EndTime, EndTime: r.EndTime, Failure: types.Failure{Message: fmt.Sprintf("the record breaks its contract (docs/record.md), so it decides nothing:\n%s", strings.Join(lines, "\n")), FailureNodeType: types.NodeTypeIt}})
	}
	slices.SortStableFunc(r.SpecReports, func(a, b types.SpecReport) int { return strings.Compare(a.FullText(), b.FullText()) })
	return atomicfile.Produce(path, 0o644, func(tmp string) error {
		if err := reporters.GenerateJUnitReportWithConfig(r, tmp, junitConfig); err != nil {
			return err
		}
		data, err := os.ReadFile(tmp)
		if err != nil {
			return err
		}
		out, err := addProperties(data, caseProperties(r, s), runProperties(s))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return os.WriteFile(tmp, out, 0o644)
	})
}

// ContractCase is the JUnit test case of a record that breaks its contract.
const ContractCase = "[winconform] the record's contract"

// SupportedOnly is the result of a spec that passed below its claims'
// level: in the JUnit file it is skipped, with this result.
const SupportedOnly = "supported only"

// SupportedOnlyNote says why a passing spec below its claims' level is no
// pass in the JUnit file.
const SupportedOnlyNote = "a Linux twin, simulated nodes or the API alone support a claim on Windows; they never show it"

// firstFailureText is a first failure's whole message, on the lines after
// FlakeNote's first line of it.
func firstFailureText(f *Failure) string {
	if f == nil || !strings.Contains(strings.TrimSpace(f.Message), "\n") {
		return ""
	}
	return "\n" + f.Message
}

func levelsOf(recs []evidence.Record) string {
	var out []string
	for _, r := range recs {
		l := string(r.Level)
		if r.Partial != "" {
			l += " (partial: " + r.Partial + ")"
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return "no recorded level"
	}
	return strings.Join(out, ", ")
}

// caseProperties are the properties of each It's test case, by the name
// Ginkgo gives it ("[It] <full text>", with " [<labels>]" unless omitted).
func caseProperties(r types.Report, s Summary) map[string][][2]string {
	props := map[string][][2]string{}
	bySpec := map[string]Spec{}
	for _, sp := range s.Specs {
		bySpec[sp.Name] = sp
	}
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		sp, ok := bySpec[sr.FullText()]
		if !ok {
			continue
		}
		p := specProperties(sp)
		if f, ok := s.Flake(sp.Name); ok {
			p = append(p, flakeProperties(f)...)
		}
		name := "[It] " + sr.FullText()
		props[name] = p
		if l := sr.Labels(); len(l) > 0 {
			props[name+" ["+strings.Join(l, ", ")+"]"] = p
		}
	}
	return props
}

// runProperties are the run-level properties of summary s.
func runProperties(s Summary) [][2]string {
	windows := "unknown"
	if s.Cluster.Known {
		windows = strconv.Itoa(s.Cluster.WindowsNodes)
	}
	props := [][2]string{
		{PropShown, strconv.Itoa(s.Shown)}, {PropShownOnWindows, strconv.Itoa(s.ShownOnWindows)}, {PropClaims, strconv.Itoa(s.Total)},
		{PropWindowsNodes, windows}, {PropStatus, s.Status}, {PropRunID, s.RunID}, {PropVersion, s.Harness.Version}, {PropCommit, s.Harness.CommitLabel()},
		{PropViolations, strconv.Itoa(len(s.Violations))}, {PropFlaky, strconv.Itoa(len(s.Flaky))},
	}
	// The run's own properties come after, and never in place of, the
	// harness's (a dashboard reading shown keeps reading the harness's).
	harness := slices.Clone(props)
	for _, p := range s.Properties {
		if !slices.ContainsFunc(harness, func(h [2]string) bool { return h[0] == p[0] }) {
			props = append(props, p)
		}
	}
	return props
}

// ReservedProperty says whether name is one of the harness's own JUnit
// properties, which a run's --junit-property may not set.
func ReservedProperty(name string) bool {
	return slices.ContainsFunc(runProperties(Summary{}), func(h [2]string) bool { return h[0] == name })
}

// addProperties copies a JUnit document, adding props to the test cases
// they name and run to the properties of each test suite.
func addProperties(data []byte, props map[string][][2]string, run [][2]string) ([]byte, error) {
	var out bytes.Buffer
	dec := xml.NewDecoder(bytes.NewReader(data))
	enc := xml.NewEncoder(&out)
	var stack []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		tok = xml.CopyToken(tok)
		if end, ok := tok.(xml.EndElement); ok {
			if end.Name.Local == "properties" && len(stack) > 1 && stack[len(stack)-2] == "testsuite" {
				if err := encodeProperty(enc, run); err != nil {
					return nil, err
				}
			}
			stack = stack[:len(stack)-1]
		}
		if err := enc.EncodeToken(tok); err != nil {
			return nil, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		stack = append(stack, se.Name.Local)
		if se.Name.Local != "testcase" {
			continue
		}
		name := ""
		for _, a := range se.Attr {
			if a.Name.Local == "name" {
				name = a.Value
			}
		}
		if p, ok := props[name]; ok {
			if err := encodeProperties(enc, p); err != nil {
				return nil, err
			}
		}
	}
	if err := enc.Flush(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func specProperties(sp Spec) [][2]string {
	var p [][2]string
	ids := labels.Claims(sp.Labels)
	for _, id := range ids {
		p = append(p, [2]string{PropClaim, id})
	}
	var level claims.Level
	var shows []string
	for _, id := range ids {
		c, ok := claims.Get(id)
		if !ok {
			continue
		}
		l, ok := sp.Level(c)
		if rank(l) > rank(level) {
			level = l
		}
		if ok && sp.Result == SpecPassed {
			shows = append(shows, id)
		}
	}
	ev := string(level)
	if ev == "" {
		ev = "none"
	}
	for _, r := range sp.Evidence {
		if r.Partial != "" {
			ev += " (partial: " + r.Partial + ")"
		}
	}
	result := sp.Result
	if result == SpecPassed && len(ids) > 0 && len(shows) == 0 {
		result = SupportedOnly
	}
	return append(p, [2]string{PropEvidence, ev}, [2]string{PropShows, strings.Join(shows, ",")}, [2]string{PropResult, result})
}

// flakeProperties are the test case properties of a spec that passed on
// a retry: its attempts and its first failure ("message (location)").
func flakeProperties(f Flake) [][2]string {
	p := [][2]string{{PropAttempts, strconv.Itoa(f.Attempts)}}
	if ff := f.FirstFailure; ff != nil {
		first := text.FirstLine(ff.Message)
		if ff.Location != "" {
			first += " (" + ff.Location + ")"
		}
		p = append(p, [2]string{PropFirstFailure, first})
	}
	return p
}

func encodeProperties(enc *xml.Encoder, props [][2]string) error {
	start := xml.StartElement{Name: xml.Name{Local: "properties"}}
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	if err := encodeProperty(enc, props); err != nil {
		return err
	}
	return enc.EncodeToken(start.End())
}

func encodeProperty(enc *xml.Encoder, props [][2]string) error {
	for _, kv := range props {
		el := xml.StartElement{Name: xml.Name{Local: "property"}, Attr: []xml.Attr{
			{Name: xml.Name{Local: "name"}, Value: kv[0]}, {Name: xml.Name{Local: "value"}, Value: kv[1]}}}
		if err := enc.EncodeToken(el); err != nil {
			return err
		}
		if err := enc.EncodeToken(el.End()); err != nil {
			return err
		}
	}
	return nil
}

// WriteStepFailure writes the JUnit file of a run whose step (the local
// cluster's `up`, the Windows machines' join) failed before the suites
// ran: one failed test case "[winconform] <step>" with the error, and the
// run-level properties of a run that reached no cluster, so that a
// dashboard that reads only JUnit shows the run red, not empty.
func WriteStepFailure(path string, stamp version.Stamp, step string, stepErr error) error {
	now := time.Now()
	r := types.Report{SuiteDescription: "winconform", SuiteSucceeded: false, StartTime: now, EndTime: now,
		SpecReports: types.SpecReports{{
			LeafNodeType: types.NodeTypeIt, LeafNodeText: "[winconform] " + step, State: types.SpecStateFailed, StartTime: now, EndTime: now,
			Failure: types.Failure{Message: fmt.Sprintf("%s failed before the suites ran: %v", step, stepErr), FailureNodeType: types.NodeTypeIt},
		}}}
	s := Summarize(r)
	s.Stamp = stamp
	s.Status = fmt.Sprintf("failed before the suites ran (%s); the cluster's nodes are unknown", step)
	return WriteJUnit(path, r, s)
}
