package windows

import (
	"errors"
	"fmt"
	"strings"
)

// The named failures of Join and Reset. Every error they return is
// errors.Is-able against one of these, and, for a failure to reach the
// machine, against the remote package's class (remote.ErrAuth,
// remote.ErrUnreachable...) too.
var (
	// ErrBuildTooOld: the machine's Windows is older than any Kubernetes
	// supports for nodes.
	ErrBuildTooOld = errors.New("Windows build too old for Kubernetes")
	// ErrBuildMismatch: the machine's build is not the inventory's
	// expectedBuild.
	ErrBuildMismatch = errors.New("Windows build differs from the expected build")
	// ErrNotAdmin: the WinRM account is not an administrator.
	ErrNotAdmin = errors.New("WinRM account is not an administrator")
	// ErrNodeAddress: the machine has several routable addresses and the
	// inventory names none of them its node's (nodeIP).
	ErrNodeAddress = errors.New("several addresses and no nodeIP")
	// ErrStepFailed: a step's script failed (a non-zero exit code).
	ErrStepFailed = errors.New("step failed")
	// ErrStepTimeout: a step did not finish within its timeout.
	ErrStepTimeout = errors.New("step timed out")
	// ErrBadStatus: a step did not end with its JSON status line, or its
	// status asks for a reboot the step table says it never needs.
	ErrBadStatus = errors.New("step printed no status")
	// ErrConnectionLost: the connection dropped during a step, and retrying
	// did not help.
	ErrConnectionLost = errors.New("connection to the machine lost during a step")
	// ErrRebootTimeout: the machine did not answer over WinRM again within
	// the reboot timeout.
	ErrRebootTimeout = errors.New("machine did not come back")
	// ErrNotSettled: a step still changes something (or asks for another
	// reboot) right after the reboot it asked for.
	ErrNotSettled = errors.New("step did not settle after a reboot")
	// ErrKubeadmJoin: kubeadm join failed.
	ErrKubeadmJoin = errors.New("kubeadm join failed")
	// ErrJoinCommand: the control plane gave no usable join command.
	ErrJoinCommand = errors.New("no usable join command")
	// ErrCACertHash: the cluster's CA is not the one the join command pins.
	ErrCACertHash = errors.New("cluster CA does not match the CA certificate hash")
	// ErrNodeNotReady: the node did not turn Ready (as a Windows node) in time.
	ErrNodeNotReady = errors.New("node not Ready")
	// ErrBuildLabel: the node's node.kubernetes.io/windows-build label is
	// not the machine's build.
	ErrBuildLabel = errors.New("node's windows-build label differs from the machine's build")
	// ErrNodeUpdate: the inventory's labels or taints could not be applied.
	ErrNodeUpdate = errors.New("node labels or taints not applied")
	// ErrDrain: draining or deleting the node failed.
	ErrDrain = errors.New("node drain failed")
)

// StepError is a failure of one step on one machine.
type StepError struct {
	// Machine and Step say where.
	Machine, Step string
	// Kind is one of the named errors above.
	Kind error
	// Detail says what happened and, where there is one, the fix.
	Detail string
	// ExitCode is the script's exit code, -1 when it did not finish.
	ExitCode int
	// Output is the end of what the step printed (stdout, then stderr).
	Output string
	// Err is the cause (a *remote.Error, a Kubernetes API error...).
	Err error
}

// Error reads `machine win-a: step "containerd": <detail>: <cause>`, then
// the step's last lines of output, indented.
func (e *StepError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "machine %s: step %q: ", e.Machine, e.Step)
	detail := e.Detail
	if detail == "" && e.Kind != nil {
		detail = e.Kind.Error()
	}
	b.WriteString(detail)
	if e.Err != nil && !strings.Contains(detail, e.Err.Error()) {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if out := strings.TrimSpace(e.Output); out != "" {
		b.WriteString("\n    ")
		b.WriteString(strings.ReplaceAll(out, "\n", "\n    "))
	}
	return b.String()
}

// Unwrap returns the kind and the cause.
func (e *StepError) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.Kind, e.Err} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
