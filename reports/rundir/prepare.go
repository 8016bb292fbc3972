package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/winconform/winconform/reports"
)

// Entries a run leaves in its report directory (the suites, the CLI, the
// underlay check, the gate, the diff, the HTML and its screenshot,
// Sonobuoy's plugin, make test's underlay fault test): a directory that
// holds nothing else is a report.
var reportEntries = map[string]bool{
	reports.SummaryFile: true, "summary.md": true, reports.ClusterFile: true, reports.MatrixFile: true, "network-matrix.md": true,
	reports.LimitationsFile: true, "limitations.md": true, "ginkgo": true, "artifacts": true, "report.html": true, "report.png": true,
	"gate.json": true, "gate.md": true, "diff.json": true, "diff.md": true, "e2e.log": true, "done": true,
	UnderlayFile: true, "underlay-fault.log": true, RunFile: true, SweptFile: true,
	ManifestFile: true, StatementFile: true, SignedStatementFile: true,
}

// reportPattern matches the other names a run writes: its JUnit files, and
// the files it writes beside them before renaming them into place.
var reportPattern = regexp.MustCompile(`^(junit_.*\.xml|\.junit-.*\.xml|\.done\.tmp|\.run-.*\.json)$`)

// Check says whether a run may write its reports into dir (Prepare would
// succeed), without changing anything: dir is missing, empty, or a report
// directory (which Prepare moves aside). A directory that holds anything
// else is refused, naming what, so that nothing but reports is ever moved.
func Check(dir string) error {
	_, err := inspect(dir)
	return err
}

// Prepare makes dir ready for a new run's reports and returns where the
// report it held now is ("" when it held none). A run never deletes a
// report and never mixes its files with another run's: a report directory
// is moved aside, whole, to a sibling named by its run (dir.<run ID>, or
// dir.<time> for a report without one), and dir is made anew.
func Prepare(dir string) (string, error) {
	report, err := inspect(dir)
	if err != nil {
		return "", err
	}
	if !report {
		return "", os.MkdirAll(dir, 0o755)
	}
	aside := asideName(dir)
	if err := os.Rename(dir, aside); err != nil {
		return "", fmt.Errorf("moving the previous report %s aside to %s: %w", dir, aside, err)
	}
	return aside, os.MkdirAll(dir, 0o755)
}

// inspect says whether dir holds a report (true) or nothing (false), and
// refuses a file or a directory with anything else in it.
func inspect(dir string) (bool, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("report directory %s: %w", dir, err)
	case !st.IsDir():
		return false, fmt.Errorf("report directory %s is a file: pass a directory for the reports (a new one, or one a run wrote)", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("report directory %s: %w", dir, err)
	}
	var foreign []string
	for _, e := range entries {
		if !reportEntries[e.Name()] && !reportPattern.MatchString(e.Name()) {
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			foreign = append(foreign, name)
		}
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		more := ""
		if len(foreign) > 3 {
			more = fmt.Sprintf(" and %d more", len(foreign)-3)
			foreign = foreign[:3]
		}
		return false, fmt.Errorf("report directory %s holds what is not a winconform report (%s%s): pass a new or empty directory, or one a run wrote (nothing in it was moved or deleted)",
			dir, strings.Join(foreign, ", "), more)
	}
	return len(entries) > 0, nil
}

// asideName is a free sibling of dir named by the run its report is of.
func asideName(dir string) string {
	clean := filepath.Clean(dir)
	tag := ""
	// The summary's run, else (a run killed before it wrote one) the run file's.
	for _, f := range []string{reports.SummaryFile, RunFile} {
		if data, err := os.ReadFile(filepath.Join(clean, f)); err == nil && tag == "" {
			var head struct {
				RunID string `json:"runID"`
			}
			if json.Unmarshal(data, &head) == nil && validTag.MatchString(head.RunID) {
				tag = head.RunID
			}
		}
	}
	if tag == "" {
		when := time.Now()
		if st, err := os.Stat(clean); err == nil {
			when = st.ModTime()
		}
		tag = when.UTC().Format("20060102t150405")
	}
	name := clean + "." + tag
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s.%s-%d", clean, tag, i)
	}
}

// validTag is what a run ID must look like to name a directory.
var validTag = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
