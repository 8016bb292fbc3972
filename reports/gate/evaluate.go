package gate

import (
	"fmt"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/reports/policy"
	"github.com/winconform/winconform/reports/rundir"
)

// Options are what `winconform gate` is given: the run's report directory,
// the policy file, an optional baseline report directory, the day to read
// known issues as of (YYYY-MM-DD; empty: today), and Windows builds the
// cluster must have had.
type Options struct {
	Report, Policy, Baseline, Now string
	WindowsBuilds                 []string
	// Clock is today (time.Now when nil).
	Clock func() time.Time
}

// Evaluate reads the inputs and decides. Every error means an input is
// unusable (exit status 2), and names the input and the fix; nothing is
// decided before every input is read and checked.
func Evaluate(o Options) (Result, error) {
	if o.Report == "" || o.Policy == "" {
		return Result{}, fmt.Errorf("gate needs --report DIR (a run's report directory) and --policy FILE (policies/ has examples)")
	}
	clock := o.Clock
	if clock == nil {
		clock = time.Now
	}
	today := day(clock())
	var asked time.Time
	if o.Now != "" {
		d, err := time.Parse(config.DateLayout, o.Now)
		if err != nil {
			return Result{}, fmt.Errorf("--now %q is not a date YYYY-MM-DD: write the day to read known issues' expiry against, e.g. 2026-03-31", o.Now)
		}
		// Known issues are judged as of the decision: --now may look
		// ahead (will this still ship when the waiver expires?), never
		// back to a day an expired waiver still held.
		if d.Before(today) {
			return Result{}, fmt.Errorf("--now %s is before today (%s): known issues are judged as of the decision, so --now may move the day forward, never back; leave --now out, or give today or a later day",
				o.Now, today.Format(config.DateLayout))
		}
		asked = d
	}
	p, err := policy.Load(o.Policy)
	if err != nil {
		return Result{}, fmt.Errorf("--policy: %w", err)
	}
	for _, b := range o.WindowsBuilds {
		if !config.ValidBuild(b) {
			return Result{}, fmt.Errorf("--windows-build %q is not a Windows build: write it as the node label node.kubernetes.io/windows-build has it, e.g. 10.0.20348", b)
		}
	}
	run, err := rundir.Load(o.Report)
	if err != nil {
		return Result{}, fmt.Errorf("--report: %w", err)
	}
	in := Input{Policy: p, PolicyFile: o.Policy, Run: run, Now: asked, WindowsBuilds: o.WindowsBuilds}
	if asked.IsZero() {
		// Today, by this machine's clock; a clock set before the run's
		// start reads known issues as of the run's day instead (a
		// backdated clock never brings an expired known issue back).
		in.Now = clock().UTC()
		if start := day(run.Started); in.Now.Before(start) {
			in.Now = start
		}
	}
	if o.Baseline != "" {
		base, err := rundir.Load(o.Baseline)
		if err != nil {
			return Result{}, fmt.Errorf("--baseline: %w", err)
		}
		in.Baseline = base
	}
	res, err := Decide(in)
	res.decidedAt = clock()
	return res, err
}
