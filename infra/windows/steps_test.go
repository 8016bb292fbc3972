package windows

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/testing/steptest"
)

// The step table and the step data the Pester tests and the simulated
// machine share (scripts/steptest) describe the same steps: every step of
// the table that is a script has its script and its data, every script and
// every data file is a step of the table, and a step may ask for a reboot
// exactly when its data has a case that does.
func TestStepTableMatchesStepTestData(t *testing.T) {
	scripts, data := ScriptNames(), steptest.Names()
	seen := map[string]bool{}
	for _, s := range stepTable() {
		if seen[s.name] {
			t.Errorf("step %s is in the table twice", s.name)
		}
		seen[s.name] = true
		if !s.script {
			if slices.Contains(scripts, s.name) || slices.Contains(data, s.name) {
				t.Errorf("step %s runs in Go, but has a script or steptest data", s.name)
			}
			if s.mayReboot {
				t.Errorf("step %s runs in Go, but may reboot the machine", s.name)
			}
			continue
		}
		if !slices.Contains(scripts, s.name) {
			t.Errorf("step %s has no script scripts/%s.ps1", s.name, s.name)
		}
		d, err := steptest.Load(s.name)
		if err != nil {
			t.Errorf("step %s: %v", s.name, err)
			continue
		}
		asks, restarts := false, false
		for _, c := range d.Cases {
			asks = asks || c.RestartNeeded != nil && *c.RestartNeeded
			restarts = restarts || c.Reboots
		}
		if asks != s.mayReboot {
			t.Errorf("step %s: the table says mayReboot=%t, its steptest data has a case that asks for a reboot: %t", s.name, s.mayReboot, asks)
		}
		if restarts != (s.name == StepReboot) {
			t.Errorf("step %s: a case restarts the machine: %t; only %s does", s.name, restarts, StepReboot)
		}
	}
	for _, name := range scripts {
		if s, ok := stepNamed(name); !ok || !s.script {
			t.Errorf("script %s.ps1 is no scripted step of the table", name)
		}
		if _, err := loadScript(name); err != nil {
			t.Error(err)
		}
	}
	for _, name := range data {
		if s, ok := stepNamed(name); !ok || !s.script {
			t.Errorf("steptest/%s.json is for no scripted step of the table", name)
		}
	}
}

// Every step of Join and Reset does something and is bounded, and what it
// needs comes before it in its own table.
func TestStepTablesAreWellFormed(t *testing.T) {
	for table, steps := range map[string][]step{"join": joinTable, "reset": resetTable} {
		for i, s := range steps {
			if (s.run == nil) == (s.params == nil) {
				t.Errorf("%s step %s does nothing, or two things (its own run and a script's parameters)", table, s.name)
			}
			if s.params != nil && !s.script {
				t.Errorf("%s step %s has a script's parameters and no script", table, s.name)
			}
			if s.timeout <= 0 && s.name != StepDeleteNode {
				t.Errorf("%s step %s has no timeout", table, s.name)
			}
			for _, n := range s.needs {
				j := slices.IndexFunc(steps, func(e step) bool { return e.name == n.step })
				if j < 0 || j >= i || strings.TrimSpace(n.what) == "" {
					t.Errorf("%s step %s needs %s (%q), which is not an earlier step of its table, or says not what for", table, s.name, n.step, n.what)
				}
			}
		}
	}
	for _, s := range runnerSteps {
		if s.run != nil || s.params != nil || !s.script || s.timeout <= 0 {
			t.Errorf("runner step %s: a script with a timeout, run by the runner, is what it should be", s.name)
		}
	}
	d := DefaultTimeouts()
	for _, s := range stepTable() {
		if got := d.Steps[s.name]; s.script && got != s.timeout {
			t.Errorf("the default timeout of step %s is %s, the table says %s", s.name, got, s.timeout)
		}
	}
	if node, _ := stepNamed(StepNode); d.NodeReady != node.timeout {
		t.Errorf("NodeReady %s, the node step's timeout %s", d.NodeReady, node.timeout)
	}
	if pod, _ := stepNamed(StepPod); d.PodStart != pod.timeout {
		t.Errorf("PodStart %s, the pod step's timeout %s", d.PodStart, pod.timeout)
	}
	if drain, _ := stepNamed(StepDrain); d.Drain != drain.timeout {
		t.Errorf("Drain %s, the drain step's timeout %s", d.Drain, drain.timeout)
	}
	if want := []string{StepPreflight, StepContainersFeature, StepContainerd, StepCompartmentNS, StepKubelet, StepCrictl, StepImages, StepKubeProxy, StepCNI,
		StepFirewall, StepUnderlayRoute, StepMetadataRoute, StepDefender, StepProbe, StepKubeadmJoin, StepNode, StepPod}; !slices.Equal(JoinSteps(), want) {
		t.Errorf("JoinSteps() = %v, want the documented order %v", JoinSteps(), want)
	}
	if want := []string{StepDrain, StepDeleteNode, StepKubeadmReset, StepHNSCleanup, StepUnderlayUnroute}; !slices.Equal(ResetSteps(), want) {
		t.Errorf("ResetSteps() = %v, want %v", ResetSteps(), want)
	}
}

// A table whose step needs one that has not run stops there, before the
// step runs.
func TestRunTableChecksNeeds(t *testing.T) {
	ran := false
	table := []step{{name: "second", needs: []need{{"first", "what the first makes"}},
		run: func(*joinRun, context.Context, step, *StepReport) (bool, error) { ran = true; return true, nil }}}
	j := &joinRun{runner: &runner{machine: "m"}, report: &JoinReport{}}
	err := j.runTable(context.Background(), table)
	if err == nil || ran || !strings.Contains(err.Error(), "step second needs step first (what the first makes)") {
		t.Errorf("err = %v, ran %t; want the missing need named and the step not run", err, ran)
	}
}

// statusExec answers every step with the status line of that step.
type statusExec struct {
	status string
	steps  []string
}

func (e *statusExec) Name() string { return "m" }
func (e *statusExec) RunPS(_ context.Context, step, _ string) (remote.Result, error) {
	e.steps = append(e.steps, step)
	return remote.Result{Machine: "m", Step: step, Stdout: strings.ReplaceAll(e.status, "STEP", step) + "\n"}, nil
}

// Only a step the table says may reboot gets its reboot; another that asks
// for one fails, without a reboot.
func TestUnexpectedRebootRequestFails(t *testing.T) {
	exec := &statusExec{status: `{"step":"STEP","changed":true,"restartNeeded":true}`}
	r := &runner{machine: "m", exec: exec, t: Timeouts{}.withDefaults()}
	s, _ := stepNamed(StepFirewall)
	var sr StepReport
	_, err := r.runScript(context.Background(), s, &sr, fixed([]Param{{"RuleName", "r"}, {"Port", "1"}}))
	var se *StepError
	if !errors.As(err, &se) || !errors.Is(err, ErrBadStatus) || se.Step != StepFirewall || !strings.Contains(err.Error(), "asks for a reboot") {
		t.Fatalf("err = %v, want ErrBadStatus for step firewall, saying it asks for a reboot", err)
	}
	if !slices.Equal(exec.steps, []string{StepFirewall}) || sr.Attempts != 1 || sr.Rebooted {
		t.Errorf("ran %v, attempts %d, rebooted %t: want the step once and no reboot", exec.steps, sr.Attempts, sr.Rebooted)
	}
}
