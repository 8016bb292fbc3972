package underlay

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/winconform/winconform/internal/version"
)

// WriteStamped writes the check's report r (every machine's rungs, what
// was seen, the rule that is missing and its fix), stamped with run
// runID, to path (in a run's report directory, its underlay-check.json);
// nothing when r is nil.
func (r *Report) WriteStamped(path, runID string) error {
	if r == nil {
		return nil
	}
	b, err := json.MarshalIndent(struct {
		version.Stamp
		*Report
	}{version.For(runID), r}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
