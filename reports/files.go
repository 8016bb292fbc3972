package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/winconform/winconform/internal/userfile"
)

// WriteFiles puts v as indented JSON into dir/jsonName and md into
// dir/mdName, making dir.
func WriteFiles(dir, jsonName, mdName string, v any, md string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, jsonName), data, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, mdName), []byte(md), 0o644)
}

// Files of a report directory. GinkgoFile is the run's record (Ginkgo's
// report with the run's entries, framework/record); MatrixFile the network
// matrix the networking suite writes as it probes. The others are derived
// from the record, for people and other tools, and never read back for a
// verdict.
const (
	GinkgoFile      = "ginkgo/report.json"
	MatrixFile      = "network-matrix.json"
	SummaryFile     = "summary.json"
	LimitationsFile = "limitations.json"
	ClusterFile     = "cluster.json"
)

// ReadJSON reads dir/name into a T whose format (format gives it) must be
// want; ok is false when there is no such file. An unreadable or half
// written file, or one of another format, is an error naming the file and
// the command (rerun) that writes it anew.
func ReadJSON[T any](dir, name, want, rerun string, format func(T) string) (v T, ok bool, err error) {
	path := filepath.Join(dir, name)
	data, err := userfile.Read("", path, userfile.Report)
	if errors.Is(err, os.ErrNotExist) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return v, false, fmt.Errorf("%s: %v (half written?): rerun %s", path, err, rerun)
	}
	if got := format(v); got != want {
		return v, false, fmt.Errorf("%s: format %q, this winconform reads %q: rerun %s", path, got, want, rerun)
	}
	return v, true, nil
}

// Cell makes s fit a Markdown table cell: pipes escaped, one line, at most
// max bytes.
func Cell(s string, max int) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}
