package suiterun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/internal/text"
	"github.com/winconform/winconform/internal/userfile"
)

// DryRun runs the suite binary's dry run with args (the selection and any
// suite flags) and returns its report, in which the specs the selection
// leaves out are skipped. The suite's own one-line refusal (an unknown
// SUITE or claim, an unknown flag, a bad value) becomes the error (see
// Refusal); a dry run that takes more than a minute is stopped.
func DryRun(ctx context.Context, binary string, args []string) (types.Report, error) {
	if _, err := os.Stat(binary); err != nil {
		return types.Report{}, fmt.Errorf("suite binary %s: %v (build it with `make build`)", binary, err)
	}
	tmp, err := os.MkdirTemp("", "winconform-dry-run-")
	if err != nil {
		return types.Report{}, err
	}
	defer os.RemoveAll(tmp)
	report := filepath.Join(tmp, "dry-run.json")
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	full := append([]string{"--ginkgo.dry-run", "--ginkgo.no-color", "--ginkgo.silence-skips", "--ginkgo.json-report=" + report}, args...)
	out, err := exec.CommandContext(ctx, binary, full...).CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return types.Report{}, fmt.Errorf("dry run of %s: %w", binary, context.Cause(ctx))
		}
		return types.Report{}, Refusal(binary, string(out), err)
	}
	r, err := ReadReport(report)
	if err != nil {
		return types.Report{}, fmt.Errorf("dry run of %s: %w", binary, err)
	}
	return r, nil
}

// Refusal is the one line of the suite binary's output out that says why
// it refused its arguments (it exited with err): its own "winconform e2e:"
// line, else the flag package's complaint, else the output's last lines.
func Refusal(binary, out string, err error) error {
	lines := strings.Split(out, "\n")
	for _, l := range lines {
		if msg, ok := strings.CutPrefix(l, "winconform e2e: "); ok {
			return errors.New(msg)
		}
	}
	for _, l := range lines {
		if strings.Contains(l, "flag provided but not defined") || strings.Contains(l, "invalid value") || strings.Contains(l, "invalid boolean") {
			return fmt.Errorf("suite flags: %s (the suite binary's flags: %s --help)", strings.TrimSpace(l), binary)
		}
	}
	return fmt.Errorf("%s refused the selection: %v: %s", binary, err, text.LastLines(out, 5))
}

// ReadReport reads a Ginkgo JSON report (a list of suite reports), as the
// suite binary writes it, and returns its first suite.
func ReadReport(path string) (types.Report, error) {
	data, err := userfile.Read("", path, userfile.Report)
	if err != nil {
		return types.Report{}, err
	}
	var rs []types.Report
	if err := json.Unmarshal(data, &rs); err != nil {
		return types.Report{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(rs) == 0 {
		return types.Report{}, fmt.Errorf("%s holds no suite", path)
	}
	return rs[0], nil
}
