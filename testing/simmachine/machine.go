// Package simmachine simulates a Windows machine for the tests of
// infra/windows. It plugs into wsmantest as its Handler and Intercept, so
// that the harness drives it through the real WinRM client, and it keeps
// what belongs to a machine rather than to the scripts:
//
//   - the transport's view of it: while it reboots it drops every request;
//     it can hang a step, drop the connection in the middle of one, or fail
//     one with an error of its own (Hang, RebootDuring, FailStep);
//   - what Windows does on its own: a reboot completes a pending feature
//     install, stops the running services and starts the automatic ones,
//     and changes the boot time; containerd cannot run without the
//     Containers feature; the service control manager keeps its own copy
//     of the services' configuration (scm.go); a WinRM shell inherits the
//     PATH the WinRM service started with (path.go); Windows PowerShell 5.1
//     cannot remove a tree holding a directory link (link.go);
//   - the world it reaches: kubeadm join asks the cluster (OnJoin, FailJoin);
//   - the harness's contract: a script it cannot read, parameters other
//     than the script's, the password in a script, a token given to the
//     check mode of kubeadm-join (Problems).
//
// What a step does on the machine it does not decide: its state is a set
// of facts (see package steptest), and each step is answered from the first
// case of the step's data (infra/windows/scripts/steptest/<step>.json) that
// fits those facts: the facts the case sets, its status line, what it
// prints, its error. The Pester tests beside that data run the real scripts
// on a fake machine and check that each does what its cases say. A state no
// case describes is a problem, and the step fails.
package simmachine

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/winconform/winconform/infra/windows/nodeconfig"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/testing/steptest"
	"github.com/winconform/winconform/testing/upstream"
	"github.com/winconform/winconform/testing/wsmantest"
)

// Config describes the machine.
type Config struct {
	// Hostname is the machine's computer name; WIN-SIM when empty.
	Hostname string
	// Build is its Windows build, major.minor.build.UBR; 10.0.20348.2340
	// (Windows Server 2022) when empty.
	Build string
	// NotAdmin makes the WinRM account a non-administrator.
	NotAdmin bool
	// ContainersInstalled starts the machine with the Containers feature.
	ContainersInstalled bool
	// RebootTime is how long the machine is down when it reboots (every
	// connection is dropped meanwhile).
	RebootTime time.Duration
	// Password is the WinRM password: a script that holds it is a problem.
	Password string
	// ClockOffset is how far the machine's clock is ahead of true time
	// (behind when negative); see clock.go.
	ClockOffset time.Duration
	// NoRegistry makes the machine reach no image registry (an air-gapped
	// lab): its containerd has only the images it was given (images.go).
	NoRegistry bool
}

// JoinRequest is what kubeadm join got, and the command line of the
// kubelet it starts (the service control manager's).
type JoinRequest struct {
	NodeName, Token, DiscoveryConfig, CRISocket string
	KubeletCommand                              string
}

// Service is a Windows service: BinPath is its command line as the service
// control manager holds it, ImagePath the registry's, Process the running
// process's ("" when stopped).
type Service struct {
	Name, StartType, BinPath string
	ImagePath, Process       string
	Running                  bool
	DependsOn                []string
}

// Machine is the simulated machine. Its methods are safe for concurrent use.
type Machine struct {
	cfg Config

	mu        sync.Mutex
	bootCount int
	downUntil time.Time
	facts     map[string]string
	logs      []string // the log files' fact keys
	steps     []string
	params    map[string]map[string]string
	problems  []string
	reboots   int
	dropped   int
	calls     map[string]int
	variants  map[string][]string // the images' Windows variants (images.go)

	// OnJoin is called when kubeadm join runs; it makes the Node (through
	// the API the test controls). An error fails the join with its text.
	OnJoin func(JoinRequest) error
	// FailJoin makes kubeadm join print these lines and fail.
	FailJoin []string
	// RebootDuring makes the machine reboot (dropping the connection)
	// during the listed calls of a step: RebootDuring["containerd"] = {1}
	// reboots it during the first containerd step, which has done by then
	// what its case's cut says.
	RebootDuring map[string][]int
	// DropAfter makes the connection drop, without a reboot, after the
	// listed calls of a step have done what their case does (its sets
	// made, kubeadm join run): so the node's first HNS network, which
	// flannel's HostProcess pod makes once the Node registers, cuts the
	// host's connections for a few seconds (Microsoft's SDN scripts,
	// Kubernetes/windows/helper.psm1: "Expect disruption in node
	// connectivity for few seconds"; rke2#5335: 6 to 20 seconds), a join
	// that has already joined among them.
	DropAfter map[string][]int
	// Hang makes a step take this long.
	Hang map[string]time.Duration
	// FailStep makes a step fail with this error, as a script that throws.
	FailStep map[string]string
	// OnReboot is called (on its own goroutine) when the machine goes down,
	// to take its WinRM endpoint away, say.
	OnReboot func()
}

// New returns a machine as cfg describes, freshly installed: nothing of
// Kubernetes on it, but the logs the collect-logs cases read.
func New(cfg Config) *Machine {
	if cfg.Hostname == "" {
		cfg.Hostname = "WIN-SIM"
	}
	if cfg.Build == "" {
		cfg.Build = "10.0.20348.2340"
	}
	m := &Machine{
		cfg: cfg,
		facts: map[string]string{
			"env:hostname":         cfg.Hostname,
			"env:user":             cfg.Hostname + `\Administrator`,
			"env:admin":            strconv.FormatBool(!cfg.NotAdmin),
			"env:build":            cfg.Build,
			"env:productName":      "Windows Server 2022 Datacenter",
			"env:installationType": "Server Core",
			"env:bootTime":         bootTime(0),
			"feature:Containers":   "Available",
			"defender:available":   "yes",
			"service:WinDefend":    "Automatic/Running",
			"env:freeBytes":        "107374182400",
			"env:sizeBytes":        "136365211648",
			"env:ipv4":             "192.168.56.20 on Ethernet",
			"hns:module":           "yes",
			defaultRouteKey:        defaultRoute,
		},
		params:   map[string]map[string]string{},
		calls:    map[string]int{},
		variants: defaultVariants(),
	}
	if cfg.ContainersInstalled {
		m.facts["feature:Containers"] = "Installed"
	}
	m.seedLogs()
	return m
}

// seedLogs writes the log files the collect-logs cases read, each with a
// line that names its component and the machine.
func (m *Machine) seedLogs() {
	data, err := steptest.Load("collect-logs")
	if err != nil {
		panic(err) // the data is embedded: its tests fail first
	}
	for _, c := range data.Cases {
		item := c.Params["Item"]
		for k, v := range c.Given {
			if v != "*" || steptest.KindOf(k, []string{"file:", "output:", "events:"}) == "" || len(c.Params) != 1 {
				continue
			}
			key := normKey(k)
			if key == normKey("file:"+nodeconfig.ContainerdConfigPath) {
				continue // the configuration the join writes, not a log
			}
			if _, ok := m.facts[key]; !ok {
				m.facts[key] = fmt.Sprintf("I0101 00:00:00.000000    1234 %s.go:42] %s started on %s", item, item, m.cfg.Hostname)
				m.logs = append(m.logs, key)
			}
		}
	}
}

// bootTime is the boot time the machine reports after n reboots, as
// PowerShell's round-trip format writes it.
func bootTime(n int) string {
	return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Hour).Format("2006-01-02T15:04:05.0000000Z")
}

// normKey makes the path of a file-system fact lower case: Windows paths
// are case-insensitive.
func normKey(key string) string {
	switch steptest.KindOf(key, []string{"file:", "dir:", "link:", "path:", "winrm-path:", "process:"}) {
	case "":
		return key
	}
	return strings.ToLower(key)
}

// fact returns a fact's value, "" when absent. A directory is present too
// when something is known to be in it. m.mu must be held.
func (m *Machine) fact(key string) string {
	key = normKey(key)
	if v, ok := m.facts[key]; ok {
		return v
	}
	if key == utcNowKey {
		return m.clockNow()
	}
	if dir, ok := strings.CutPrefix(key, "dir:"); ok {
		for k := range m.facts {
			if under(k, dir) {
				return "present"
			}
		}
	}
	return ""
}

// under reports whether fact key k is a file or directory inside dir.
func under(k, dir string) bool {
	for _, kind := range []string{"file:", "dir:", "link:"} {
		if p, ok := strings.CutPrefix(k, kind); ok && strings.HasPrefix(p, dir+`\`) {
			return true
		}
	}
	return false
}

// setFact sets a fact; "" removes it, and a directory removed takes what
// is in it along. m.mu must be held.
func (m *Machine) setFact(key, value string) {
	key = normKey(key)
	if value != "" {
		m.facts[key] = value
		return
	}
	delete(m.facts, key)
	if dir, ok := strings.CutPrefix(key, "dir:"); ok {
		for k := range m.facts {
			if under(k, dir) {
				delete(m.facts, k)
			}
		}
	}
}

// Handler answers the harness's commands.
func (m *Machine) Handler() wsmantest.Handler { return m.handle }

// Intercept drops every request while the machine reboots.
func (m *Machine) Intercept() wsmantest.Intercept {
	return func(wsmantest.Request) wsmantest.Injection {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.rebooting() {
			m.dropped++
			return wsmantest.Injection{Drop: true}
		}
		return wsmantest.Injection{}
	}
}

// rebooting reports whether the machine is down, finishing a reboot whose
// time is up: pending feature installs complete, the services' configuration
// is read from the registry and the automatic ones start, the WinRM service
// takes the machine's PATH, the boot time changes. m.mu must be held.
func (m *Machine) rebooting() bool {
	if m.downUntil.IsZero() {
		return false
	}
	if time.Now().Before(m.downUntil) {
		return true
	}
	m.downUntil = time.Time{}
	m.bootCount++
	m.facts["env:bootTime"] = bootTime(m.bootCount)
	delete(m.facts, "env:pendingReboot") // the boot does what was pending
	for k, v := range m.facts {
		if strings.HasPrefix(k, "feature:") && v == "InstallPending" {
			m.facts[k] = "Installed"
		}
	}
	m.bootServices()
	m.bootEnv()
	return false
}

// startReboot takes the machine down: its services stop. m.mu must be held.
func (m *Machine) startReboot() {
	m.reboots++
	m.stopServices()
	m.downUntil = time.Now().Add(max(m.cfg.RebootTime, time.Millisecond))
}

// reply is what a step prints: some lines, then the status line.
type reply struct {
	lines    []string
	status   map[string]any
	exitCode int
	stderr   string
	drop     bool
	// up: the connection drops, the machine stays up.
	up bool
}

// fail ends the step as a terminating PowerShell error does: exit code 1
// and the error on stderr, as CLIXML.
func fail(format string, args ...any) reply {
	msg := fmt.Sprintf(format, args...)
	return reply{exitCode: 1, stderr: "#< CLIXML\r\n<Objs Version=\"1.1.0.1\" xmlns=\"http://schemas.microsoft.com/powershell/2004/04\"><S S=\"Error\">" +
		xmlEscape(msg) + "_x000D__x000A_</S></Objs>"}
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func (m *Machine) handle(c *wsmantest.Call) wsmantest.Reply {
	s, err := ParseScript(c.Script)
	m.mu.Lock()
	if err != nil {
		m.problems = append(m.problems, "unreadable script: "+err.Error())
		m.mu.Unlock()
		return wsmantest.Reply{Stderr: "unreadable script: " + err.Error(), ExitCode: 1}
	}
	if m.cfg.Password != "" && strings.Contains(c.Script, m.cfg.Password) {
		m.problems = append(m.problems, "the script of step "+s.Step+" holds the password")
	}
	for _, want := range []string{"Set-StrictMode -Version Latest", "$ErrorActionPreference = 'Stop'", "# step " + s.Step + "\n"} {
		if !strings.Contains(s.Body, want) {
			m.problems = append(m.problems, fmt.Sprintf("the script of step %s lacks %q", s.Step, want))
		}
	}
	m.calls[s.Step]++
	n := m.calls[s.Step]
	name := s.Step
	if s.Step == "kubeadm-join" {
		name += ":" + s.Params["Mode"]
	}
	m.steps = append(m.steps, name)
	m.params[s.Step] = maps.Clone(s.Params)
	hang := m.Hang[s.Step]
	var r reply
	if msg, ok := m.FailStep[s.Step]; ok {
		r = fail("%s", msg)
	} else {
		r = m.step(s, slices.Contains(m.RebootDuring[s.Step], n))
		if !r.drop && slices.Contains(m.DropAfter[s.Step], n) {
			r = reply{drop: true, up: true}
		}
	}
	onReboot := m.OnReboot
	m.mu.Unlock()

	if r.drop {
		if onReboot != nil && !r.up {
			go onReboot()
		}
		return wsmantest.Reply{Drop: true}
	}
	var out strings.Builder
	for _, l := range r.lines {
		out.WriteString(l + "\r\n")
	}
	if r.status != nil {
		status := map[string]any{"step": s.Step}
		for k, v := range r.status {
			status[k] = v
		}
		data, _ := json.Marshal(status)
		out.Write(data)
		out.WriteString("\r\n")
	}
	return wsmantest.Reply{Stdout: out.String(), Stderr: r.stderr, ExitCode: r.exitCode, Delay: hang}
}

// run is one run of a step: the world's answers are asked at most once
// (kubeadm join once per PATH it may run with).
type run struct {
	m       *Machine
	s       Script
	example map[string]string // the data's example parameters
	join    map[bool]string   // kubeadm join's result by refreshed PATH: ok or fails
	joined  map[bool][]string
}

// step answers a step from its data; cut makes the connection drop when
// the step starts the program its case's cut names.
func (m *Machine) step(s Script, cut bool) reply {
	data, err := steptest.Load(s.Step)
	if err != nil {
		m.problems = append(m.problems, "unknown step "+s.Step)
		return fail("unknown step %s", s.Step)
	}
	want := append([]string{"StepName"}, slices.Collect(maps.Keys(data.Params))...)
	got := slices.Clone(s.Order)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		m.problems = append(m.problems, fmt.Sprintf("step %s got parameters %v, wants %v", s.Step, got, want))
		return fail("bad parameters")
	}
	m.contract(s)
	if s.Step == "containerd" && m.fact("feature:Containers") != "Installed" {
		// Windows: containerd cannot run containers without the feature.
		return fail("containerd cannot run: the Containers feature is %s", m.fact("feature:Containers"))
	}
	r := &run{m: m, s: s, example: data.Params, join: map[bool]string{}, joined: map[bool][]string{}}
	for _, c := range data.Cases {
		ok, err := r.fits(c)
		if err != nil {
			m.problems = append(m.problems, fmt.Sprintf("%s.json, case %q: %v", s.Step, c.Name, err))
			return fail("%v", err)
		}
		if !ok {
			continue
		}
		if cut {
			if c.Cut != nil {
				r.setAll(c.Cut.Sets)
			}
			m.startReboot()
			return reply{drop: true}
		}
		return r.answer(c)
	}
	msg := fmt.Sprintf("no case of %s.json fits the simulated machine (%s)", s.Step, m.describe(data, s.Params))
	m.problems = append(m.problems, msg)
	return fail("%s", msg)
}

// contract records what the harness must not do.
func (m *Machine) contract(s Script) {
	if s.Step != "kubeadm-join" {
		return
	}
	if s.Params["Mode"] != "join" && s.Params["JoinFiles"] != "" {
		m.problems = append(m.problems, "kubeadm-join in "+s.Params["Mode"]+" mode was given the join's files, which hold a token")
	}
	if sock := s.Params["CRISocket"]; sock != "npipe:////./pipe/containerd-containerd" {
		m.problems = append(m.problems, "kubeadm-join: CRISocket "+sock+" is not containerd's pipe")
	}
}

// describe lists the facts the step's cases look at, as the machine has them.
func (m *Machine) describe(data *steptest.Step, params map[string]string) string {
	seen := map[string]bool{}
	var parts []string
	for _, c := range data.Cases {
		for k := range c.Given {
			key, err := steptest.Expand(k, params, m.fact)
			if err != nil || seen[key] {
				continue
			}
			seen[key] = true
			parts = append(parts, fmt.Sprintf("%s=%q", key, m.fact(key)))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// fits reports whether case c describes the machine and the world.
func (r *run) fits(c steptest.Case) (bool, error) {
	for k, v := range c.Params {
		if r.s.Params[k] != v {
			return false, nil
		}
	}
	// A case is written for its parameters: one whose facts use a
	// parameter its example sets does not describe a run that leaves it
	// empty (a flag such as --node-ip= would be left with no value).
	for p, v := range r.example {
		if _, own := c.Params[p]; !own && v != "" && r.s.Params[p] == "" && c.Uses(p) {
			return false, nil
		}
	}
	given, err := steptest.ExpandMap(c.Given, r.s.Params, r.m.fact)
	if err != nil {
		return false, err
	}
	for k, v := range given {
		if !steptest.Matches(v, r.m.fact(k)) {
			return false, nil
		}
	}
	if want, ok := c.World["kubeadm:join"]; ok && r.kubeadmJoin(c.RefreshesPath) != want {
		return false, nil
	}
	if want, ok := c.World["kubeadm:reset"]; ok && want != "ok" {
		return false, nil // the simulated kubeadm reset always works
	}
	return true, nil
}

// judged are kubeadm's judgements of the join's files, by their parameter:
// a join run again with the same files is judged once.
var judged sync.Map

// judgeJoin has kubeadm's own code judge the kubeadm-join step's files
// (upstream.CheckJoin), as kubeadm join on the machine would read them,
// against the KubeletConfiguration of a kind cluster.
func judgeJoin(param string) (upstream.JoinResult, error) {
	if v, ok := judged.Load(param); ok {
		r := v.(judgement)
		return r.res, r.err
	}
	if param == "" {
		return upstream.JoinResult{}, fmt.Errorf("kubeadm join was given no files")
	}
	_, files, err := nodeconfig.ParseParam(param)
	var res upstream.JoinResult
	if err == nil {
		res, err = upstream.CheckJoin(files, upstream.KindKubelet(kubelines.Default()))
	}
	judged.Store(param, judgement{res, err})
	return res, err
}

type judgement struct {
	res upstream.JoinResult
	err error
}

// kubeadmJoin runs the simulated kubeadm join once: its preflight finds
// kubelet through the PATH the step gives it (refreshed from the
// machine's, or the one the shell inherited), then the cluster says
// whether it works.
func (r *run) kubeadmJoin(refreshed bool) string {
	if res, ok := r.join[refreshed]; ok {
		return res
	}
	p := r.s.Params
	// kubeadm reads, defaults and validates its configuration before
	// anything else: kubeadm's own code judges the files the step wrote.
	judged, jerr := judgeJoin(p["JoinFiles"])
	if jerr != nil {
		// Recorded for every machine, the judgement once.
		r.m.problems = append(r.m.problems, "kubeadm refused the join's files: "+jerr.Error())
		r.join[refreshed], r.joined[refreshed] = "fails", strings.Split(jerr.Error(), "\n")
		return "fails"
	}
	joined := []string{"[preflight] Running pre-flight checks"}
	fails := r.m.FailJoin
	criErr := r.m.criForKubeadm()
	switch {
	case criErr != "" || r.m.lookPath("kubelet.exe", refreshed) == "":
		fails = preflightFails(criErr, r.m.lookPath("kubelet.exe", refreshed) == "")
	case len(fails) == 0 && r.m.OnJoin != nil:
		req := JoinRequest{NodeName: judged.NodeName, Token: judged.Token, DiscoveryConfig: string(judged.Discovery), CRISocket: judged.CRISocket,
			KubeletCommand: r.m.fact("service-command:kubelet")}
		if err := r.m.OnJoin(req); err != nil {
			fails = []string{"error execution phase kubelet-start: " + err.Error(), "To see the stack trace of this error execute with --v=5 or higher"}
		}
	}
	res := "ok"
	if len(fails) > 0 {
		joined = append(joined, fails...)
		res = "fails"
	} else {
		joined = append(joined, "[kubelet-start] Starting the kubelet", "This node has joined the cluster")
	}
	r.join[refreshed], r.joined[refreshed] = res, joined
	return res
}

func (r *run) setAll(sets map[string]string) {
	e, err := steptest.ExpandMap(sets, r.s.Params, r.m.fact)
	if err != nil {
		r.m.problems = append(r.m.problems, err.Error())
		return
	}
	before := r.m.services()
	for k, v := range e {
		r.m.setFact(k, v)
	}
	r.m.settleServices(before, e)
}

// answer does what case c says, and prints what it says.
func (r *run) answer(c steptest.Case) reply {
	p, m := r.s.Params, r.m
	expand := func(s string) string {
		e, err := steptest.Expand(s, p, m.fact)
		if err != nil {
			m.problems = append(m.problems, err.Error())
		}
		return e
	}
	if c.Error != "" {
		return fail("%s", expand(c.Error))
	}
	if msg := r.refused(c); msg != "" {
		return fail("%s", msg) // see refusals.go
	}
	if sets, err := steptest.ExpandMap(c.Sets, p, m.fact); err == nil {
		if msg := m.linkInTheWay(sets); msg != "" {
			return fail("%s", msg)
		}
	}
	var out reply
	for _, l := range c.Says {
		out.lines = append(out.lines, strings.Split(expand(l), "\n")...)
	}
	switch c.Echoes {
	case "kubeadm join":
		out.lines = append(out.lines, r.joined[c.RefreshesPath]...)
	case "kubeadm reset":
		out.lines = append(out.lines, "[reset] Stopping the kubelet service", "[reset] Deleting contents of directories: [C:\\etc\\kubernetes\\manifests C:\\var\\lib\\kubelet]")
	}
	if c.PrintsJSON != "" {
		list := []map[string]string{}
		for _, n := range splitList(m.fact(c.PrintsJSON)) {
			list = append(list, map[string]string{"Name": n})
		}
		data, _ := json.MarshalIndent(list, "", "    ")
		out.lines = append(out.lines, strings.Split(string(data), "\n")...)
	}
	out.status = map[string]any{"changed": c.Changed}
	if c.RestartNeeded != nil {
		out.status["restartNeeded"] = *c.RestartNeeded
	}
	for k, v := range c.Status {
		e, err := steptest.ExpandValue(v, p, m.fact)
		if err != nil {
			m.problems = append(m.problems, err.Error())
		}
		out.status[k] = e
	}
	r.setAll(c.Sets)
	if c.Reboots {
		// The step restarts the machine; the connection drops before its
		// answer gets out.
		m.startReboot()
		return reply{drop: true}
	}
	out.exitCode = c.ExitCode
	return out
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, "|") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Steps are the steps run, in order ("kubeadm-join:check" and
// "kubeadm-join:join" tell kubeadm-join's two modes apart).
func (m *Machine) Steps() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.steps)
}

// ResetSteps forgets the steps run so far.
func (m *Machine) ResetSteps() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps = nil
}

// Params returns the parameters the last run of a step got.
func (m *Machine) Params(step string) map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.params[step])
}

// Problems are the ways the harness broke the machine's contract: a script
// it could not parse, a missing or unexpected parameter, the password in a
// script; and states of the machine no case of a step's data describes.
func (m *Machine) Problems() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.problems)
}

// Reboots counts the reboots.
func (m *Machine) Reboots() int { m.mu.Lock(); defer m.mu.Unlock(); return m.reboots }

// Dropped counts the requests dropped while the machine was down.
func (m *Machine) Dropped() int { m.mu.Lock(); defer m.mu.Unlock(); return m.dropped }

// Fact returns one of the machine's facts ("" when absent).
func (m *Machine) Fact(key string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fact(key)
}

// SetFact sets one of the machine's facts ("" removes it).
func (m *Machine) SetFact(key, value string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setFact(key, value)
}

// Joined reports whether kubelet.conf exists.
func (m *Machine) Joined() bool { return m.Fact(`file:C:\etc\kubernetes\kubelet.conf`) != "" }

// Feature returns a Windows feature's install state.
func (m *Machine) Feature(name string) string { return m.Fact("feature:" + name) }

// Service returns a service.
func (m *Machine) Service(name string) (Service, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.fact("service:" + name)
	if v == "" {
		return Service{}, false
	}
	start, status, _ := strings.Cut(v, "/")
	s := m.services()[name]
	return Service{Name: name, StartType: start, Running: status == "Running",
		BinPath: s.command, ImagePath: s.imagepath, Process: s.process, DependsOn: splitList(m.fact("service-deps:" + name))}, true
}

// File returns the content of a file: a program's version, or where it
// came from.
func (m *Machine) File(path string) (string, bool) {
	v := m.Fact("file:" + path)
	return v, v != ""
}

// Firewall returns the port of a firewall rule.
func (m *Machine) Firewall(rule string) (int, bool) {
	port, _, ok := strings.Cut(m.Fact("firewall:"+rule), "/")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(port)
	return n, err == nil
}

// Exclusions lists the Defender exclusions (paths and processes), sorted.
func (m *Machine) Exclusions() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := append(splitList(m.fact("defender:paths")), splitList(m.fact("defender:processes"))...)
	sort.Strings(out)
	return out
}

// AddHNSNetwork adds an HNS network, as flannel does on a joined node; the
// first, External, puts HNS's virtual switch on the adapter (routes.go).
func (m *Machine) AddHNSNetwork(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if name == "External" && !slices.Contains(splitList(m.fact("hns:networks")), name) {
		m.putVirtualSwitch()
	}
	m.setFact("hns:networks", strings.Join(append(splitList(m.fact("hns:networks")), name), "|"))
}

// HNSNetworks lists the HNS networks.
func (m *Machine) HNSNetworks() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return splitList(m.fact("hns:networks"))
}

// AddLogLine adds a line to every log file of the machine.
func (m *Machine) AddLogLine(line string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range m.logs {
		m.facts[k] += "\n" + line
	}
}

// BootTime is the boot time the machine reports.
func (m *Machine) BootTime() string { return m.Fact("env:bootTime") }
