// Package verdicts holds the decisions the specs make from what they
// observed: a pod's status and events, a command's output and exit status,
// an error, the kubelet's figures. The specs gather the observations and
// call these functions, so that every decision is tested here on what a
// Windows node says, including what it says when things go wrong.
//
// A documented limitation is decided by an Observation: Limited or Works
// from a measurement on a running pod (or another positive signature the
// node gave), else Unobserved, with the reason nothing decided: a timeout,
// an error, a pod that never started.
package verdicts

import (
	"fmt"

	"github.com/winconform/winconform/framework/ledger"
)

// Observation is what a spec saw of a documented limitation: the behaviour
// and what showed it, or Unobserved and why nothing did.
type Observation struct {
	Behaviour ledger.Behaviour
	Evidence  string
}

// Limited is an observation that the limitation holds.
func Limited(format string, a ...any) Observation {
	return Observation{ledger.Limited, fmt.Sprintf(format, a...)}
}

// Works is an observation that the limitation does not hold.
func Works(format string, a ...any) Observation {
	return Observation{ledger.Works, fmt.Sprintf(format, a...)}
}

// Unobserved is no observation: why says what kept the spec from one.
func Unobserved(format string, a ...any) Observation {
	return Observation{ledger.Unobserved, fmt.Sprintf(format, a...)}
}

// Apply sets e's observation to o.
func (o Observation) Apply(e *ledger.Entry) {
	e.Observed, e.Evidence = o.Behaviour, o.Evidence
}
