package simmachine_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
	"github.com/winconform/winconform/testing/steptest"
	"github.com/winconform/winconform/testing/wsmantest"
)

// run sends a step's script, rendered as the harness renders it, to m.
func run(t *testing.T, m *simmachine.Machine, step string, params map[string]string) wsmantest.Reply {
	t.Helper()
	var ps []windows.Param
	for k, v := range params {
		ps = append(ps, windows.Param{Name: k, Value: v})
	}
	script, err := windows.RenderScript(step, ps)
	if err != nil {
		t.Fatal(err)
	}
	return m.Handler()(&wsmantest.Call{Script: script, PowerShell: true})
}

// placeholder stands for "*" (any present value) when the test sets a fact.
const placeholder = "present"

// TestAnswersAsTheDataSays puts the machine in each case's state and checks
// that it answers as the case says: the simulated machine has no answer of
// its own. A case an earlier one also fits (one that differs only in the
// world it needs, such as a download that serves the wrong file) is the
// earlier one's to the simulated machine, which has no such world: it is
// skipped, saying which.
func TestAnswersAsTheDataSays(t *testing.T) {
	for _, name := range steptest.Names() {
		data, err := steptest.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range data.Cases {
			t.Run(name+"/"+c.Name, func(t *testing.T) {
				if c.World["kubeadm:reset"] == "fails" {
					t.Skip("the simulated kubeadm reset always works")
				}
				p := data.ParamsFor(c)
				if name == "containerd" {
					if p, err = simmachine.ContainerdStepParams(data, c); err != nil {
						t.Fatal(err)
					}
				}
				m := simmachine.New(simmachine.Config{ContainersInstalled: true})
				if c.World["kubeadm:join"] == "fails" {
					m.FailJoin = []string{"error execution phase preflight: couldn't validate the identity of the API Server"}
				}
				given, err := steptest.ExpandMap(c.Given, p, m.Fact)
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range given {
					if v == "*" {
						v = placeholder
					}
					m.SetFact(k, v)
				}
				if j := firstFit(t, data, i, p, m.Fact); j < i {
					t.Skipf("the simulated machine takes case %q here", data.Cases[j].Name)
				}
				before := map[string]string{}
				for k := range given {
					before[k] = m.Fact(k)
				}
				sets, err := steptest.ExpandMap(c.Sets, p, m.Fact)
				if err != nil {
					t.Fatal(err)
				}
				reply := run(t, m, name, p)
				if probs := m.Problems(); len(probs) > 0 {
					t.Fatalf("problems: %v", probs)
				}
				switch {
				case c.Reboots:
					if !reply.Drop || m.Reboots() != 1 {
						t.Errorf("the step did not restart the machine: %+v", reply)
					}
					return
				case c.Error != "":
					want, _ := steptest.Expand(c.Error, p, m.Fact)
					if reply.ExitCode != 1 || !strings.Contains(reply.Stderr, want) {
						t.Errorf("exit code %d, stderr %q; want 1 and %q", reply.ExitCode, reply.Stderr, want)
					}
					return
				}
				if reply.ExitCode != c.ExitCode {
					t.Errorf("exit code %d, want %d", reply.ExitCode, c.ExitCode)
				}
				lines := strings.Split(strings.TrimRight(reply.Stdout, "\r\n"), "\r\n")
				var status map[string]any
				if err := json.Unmarshal([]byte(lines[len(lines)-1]), &status); err != nil {
					t.Fatalf("no status line: %q", reply.Stdout)
				}
				if status["step"] != name || status["changed"] != c.Changed {
					t.Errorf("status %v, want step %s changed %t", status, name, c.Changed)
				}
				if c.RestartNeeded != nil && status["restartNeeded"] != *c.RestartNeeded {
					t.Errorf("restartNeeded %v, want %t", status["restartNeeded"], *c.RestartNeeded)
				}
				for k, v := range c.Status {
					want, err := steptest.ExpandValue(v, p, func(key string) string { return before[key] })
					if err != nil {
						t.Fatal(err)
					}
					if fmt.Sprint(status[k]) != fmt.Sprint(want) {
						t.Errorf("status %s = %v, want %v", k, status[k], want)
					}
				}
				for _, l := range c.Says {
					want, _ := steptest.Expand(l, p, func(key string) string { return before[key] })
					if !strings.Contains(reply.Stdout, strings.ReplaceAll(want, "\n", "\r\n")) {
						t.Errorf("output %q lacks %q", reply.Stdout, want)
					}
				}
				after := map[string]string{}
				for k, v := range before {
					after[k] = v
				}
				for k, v := range sets {
					if v == "*" {
						v = m.Fact(k)
					}
					after[k] = v
				}
				for k, want := range after {
					if got := m.Fact(k); got != want {
						t.Errorf("after the step %s is %q, want %q", k, got, want)
					}
				}
			})
		}
	}
}

// firstFit returns the first case of data that fits the machine (facts)
// with parameters p, up to case i (i when none before it does).
func firstFit(t *testing.T, data *steptest.Step, i int, p map[string]string, facts steptest.Facts) int {
	t.Helper()
	c := data.Cases[i]
	for j, e := range data.Cases[:i] {
		fits := true
		for k, v := range e.Params {
			fits = fits && p[k] == v
		}
		eg, err := steptest.ExpandMap(e.Given, p, facts)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range eg {
			fits = fits && steptest.Matches(v, facts(k))
		}
		if w, ok := e.World["kubeadm:join"]; ok && w != orDefault(c.World["kubeadm:join"], "ok") {
			fits = false
		}
		if fits {
			return j
		}
	}
	return i
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

func TestAStateNoCaseDescribesIsAProblem(t *testing.T) {
	m := simmachine.New(simmachine.Config{ContainersInstalled: true})
	// A kubelet.exe of another version, but no kubeadm.exe: no case of
	// kubelet.json says what the script does there.
	m.SetFact("service:containerd", "Automatic/Running")
	m.SetFact(`file:C:\k\kubelet.exe`, "v1.30.0")
	data, _ := steptest.Load("kubelet")
	reply := run(t, m, "kubelet", data.Params)
	if reply.ExitCode != 1 || !strings.Contains(reply.Stderr, "no case of kubelet.json fits") {
		t.Errorf("reply %+v", reply)
	}
	if p := m.Problems(); len(p) != 1 || !strings.Contains(p[0], `file:C:\k\kubelet.exe="v1.30.0"`) {
		t.Errorf("problems %v, want one naming the facts", p)
	}
}

func TestRebootCompletesWhatWindowsCompletes(t *testing.T) {
	m := simmachine.New(simmachine.Config{})
	m.SetFact("service:containerd", "Automatic/Running")
	m.SetFact("service:kubelet", "Manual/Running")
	boot := m.BootTime()
	if r := run(t, m, "containers-feature", nil); r.ExitCode != 0 || m.Feature("Containers") != "InstallPending" {
		t.Fatalf("containers-feature: %+v, feature %s", r, m.Feature("Containers"))
	}
	if r := run(t, m, "reboot", nil); !r.Drop {
		t.Fatalf("reboot answered %+v", r)
	}
	for m.Intercept()(wsmantest.Request{}).Drop {
	}
	got := map[string]string{"feature": m.Feature("Containers"), "containerd": m.Fact("service:containerd"), "kubelet": m.Fact("service:kubelet")}
	want := map[string]string{"feature": "Installed", "containerd": "Automatic/Running", "kubelet": "Manual/Stopped"}
	if !reflect.DeepEqual(got, want) || m.BootTime() == boot {
		t.Errorf("after the reboot %v (boot time %s, before %s), want %v and a new boot time", got, m.BootTime(), boot, want)
	}
}

func TestParamsOtherThanTheScriptsAreAProblem(t *testing.T) {
	m := simmachine.New(simmachine.Config{})
	script := "# winconform-step: firewall\n# parameters (generated by winconform):\n$StepName = 'firewall'\n$RuleName = 'r'\n# end of parameters\nSet-StrictMode -Version Latest\n$ErrorActionPreference = 'Stop'\n# step firewall\n"
	r := m.Handler()(&wsmantest.Call{Script: script})
	if r.ExitCode != 1 || len(m.Problems()) != 1 || !strings.Contains(m.Problems()[0], "got parameters") {
		t.Errorf("reply %+v, problems %v", r, m.Problems())
	}
}

// The simulated kubeadm join is kubeadm's own code on the files the step
// is given: files kubeadm refuses fail the join here as they would on a
// machine, with kubeadm's message, and the harness is told (a problem).
// The files below are the kubeadm-join step's example but for the
// JoinConfiguration's discovery file, named by its Windows path as the
// PowerShell step once wrote it, which kubeadm takes for a URL.
func TestSimulatedKubeadmJoinIsKubeadmsJudgement(t *testing.T) {
	data, err := steptest.Load("kubeadm-join")
	if err != nil {
		t.Fatal(err)
	}
	var join struct {
		Config string `json:"config"`
		Files  []struct {
			Name string `json:"name"`
			Data string `json:"data"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(data.Params["JoinFiles"]), &join); err != nil {
		t.Fatal(err)
	}
	for i, f := range join.Files {
		if f.Name == join.Config {
			join.Files[i].Data = strings.Replace(f.Data, "kubeConfigPath: discovery.conf", `kubeConfigPath: C:\winconform\join\discovery.conf`, 1)
		}
	}
	broken, err := json.Marshal(join)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		files   string
		refused bool
	}{{data.Params["JoinFiles"], false}, {string(broken), true}} {
		m := simmachine.New(simmachine.Config{ContainersInstalled: true})
		for k, v := range map[string]string{
			"service:containerd": "Automatic/Running", `file:C:\k\kubeadm.exe`: "v1.37.2", `file:C:\k\kubelet.exe`: "v1.37.2",
			`path:C:\k`: "present", "service:kubelet": "Manual/Stopped",
		} {
			m.SetFact(k, v)
		}
		p := data.ParamsFor(steptest.Case{})
		p["Mode"], p["JoinFiles"] = "join", c.files
		m.SetFact("service-command:kubelet", p["KubeletCommand"]+" --hostname-override="+p["NodeName"]+" --node-ip="+p["NodeIP"])
		reply := run(t, m, "kubeadm-join", p)
		probs := fmt.Sprint(m.Problems())
		refused := strings.Contains(probs, "kubeadm refused the join's files")
		if refused != c.refused {
			t.Errorf("kubeadm refused: %v, want %v; problems %s", refused, c.refused, probs)
		}
		if c.refused && (reply.ExitCode == 0 || !strings.Contains(reply.Stdout, "if a URL is used, the scheme must be https")) {
			t.Errorf("the join of files kubeadm refuses: exit code %d, output %q", reply.ExitCode, reply.Stdout)
		}
		if !c.refused && reply.ExitCode != 0 {
			t.Errorf("the join of the example's files: exit code %d, output %q", reply.ExitCode, reply.Stdout)
		}
	}
}

// What HNS's virtual switch does to the host's routes (routes.go): the
// default route moves to vEthernet; a persistent route of the registry's
// (route -p, no interface) is put back there, on the adapter that reaches
// its gateway; one bound to the physical adapter (New-NetRoute's
// persistent store) is not active any more (Microsoft KB2966111), nor is a
// route that was not persistent.
func TestVirtualSwitchKeepsOnlyUnboundPersistentRoutes(t *testing.T) {
	m := simmachine.New(simmachine.Config{ContainersInstalled: true})
	m.SetFact("route:0.0.0.0/0", "Ethernet via 192.0.2.1")
	m.SetFact("route:172.18.0.0/16", "Ethernet via 192.0.2.10 metric 211 persistent")
	m.SetFact("route:172.19.0.0/16", "Ethernet via 192.0.2.10 metric 211 persistent bound")
	m.SetFact("route:172.20.0.0/16", "Ethernet via 192.0.2.10 metric 211")
	m.AddHNSNetwork("External")
	for dest, want := range map[string]string{
		"0.0.0.0/0":     "vEthernet (Ethernet) via 192.0.2.1",
		"172.18.0.0/16": "vEthernet (Ethernet) via 192.0.2.10 metric 211 persistent",
		"172.19.0.0/16": "",
		"172.20.0.0/16": "",
	} {
		if got := m.Route(dest); got != want {
			t.Errorf("route to %s after the virtual switch: %q, want %q", dest, got, want)
		}
	}
}
