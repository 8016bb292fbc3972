package gate

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/reports/rundir"
)

// Verify decides again, from the checked model of the run, the decision
// stored (gate.json as read): its inputs must be bound to this run's
// record (its digest) and, with a baseline, to the baseline's, and the
// decision made again from them must be the stored one, item for item. It
// returns the decision made again, which is the one to show: a view shows
// no verdict it did not get from the gate's evaluation of the same record.
func Verify(stored Result, run *rundir.Run) (Result, error) {
	in := stored.Inputs
	switch {
	case stored.RunID != run.Record.RunID:
		return Result{}, fmt.Errorf("it is the gate of run %s, not of this run (%s)", orNone([]string{stored.RunID}), orNone([]string{run.Record.RunID}))
	case in.Record == "":
		return Result{}, fmt.Errorf("it names no record it was decided on (written by hand, or by a winconform before decisions were bound to records)")
	case in.Record != run.Digest:
		return Result{}, fmt.Errorf("it was decided on another record (%s) than this directory holds (%s)", in.Record, run.Digest)
	}
	now, err := time.Parse(config.DateLayout, stored.Now)
	if err != nil {
		return Result{}, fmt.Errorf("its day %q is not a date", stored.Now)
	}
	var base *rundir.Run
	if in.Baseline != "" {
		if base, err = rundir.Load(in.Baseline); err != nil {
			return Result{}, fmt.Errorf("its baseline cannot be read again: %v", err)
		}
		if base.Digest != in.BaselineRecord {
			return Result{}, fmt.Errorf("its baseline %s holds another record (%s) than it was decided with (%s)", in.Baseline, base.Digest, in.BaselineRecord)
		}
	}
	policy := in.Policy
	again, err := Decide(Input{Policy: &policy, PolicyFile: stored.PolicyFile, Run: run, Baseline: base, Now: now, WindowsBuilds: in.WindowsBuilds})
	if err != nil {
		return Result{}, fmt.Errorf("deciding it again from its inputs: %v", err)
	}
	if !sameDecision(stored, again) {
		return Result{}, fmt.Errorf("it says %s, and deciding again from its own inputs says %s: it does not follow from this record", stored.Decision, again.Decision)
	}
	return again, nil
}

// sameDecision compares what two results decided: the verdict, the
// reasons and every item.
func sameDecision(a, b Result) bool {
	key := func(r Result) string {
		data, _ := json.Marshal(struct {
			Decision      string
			Reasons       []string
			Items         []Item
			Required, Met int
		}{r.Decision, r.Reasons, r.Items, r.Required, r.Met})
		return string(data)
	}
	return key(a) == key(b)
}
