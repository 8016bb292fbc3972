package windows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/internal/text"
)

// Timeouts bound the work on a machine. A zero field takes its default
// (DefaultTimeouts).
type Timeouts struct {
	// Steps bounds one run of each step's script, by step name
	// (preflight, containerd...); the step table has the defaults.
	Steps map[string]time.Duration
	// Reboot bounds the wait for a machine to answer again after a reboot
	// (or a connection lost during a step).
	Reboot time.Duration
	// RebootPoll is the first pause between polls during that wait; it
	// grows by half each time, up to RebootPollMax.
	RebootPoll, RebootPollMax time.Duration
	// Ping bounds one poll.
	Ping time.Duration
	// NodeReady bounds the wait for the node to register and turn Ready;
	// NodePoll is the pause between looks.
	NodeReady, NodePoll time.Duration
	// Drain bounds the eviction of the node's pods on reset.
	Drain time.Duration
	// PodStart bounds the wait for the check's pod to run on a joined
	// node (polled every NodePoll).
	PodStart time.Duration
}

// DefaultTimeouts are the timeouts for real machines: each step's from the
// step table, and the waits around them.
func DefaultTimeouts() Timeouts {
	steps := map[string]time.Duration{}
	for _, s := range stepTable() {
		if s.script {
			steps[s.name] = s.timeout
		}
	}
	timeout := func(name string) time.Duration {
		s, _ := stepNamed(name)
		return s.timeout
	}
	return Timeouts{
		Steps:         steps,
		Reboot:        15 * time.Minute,
		RebootPoll:    5 * time.Second,
		RebootPollMax: 30 * time.Second,
		Ping:          timeout(StepPing),
		NodeReady:     timeout(StepNode),
		NodePoll:      2 * time.Second,
		Drain:         timeout(StepDrain),
		PodStart:      timeout(StepPod),
	}
}

// withDefaults fills the zero fields.
func (t Timeouts) withDefaults() Timeouts {
	d := DefaultTimeouts()
	steps := d.Steps
	for k, v := range t.Steps {
		if v > 0 {
			steps[k] = v
		}
	}
	t.Steps = steps
	for _, f := range []struct{ v, def *time.Duration }{
		{&t.Reboot, &d.Reboot}, {&t.RebootPoll, &d.RebootPoll}, {&t.RebootPollMax, &d.RebootPollMax},
		{&t.Ping, &d.Ping}, {&t.NodeReady, &d.NodeReady}, {&t.NodePoll, &d.NodePoll}, {&t.Drain, &d.Drain},
		{&t.PodStart, &d.PodStart},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return t
}

func (t Timeouts) step(name string) time.Duration {
	if d, ok := t.Steps[name]; ok {
		return d
	}
	return 5 * time.Minute
}

// Duration is a time.Duration that encodes in JSON as "1.5s".
type Duration time.Duration

// MarshalJSON writes the duration as a string, rounded to the millisecond.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).Round(time.Millisecond).String())
}

// UnmarshalJSON reads a string such as "1.5s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// StepReport is what one step did.
type StepReport struct {
	// Name is the step; Component the node service it sets up, for the
	// steps of the documented order (runtime, kubelet, kube-proxy, cni).
	Name      string `json:"name"`
	Component string `json:"component,omitempty"`
	// Changed is true when the step changed the machine (or the node).
	Changed bool `json:"changed"`
	// Skipped is true when the step did not apply (SkipReason says why).
	Skipped    bool   `json:"skipped,omitempty"`
	SkipReason string `json:"skipReason,omitempty"`
	// Rebooted is true when the machine rebooted for the step.
	Rebooted bool `json:"rebooted,omitempty"`
	// Attempts counts the runs of the step's script.
	Attempts int       `json:"attempts"`
	Started  time.Time `json:"started"`
	Duration Duration  `json:"duration"`
	// Output is what the step printed, its status line aside (stderr
	// follows stdout).
	Output string `json:"output,omitempty"`
	// Status is the step's status line, decoded.
	Status map[string]any `json:"status,omitempty"`
	// Error is the step's failure, if any.
	Error string `json:"error,omitempty"`
}

// status is a step's JSON status line.
type status struct {
	Step          string `json:"step"`
	Changed       bool   `json:"changed"`
	RestartNeeded bool   `json:"restartNeeded"`
	fields        map[string]any
}

func (s status) str(key string) string {
	if v, ok := s.fields[key].(string); ok {
		return v
	}
	return ""
}

// list returns a list of strings of the status ("" for an item that is
// none).
func (s status) list(key string) []string {
	items, _ := s.fields[key].([]any)
	out := make([]string, 0, len(items))
	for _, v := range items {
		str, _ := v.(string)
		out = append(out, str)
	}
	return out
}

func (s status) flag(key string) bool {
	v, _ := s.fields[key].(bool)
	return v
}

// parseStatus reads the last non-empty line of a step's stdout, which must
// be its JSON status, and returns it with the output before it.
func parseStatus(stdout, step string) (status, string, error) {
	out := strings.TrimRight(strings.ReplaceAll(stdout, "\r\n", "\n"), "\n \t")
	i := strings.LastIndexByte(out, '\n')
	last, before := out[i+1:], ""
	if i >= 0 {
		before = out[:i]
	}
	last = strings.TrimSpace(last)
	var st status
	if err := json.Unmarshal([]byte(last), &st.fields); err != nil || st.fields == nil {
		return st, out, fmt.Errorf("the last line of its output is not its JSON status: %q", shorten(last, 200))
	}
	_ = json.Unmarshal([]byte(last), &st)
	if st.Step != step {
		return st, out, fmt.Errorf("its status line is for step %q", st.Step)
	}
	return st, before, nil
}

func shorten(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// runner runs steps on one machine.
type runner struct {
	machine  string
	exec     remote.Exec
	t        Timeouts
	retries  int
	log      io.Writer
	bootTime string
	reboots  int
	// answered is set once the machine has run a step in this run: only
	// then can a lost connection mean a reboot.
	answered bool
}

func (r *runner) logf(format string, args ...any) {
	if r.log != nil {
		fmt.Fprintf(r.log, r.machine+": "+format+"\n", args...)
	}
}

// lostConnection reports whether err means the machine stopped answering
// (it may be rebooting): the connection broke or could not be made.
func lostConnection(err error) bool {
	return errors.Is(err, remote.ErrConnLost) || errors.Is(err, remote.ErrUnreachable)
}

// attempt runs a step's script once, within the step's timeout.
func (r *runner) attempt(ctx context.Context, name, script string) (remote.Result, error) {
	sctx, cancel := context.WithTimeout(ctx, r.t.step(name))
	defer cancel()
	return r.exec.RunPS(sctx, name, script)
}

// stepParams gives a step's parameters for one attempt. A step run again
// after its connection dropped is given them anew: one that says what the
// cluster holds (kubeadm-join's NodeExists) may have changed under the
// dropped attempt, which may have done its work before the drop.
type stepParams func(ctx context.Context) ([]Param, error)

// fixed is the parameters of a step that reads nothing of the cluster.
func fixed(p []Param) stepParams {
	return func(context.Context) ([]Param, error) { return p, nil }
}

// runStep runs a step's script and parses its status. When the connection
// drops during the step (the machine may be rebooting, or a new HNS network
// cut it), it waits for the machine to answer again and runs the step again
// (steps are idempotent), rendered with its parameters as they are then, at
// most r.retries times. rep receives the attempts, the output and the
// status.
func (r *runner) runStep(ctx context.Context, rep *StepReport, name string, params stepParams) (status, error) {
	for {
		p, err := params(ctx)
		if err != nil {
			return status{}, err
		}
		script, err := RenderScript(name, p)
		if err != nil {
			return status{}, err
		}
		rep.Attempts++
		res, err := r.attempt(ctx, name, script)
		if err != nil {
			rep.Output = joinOutput(res.Stdout, res.StderrText())
			switch {
			case ctx.Err() != nil:
				return status{}, &StepError{Machine: r.machine, Step: name, Kind: ctx.Err(), Detail: "cancelled", ExitCode: -1, Err: err}
			case errors.Is(err, remote.ErrTimeout) && !errors.Is(err, remote.ErrUnreachable):
				return status{}, &StepError{Machine: r.machine, Step: name, Kind: ErrStepTimeout, ExitCode: -1, Err: err,
					Detail: fmt.Sprintf("did not finish within %s", r.t.step(name)), Output: text.LastLines(rep.Output, 20)}
			case lostConnection(err) && !r.answered:
				// A machine that has not answered once in this run is not
				// rebooting: it cannot be reached, and waiting will not help.
				return status{}, &StepError{Machine: r.machine, Step: name, Kind: remote.ErrUnreachable, ExitCode: -1, Err: err,
					Detail: "the machine did not answer: check its address, the WinRM port and listener, and the firewall between"}
			case lostConnection(err) && rep.Attempts <= r.retries:
				r.logf("%s: the connection dropped (%v); waiting for the machine to answer, then running the step again", name, err)
				if werr := r.waitForMachine(ctx, name, false); werr != nil {
					return status{}, werr
				}
				continue
			case lostConnection(err):
				return status{}, &StepError{Machine: r.machine, Step: name, Kind: ErrConnectionLost, ExitCode: -1, Err: err,
					Detail: fmt.Sprintf("the connection dropped during the step, %d times", rep.Attempts)}
			}
			return status{}, &StepError{Machine: r.machine, Step: name, Kind: ErrStepFailed, ExitCode: -1, Err: err, Detail: "could not run"}
		}
		r.answered = true
		if res.ExitCode != 0 {
			rep.Output = joinOutput(res.Stdout, res.StderrText())
			return status{}, &StepError{Machine: r.machine, Step: name, Kind: ErrStepFailed, ExitCode: res.ExitCode,
				Detail: fmt.Sprintf("its script exited with code %d", res.ExitCode), Output: text.LastLines(rep.Output, 20)}
		}
		st, before, err := parseStatus(res.Stdout, name)
		rep.Output = joinOutput(before, res.StderrText())
		if err != nil {
			return status{}, &StepError{Machine: r.machine, Step: name, Kind: ErrBadStatus, ExitCode: 0, Detail: err.Error(), Output: text.LastLines(rep.Output, 20)}
		}
		rep.Status = st.fields
		return st, nil
	}
}

func joinOutput(stdout, stderr string) string {
	stdout = strings.TrimRight(strings.ReplaceAll(stdout, "\r\n", "\n"), "\n")
	stderr = strings.TrimRight(strings.ReplaceAll(stderr, "\r\n", "\n"), "\n")
	switch {
	case stderr == "":
		return stdout
	case stdout == "":
		return stderr
	}
	return stdout + "\n" + stderr
}

// runSettled is runStep, and, when the step asks for a reboot, the reboot
// and a second run, which must report no change and no further reboot.
func (r *runner) runSettled(ctx context.Context, rep *StepReport, name string, params stepParams) (status, error) {
	st, err := r.runStep(ctx, rep, name, params)
	if err != nil || !st.RestartNeeded {
		return st, err
	}
	r.logf("%s: the machine needs a reboot", name)
	if err := r.reboot(ctx, name); err != nil {
		return st, err
	}
	rep.Rebooted = true
	first := st
	st, err = r.runStep(ctx, rep, name, params)
	if err != nil {
		return st, err
	}
	if st.Changed || st.RestartNeeded {
		return st, &StepError{Machine: r.machine, Step: name, Kind: ErrNotSettled,
			Detail: fmt.Sprintf("after the reboot it still reports changed=%t restartNeeded=%t", st.Changed, st.RestartNeeded)}
	}
	st.Changed = first.Changed
	return st, nil
}

// reboot restarts the machine and waits until it answers with a new boot
// time.
func (r *runner) reboot(ctx context.Context, forStep string) error {
	script, err := RenderScript(StepReboot, nil)
	if err != nil {
		return err
	}
	r.reboots++
	r.logf("%s: rebooting the machine", forStep)
	if _, err := r.attempt(ctx, StepReboot, script); err != nil && !lostConnection(err) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A reboot that takes the machine down before it answers looks
		// like a timeout too; anything else is a failure.
		if !errors.Is(err, remote.ErrTimeout) {
			return &StepError{Machine: r.machine, Step: forStep, Kind: ErrStepFailed, ExitCode: -1, Err: err, Detail: "the reboot it needs failed"}
		}
	}
	return r.waitForMachine(ctx, forStep, true)
}

// waitForMachine polls the machine with the ping step, pausing longer each
// time, until it answers (with a boot time other than the last one known,
// when newBoot), or the reboot timeout passes.
func (r *runner) waitForMachine(ctx context.Context, forStep string, newBoot bool) error {
	script, err := RenderScript(StepPing, nil)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, r.t.Reboot)
	defer cancel()
	started := time.Now()
	// Pauses from RebootPoll, half as long again each time, up to
	// RebootPollMax (Steps: a DelayFunc keeps the last delay once they run out).
	pause := wait.Backoff{Duration: r.t.RebootPoll, Factor: 1.5, Cap: r.t.RebootPollMax, Steps: math.MaxInt32}.DelayFunc()
	last := "no answer yet"
	err = pause.Until(wctx, true, true, func(wctx context.Context) (bool, error) {
		pctx, pcancel := context.WithTimeout(wctx, r.t.Ping)
		res, err := r.exec.RunPS(pctx, StepPing, script)
		pcancel()
		switch {
		case err == nil && res.ExitCode == 0:
			st, _, perr := parseStatus(res.Stdout, StepPing)
			bt := st.str("bootTime")
			switch {
			case perr != nil:
				last = perr.Error()
			case newBoot && bt != "" && bt == r.bootTime:
				last = "the machine answers but has not rebooted yet (boot time " + bt + ")"
			default:
				r.bootTime = bt
				r.logf("%s: the machine answers again after %s", forStep, time.Since(started).Round(time.Millisecond))
				return true, nil
			}
		case err == nil:
			last = fmt.Sprintf("the ping script exited with code %d", res.ExitCode)
		case errors.Is(err, remote.ErrAuth), errors.Is(err, remote.ErrTLS):
			return false, &StepError{Machine: r.machine, Step: forStep, Kind: ErrRebootTimeout, ExitCode: -1, Err: err,
				Detail: "the machine answers again, but refuses the harness"}
		default:
			last = err.Error()
		}
		return false, nil
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case wctx.Err() != nil && errors.Is(err, wctx.Err()):
		return &StepError{Machine: r.machine, Step: forStep, Kind: ErrRebootTimeout, ExitCode: -1,
			Detail: fmt.Sprintf("the machine did not answer over WinRM again within %s (last: %s); check it is up and its WinRM listener starts at boot", r.t.Reboot, last)}
	}
	return err
}
