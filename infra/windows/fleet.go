package windows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/internal/text"
)

// Conn is a machine's remote exec with its transcript, what JoinAll and
// ResetAll work through; *remote.WinRM is one.
type Conn interface {
	remote.Exec
	// WriteTranscript writes every step run so far, secrets redacted, to
	// dir.
	WriteTranscript(dir string) error
}

// FleetOptions are how JoinAll and ResetAll run.
type FleetOptions struct {
	// Artifacts, when set, receives each machine's report and WinRM
	// transcript (<Artifacts>/<machine>/), and the logs of each machine
	// that fails to join (<Artifacts>/logs/<machine>/). The machine's
	// password and the bootstrap tokens are redacted from all of them.
	Artifacts string
	// CollectLogs makes JoinAll collect the logs of every machine it
	// joins, not only of those that fail (with Artifacts).
	CollectLogs bool
	// Log receives progress lines; nil for none.
	Log io.Writer
	// Timeouts and ConnRetries are as in JoinOptions.
	Timeouts    Timeouts
	ConnRetries int
	// Registry is as in JoinOptions.
	Registry ImageRegistry
	// Connect reaches a machine; the caller closes what it returns. Nil:
	// over WinRM (RemoteConfig), each connection closed once its machine
	// is done.
	Connect func(config.Machine) (Conn, error)
	// UnderlayRoutes are each machine's routes to the kind network, by
	// machine (JoinOptions.UnderlayRoutes, ResetOptions.UnderlayRoutes).
	UnderlayRoutes map[string][]UnderlayRoute
}

// MachineResult is what JoinAll or ResetAll did to one machine: its report
// (nil when the step could not start) and its error.
type MachineResult[R any] struct {
	Machine string
	Report  R
	Err     error
}

// JoinResult is one machine's part of JoinAll.
type JoinResult = MachineResult[*JoinReport]

// ResetResult is one machine's part of ResetAll.
type ResetResult = MachineResult[*ResetReport]

// FleetError is the failure of JoinAll or ResetAll: the machines that
// failed (each one's error is in its result, and errors.Is-able here).
type FleetError struct {
	// Outcome says what the machines did not do: "did not join", "were
	// not reset".
	Outcome string
	// Failed are the machines that failed, of Total.
	Failed []string
	Total  int
	Errs   []error
}

// Error reads "1 of 2 machines did not join: win-b".
func (e *FleetError) Error() string {
	return fmt.Sprintf("%d of %d machines %s: %s", len(e.Failed), e.Total, e.Outcome, strings.Join(e.Failed, ", "))
}

// Unwrap returns each machine's error.
func (e *FleetError) Unwrap() []error { return e.Errs }

// JoinAll joins the machines to the cluster one after the other (Join).
// It saves each machine's report (join-report.json) and transcript under
// opts.Artifacts, and the logs of a machine that fails (of every machine,
// with opts.CollectLogs). A machine that fails does not stop the others,
// unless ctx ends. The error is a *FleetError naming the machines that did
// not join, or the failure to connect to one. First it checks every
// machine's versions against the cluster (ResolveVersions): when any is
// refused it touches no machine, and the error is a *VersionsError.
func JoinAll(ctx context.Context, machines []config.Machine, cp ControlPlane, opts FleetOptions) ([]JoinResult, error) {
	if err := checkFleetVersions(machines, cp.KubernetesVersion()); err != nil {
		return nil, err
	}
	logs := ""
	if opts.Artifacts != "" {
		logs = filepath.Join(opts.Artifacts, "logs")
	}
	return eachMachine(ctx, machines, opts, fleetOp[*JoinReport]{
		verb: "join", outcome: "did not join", file: "join-report.json", stopWhenCancelled: true,
		run: func(ctx context.Context, m config.Machine, exec Conn) (*JoinReport, error) {
			rep, err := Join(ctx, m, exec, cp, JoinOptions{Timeouts: opts.Timeouts, ConnRetries: opts.ConnRetries, Log: opts.Log, LogsDir: logs, Registry: opts.Registry,
				UnderlayRoutes: opts.UnderlayRoutes[m.Name]})
			if err == nil && opts.CollectLogs && logs != "" {
				if lerr := CollectLogs(ctx, exec, logs); lerr != nil {
					fprintf(opts.Log, "%s: collecting logs: %v\n", m.Name, lerr)
				}
			}
			return rep, err
		},
		logsDir: func(rep *JoinReport) string {
			if rep == nil {
				return ""
			}
			return rep.LogsDir
		},
	})
}

// ResetAll resets the machines one after the other (Reset), and saves each
// one's report (reset-report.json) and transcript under opts.Artifacts. A
// machine that fails does not stop the others. The error is a *FleetError
// naming the machines that were not reset, or the failure to connect to
// one.
func ResetAll(ctx context.Context, machines []config.Machine, cp ControlPlane, opts FleetOptions) ([]ResetResult, error) {
	return eachMachine(ctx, machines, opts, fleetOp[*ResetReport]{
		verb: "reset", outcome: "were not reset", file: "reset-report.json",
		run: func(ctx context.Context, m config.Machine, exec Conn) (*ResetReport, error) {
			return Reset(ctx, m, exec, cp, ResetOptions{Timeouts: opts.Timeouts, ConnRetries: opts.ConnRetries, Log: opts.Log, UnderlayRoutes: opts.UnderlayRoutes[m.Name]})
		},
	})
}

// fleetOp is what JoinAll or ResetAll does to each machine.
type fleetOp[R any] struct {
	// verb and outcome go in the messages: "win-a: join failed: ...",
	// "1 of 2 machines did not join: win-a".
	verb, outcome string
	// file is the report's name in the machine's artifacts.
	file string
	// stopWhenCancelled: no machine is tried once ctx has ended.
	stopWhenCancelled bool
	run               func(context.Context, config.Machine, Conn) (R, error)
	// logsDir, when set, says where a failed machine's logs went.
	logsDir func(R) string
}

func eachMachine[R any](ctx context.Context, machines []config.Machine, opts FleetOptions, op fleetOp[R]) ([]MachineResult[R], error) {
	var results []MachineResult[R]
	fe := &FleetError{Outcome: op.outcome, Total: len(machines)}
	for _, m := range machines {
		exec, done, err := opts.connect(m)
		if err != nil {
			return results, err
		}
		rep, err := op.run(ctx, m, exec)
		results = append(results, MachineResult[R]{Machine: m.Name, Report: rep, Err: err})
		if serr := opts.save(m.Name, op.file, rep, exec); serr != nil {
			fprintf(opts.Log, "%s: %v\n", m.Name, serr)
		}
		done()
		if err == nil {
			continue
		}
		fprintf(opts.Log, "%s: %s failed: %v\n", m.Name, op.verb, err)
		if op.logsDir != nil {
			if dir := op.logsDir(rep); dir != "" {
				fprintf(opts.Log, "%s: its logs are in %s\n", m.Name, filepath.Join(dir, text.FileName(m.Name)))
			}
		}
		fe.Failed = append(fe.Failed, m.Name)
		fe.Errs = append(fe.Errs, err)
		if op.stopWhenCancelled && ctx.Err() != nil {
			break
		}
	}
	if len(fe.Failed) > 0 {
		return results, fe
	}
	return results, nil
}

// connect reaches m, and returns what to call when done with it.
func (o FleetOptions) connect(m config.Machine) (Conn, func(), error) {
	if o.Connect != nil {
		c, err := o.Connect(m)
		return c, func() {}, err
	}
	w, err := remote.NewWinRM(RemoteConfig(m))
	if err != nil {
		return nil, nil, err
	}
	return w, func() { _ = w.Close() }, nil
}

// save writes a machine's report (as JSON) and its transcript to
// <Artifacts>/<machine>/; nothing without Artifacts.
func (o FleetOptions) save(machine, file string, report any, exec Conn) error {
	if o.Artifacts == "" {
		return nil
	}
	dir := filepath.Join(o.Artifacts, text.FileName(machine))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(report, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, file), append(data, '\n'), 0o644)
	}
	return errors.Join(err, exec.WriteTranscript(dir))
}

func fprintf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}
