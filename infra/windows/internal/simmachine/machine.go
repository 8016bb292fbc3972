// Package simmachine simulates a Windows machine for the tests of
// infra/windows: it keeps the machine's state (Windows features, a pending
// reboot, installed files and their versions, services, firewall rules,
// Defender exclusions, whether it has joined, HNS networks) and answers each
// step's script, recognised by its "# winconform-step:" marker and the
// parameters of its prelude, with the JSON status line the real script
// would print. It plugs into wsmantest as its Handler and Intercept, so the
// harness drives it through the real WinRM client.
//
// It also enforces what a real machine would: containerd needs the
// Containers feature (installed and rebooted), the kubelet needs
// containerd, kube-proxy the kubelet, the CNI kube-proxy, and kubeadm join
// all of them; while it reboots it drops every connection.
package simmachine

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/winconform/winconform/infra/windows/wsmantest"
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
}

// JoinRequest is what kubeadm join got.
type JoinRequest struct {
	NodeName, Token, DiscoveryConfig, CRISocket string
}

// File is an installed file.
type File struct {
	Version, Source string
}

// Service is a Windows service.
type Service struct {
	Name, StartType, BinPath string
	Running                  bool
	DependsOn                []string
}

// Machine is the simulated machine. Its methods are safe for concurrent use.
type Machine struct {
	cfg Config

	mu         sync.Mutex
	bootCount  int
	downUntil  time.Time
	features   map[string]string
	files      map[string]File
	services   map[string]*Service
	config     map[string]string // containerd config by path
	firewall   map[string]int
	exclusions map[string]bool
	hns        []string
	dirs       map[string]bool
	cniConf    bool
	joined     bool // C:\etc\kubernetes\kubelet.conf exists
	steps      []string
	problems   []string
	reboots    int
	dropped    int

	// OnJoin is called when kubeadm join runs; it makes the Node (through
	// the API the test controls). An error fails the join with its text.
	OnJoin func(JoinRequest) error
	// FailJoin makes kubeadm join print these lines and fail.
	FailJoin []string
	// RebootDuring makes the machine reboot (dropping the connection)
	// during the listed calls of a step: RebootDuring["containerd"] = {1}
	// reboots it during the first containerd step.
	RebootDuring map[string][]int
	// Hang makes a step take this long.
	Hang map[string]time.Duration
	// FailStep makes a step fail with this error, as a script that throws.
	FailStep map[string]string
	// OnReboot is called (on its own goroutine) when the machine goes down,
	// to take its WinRM endpoint away, say.
	OnReboot func()
	// LogLine is added to every log the machine shows.
	LogLine string
	calls   map[string]int
}

// New returns a machine as cfg describes, freshly installed: nothing of
// Kubernetes on it.
func New(cfg Config) *Machine {
	if cfg.Hostname == "" {
		cfg.Hostname = "WIN-SIM"
	}
	if cfg.Build == "" {
		cfg.Build = "10.0.20348.2340"
	}
	m := &Machine{
		cfg:        cfg,
		features:   map[string]string{"Containers": "Available"},
		files:      map[string]File{},
		services:   map[string]*Service{},
		config:     map[string]string{},
		firewall:   map[string]int{},
		exclusions: map[string]bool{},
		dirs:       map[string]bool{},
		calls:      map[string]int{},
	}
	if cfg.ContainersInstalled {
		m.features["Containers"] = "Installed"
	}
	return m
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
// time is up. m.mu must be held.
func (m *Machine) rebooting() bool {
	if m.downUntil.IsZero() {
		return false
	}
	if time.Now().Before(m.downUntil) {
		return true
	}
	m.downUntil = time.Time{}
	m.bootCount++
	for f, state := range m.features {
		if state == "InstallPending" {
			m.features[f] = "Installed"
		}
	}
	for _, s := range m.services {
		s.Running = s.StartType == "Automatic"
		if s.Name == "kubelet" && !m.joined {
			s.Running = false
		}
	}
	return false
}

// startReboot takes the machine down. m.mu must be held.
func (m *Machine) startReboot() {
	m.reboots++
	for _, s := range m.services {
		s.Running = false
	}
	m.downUntil = time.Now().Add(m.cfg.RebootTime)
	if m.cfg.RebootTime <= 0 {
		m.downUntil = time.Now().Add(time.Millisecond)
	}
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

// Problems are the ways the harness broke the machine's contract: a script
// it could not parse, a missing or unexpected parameter, the password in a
// script.
func (m *Machine) Problems() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.problems)
}

// Reboots counts the reboots; Dropped the requests dropped while down.
func (m *Machine) Reboots() int { m.mu.Lock(); defer m.mu.Unlock(); return m.reboots }

// Dropped counts the requests dropped while the machine was down.
func (m *Machine) Dropped() int { m.mu.Lock(); defer m.mu.Unlock(); return m.dropped }

// Joined reports whether kubelet.conf exists.
func (m *Machine) Joined() bool { m.mu.Lock(); defer m.mu.Unlock(); return m.joined }

// Feature returns a Windows feature's install state.
func (m *Machine) Feature(name string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.features[name]
}

// Service returns a copy of a service.
func (m *Machine) Service(name string) (Service, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.services[name]
	if !ok {
		return Service{}, false
	}
	c := *s
	c.DependsOn = slices.Clone(s.DependsOn)
	return c, true
}

// File returns an installed file.
func (m *Machine) File(path string) (File, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[strings.ToLower(path)]
	return f, ok
}

// Firewall returns the port of a firewall rule.
func (m *Machine) Firewall(rule string) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.firewall[rule]
	return p, ok
}

// Exclusions lists the Defender exclusions, sorted.
func (m *Machine) Exclusions() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for e := range m.exclusions {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// AddHNSNetwork adds an HNS network, as flannel does on a joined node.
func (m *Machine) AddHNSNetwork(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hns = append(m.hns, name)
}

// HNSNetworks lists the HNS networks.
func (m *Machine) HNSNetworks() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.hns)
}

// BootTime is the boot time the machine reports.
func (m *Machine) BootTime() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bootTime()
}

func (m *Machine) bootTime() string {
	return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(m.bootCount) * time.Hour).Format(time.RFC3339)
}

// reply is what a step prints: some lines, then the status line.
type reply struct {
	lines    []string
	status   map[string]any
	exitCode int
	stderr   string
	drop     bool
}

func (r *reply) printf(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
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
	if mode := s.Params["Mode"]; s.Step == "kubeadm-join" {
		name += ":" + mode
	}
	m.steps = append(m.steps, name)
	hang := m.Hang[s.Step]
	var r reply
	if msg, ok := m.FailStep[s.Step]; ok {
		r = fail("%s", msg)
	} else if slices.Contains(m.RebootDuring[s.Step], n) {
		m.partial(s)
		m.startReboot()
		r = reply{drop: true}
	} else {
		r = m.step(s)
	}
	onReboot := m.OnReboot
	m.mu.Unlock()

	if r.drop {
		if onReboot != nil {
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

// partial is what a step has done when the machine reboots in its middle.
func (m *Machine) partial(s Script) {
	switch s.Step {
	case "containerd":
		// The binaries are copied, the service not registered yet.
		m.files[strings.ToLower(s.Params["InstallDir"]+`\containerd.exe`)] = File{Version: s.Params["Version"], Source: s.Params["Source"]}
	}
}

// params checks that a step got exactly the parameters it takes.
func (m *Machine) params(s Script, names ...string) bool {
	want := append([]string{"StepName"}, names...)
	got := slices.Clone(s.Order)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		m.problems = append(m.problems, fmt.Sprintf("step %s got parameters %v, wants %v", s.Step, got, want))
		return false
	}
	return true
}

func (m *Machine) step(s Script) reply {
	p := s.Params
	switch s.Step {
	case "ping":
		if !m.params(s) {
			return fail("bad parameters")
		}
		return reply{status: map[string]any{"changed": false, "hostname": m.cfg.Hostname, "bootTime": m.bootTime()}}

	case "preflight":
		if !m.params(s) {
			return fail("bad parameters")
		}
		return reply{status: map[string]any{
			"changed": false, "build": m.cfg.Build, "productName": "Windows Server 2022 Datacenter", "installationType": "Server Core",
			"hostname": m.cfg.Hostname, "user": m.cfg.Hostname + `\Administrator`, "admin": !m.cfg.NotAdmin, "bootTime": m.bootTime(),
		}}

	case "containers-feature":
		if !m.params(s) {
			return fail("bad parameters")
		}
		changed, restart := false, false
		switch m.features["Containers"] {
		case "Installed":
		case "InstallPending":
			restart = true
		default:
			m.features["Containers"] = "InstallPending"
			changed, restart = true, true
		}
		return reply{status: map[string]any{"changed": changed, "restartNeeded": restart, "installState": m.features["Containers"]}}

	case "reboot":
		if !m.params(s) {
			return fail("bad parameters")
		}
		// Restart-Computer returns, and the connection drops before the
		// answer gets out.
		m.startReboot()
		return reply{drop: true}

	case "containerd":
		if !m.params(s, "Source", "Version", "SandboxImage", "InstallDir", "CNIBinDir", "CNIConfDir", "LogFile") {
			return fail("bad parameters")
		}
		if m.features["Containers"] != "Installed" {
			return fail("containerd cannot run: the Containers feature is %s", m.features["Containers"])
		}
		changed := false
		exe := strings.ToLower(p["InstallDir"] + `\containerd.exe`)
		f, ok := m.files[exe]
		upToDate := ok && (p["Version"] != "" && f.Version == p["Version"] || p["Version"] == "" && f.Source == p["Source"])
		if !upToDate || f.Source != p["Source"] && p["Version"] == "" {
			m.files[exe] = File{Version: p["Version"], Source: p["Source"]}
			changed = true
		}
		config := fmt.Sprintf("sandbox_image = '%s'\nbin_dir = '%s'\nconf_dir = '%s'\n", p["SandboxImage"], p["CNIBinDir"], p["CNIConfDir"])
		if m.config[p["InstallDir"]] != config {
			m.config[p["InstallDir"]] = config
			changed = true
		}
		svc := m.services["containerd"]
		if svc == nil {
			svc = &Service{Name: "containerd", StartType: "Automatic", BinPath: p["InstallDir"] + `\containerd.exe --run-service --log-file ` + p["LogFile"]}
			m.services["containerd"] = svc
			changed = true
		}
		if !svc.Running {
			svc.Running = true
			changed = true
		}
		return reply{lines: []string{"containerd " + p["Version"]}, status: map[string]any{"changed": changed, "version": "v" + p["Version"], "sandboxImage": p["SandboxImage"]}}

	case "kubelet":
		if !m.params(s, "KubernetesVersion", "KubeletSource", "KubeadmSource", "KubeLogRunnerSource", "InstallDir", "NodeName") {
			return fail("bad parameters")
		}
		if m.services["containerd"] == nil {
			return fail("the containerd service is missing: the runtime comes before the kubelet")
		}
		changed := false
		for name, src := range map[string]string{"kubelet.exe": p["KubeletSource"], "kubeadm.exe": p["KubeadmSource"], "kube-log-runner.exe": p["KubeLogRunnerSource"]} {
			if m.install(p["InstallDir"]+`\`+name, p["KubernetesVersion"], src) {
				changed = true
			}
		}
		binPath := fmt.Sprintf(`"%s\kube-log-runner.exe" --log-file=C:\var\log\kubelet\kubelet.log "%s\kubelet.exe" --windows-service --hostname-override=%s`, p["InstallDir"], p["InstallDir"], p["NodeName"])
		svc := m.services["kubelet"]
		switch {
		case svc == nil:
			m.services["kubelet"] = &Service{Name: "kubelet", StartType: "Manual", BinPath: binPath, DependsOn: []string{"containerd"}}
			changed = true
		case svc.BinPath != binPath:
			svc.BinPath = binPath
			changed = true
		}
		return reply{status: map[string]any{"changed": changed, "version": p["KubernetesVersion"], "service": "kubelet", "binPath": binPath}}

	case "kube-proxy":
		if !m.params(s, "KubernetesVersion", "KubeProxySource", "InstallDir") {
			return fail("bad parameters")
		}
		if _, ok := m.files[strings.ToLower(p["InstallDir"]+`\kubelet.exe`)]; !ok {
			return fail("kubelet.exe is missing: the kubelet comes before kube-proxy")
		}
		changed := m.install(p["InstallDir"]+`\kube-proxy.exe`, p["KubernetesVersion"], p["KubeProxySource"])
		return reply{status: map[string]any{"changed": changed, "version": p["KubernetesVersion"]}}

	case "cni":
		if !m.params(s, "PluginsSource", "FlannelPluginSource", "FlanneldSource", "BinDir", "ConfDir", "InstallDir") {
			return fail("bad parameters")
		}
		if _, ok := m.files[strings.ToLower(p["InstallDir"]+`\kube-proxy.exe`)]; !ok {
			return fail("kube-proxy.exe is missing: kube-proxy comes before the CNI")
		}
		changed := false
		for _, name := range []string{"flannel.exe", "win-overlay.exe", "host-local.exe"} {
			src := p["PluginsSource"]
			if name == "flannel.exe" && p["FlannelPluginSource"] != "" {
				src = p["FlannelPluginSource"]
			}
			if m.install(p["BinDir"]+`\`+name, "", src) {
				changed = true
			}
		}
		if m.install(p["InstallDir"]+`\flanneld.exe`, "", p["FlanneldSource"]) {
			changed = true
		}
		if !m.dirs[strings.ToLower(p["ConfDir"])] {
			m.dirs[strings.ToLower(p["ConfDir"])] = true
			changed = true
		}
		return reply{status: map[string]any{"changed": changed, "binDir": p["BinDir"]}}

	case "firewall":
		if !m.params(s, "RuleName", "Port") {
			return fail("bad parameters")
		}
		var port int
		fmt.Sscan(p["Port"], &port)
		_, ok := m.firewall[p["RuleName"]]
		m.firewall[p["RuleName"]] = port
		return reply{status: map[string]any{"changed": !ok, "rule": p["RuleName"], "port": port}}

	case "defender":
		if !m.params(s, "Paths", "Processes") {
			return fail("bad parameters")
		}
		var added []string
		for _, e := range append(strings.Split(p["Paths"], "|"), strings.Split(p["Processes"], "|")...) {
			if e != "" && !m.exclusions[strings.ToLower(e)] {
				m.exclusions[strings.ToLower(e)] = true
				added = append(added, e)
			}
		}
		return reply{status: map[string]any{"changed": len(added) > 0, "defender": true, "added": added}}

	case "probe":
		if !m.params(s, "Source", "Destination") {
			return fail("bad parameters")
		}
		changed := m.install(p["Destination"], "", p["Source"])
		return reply{status: map[string]any{"changed": changed, "path": p["Destination"]}}

	case "kubeadm-join":
		return m.join(s)

	case "kubeadm-reset":
		if !m.params(s, "KubeadmPath", "CRISocket", "CNIConfDir") {
			return fail("bad parameters")
		}
		changed := false
		var r reply
		if m.joined {
			r.printf("[reset] Deleted contents of the etcd data directory")
			m.joined = false
			changed = true
		}
		if _, ok := m.services["kubelet"]; ok {
			delete(m.services, "kubelet")
			changed = true
		}
		if m.cniConf {
			m.cniConf = false
			changed = true
		}
		r.status = map[string]any{"changed": changed}
		return r

	case "hns-cleanup":
		if !m.params(s, "Networks") {
			return fail("bad parameters")
		}
		patterns := strings.Split(p["Networks"], "|")
		var kept, removed []string
		for _, n := range m.hns {
			match := false
			for _, pat := range patterns {
				if pre, ok := strings.CutSuffix(pat, "*"); ok && strings.HasPrefix(n, pre) || n == pat {
					match = true
				}
			}
			if match {
				removed = append(removed, n)
			} else {
				kept = append(kept, n)
			}
		}
		m.hns = kept
		return reply{status: map[string]any{"changed": len(removed) > 0, "removed": removed}}

	case "collect-logs":
		if !m.params(s, "Item", "Lines") {
			return fail("bad parameters")
		}
		var r reply
		switch item := p["Item"]; item {
		case "hns-networks", "hns-endpoints":
			data, _ := json.MarshalIndent(m.hns, "", "  ")
			r.lines = strings.Split(string(data), "\n")
		case "kubelet", "containerd", "kube-proxy", "flannel":
			r.printf(`==> C:\var\log\%s\%s.log <==`, item, item)
			r.printf("I0101 00:00:00.000000    1234 %s.go:42] %s started on %s", item, item, m.cfg.Hostname)
			if m.LogLine != "" {
				r.printf("%s", m.LogLine)
			}
		default:
			return fail("unknown log item %s", item)
		}
		r.status = map[string]any{"changed": false, "item": p["Item"]}
		return r
	}
	m.problems = append(m.problems, "unknown step "+s.Step)
	return fail("unknown step %s", s.Step)
}

// install puts a file in place unless it is there with the same version
// (or, without one, from the same source); it reports whether it did.
func (m *Machine) install(path, version, source string) bool {
	key := strings.ToLower(path)
	f, ok := m.files[key]
	if ok && f.Version == version && f.Source == source {
		return false
	}
	m.files[key] = File{Version: version, Source: source}
	return true
}

func (m *Machine) join(s Script) reply {
	p := s.Params
	if !m.params(s, "Mode", "NodeName", "NodeExists", "Token", "DiscoveryConfig", "KubeadmPath", "CRISocket") {
		return fail("bad parameters")
	}
	if m.joined && p["NodeExists"] == "true" {
		changed := false
		if svc := m.services["kubelet"]; svc != nil && (!svc.Running || svc.StartType != "Automatic") {
			svc.Running, svc.StartType, changed = true, "Automatic", true
		}
		return reply{status: map[string]any{"changed": changed, "joined": true, "needsJoin": false}}
	}
	if p["Mode"] == "check" {
		if p["Token"] != "" || p["DiscoveryConfig"] != "" {
			m.problems = append(m.problems, "kubeadm-join in check mode was given a token")
		}
		return reply{status: map[string]any{"changed": false, "joined": false, "needsJoin": true}}
	}
	kubelet := m.services["kubelet"]
	switch {
	case kubelet == nil:
		return fail("the kubelet service is missing")
	case m.services["containerd"] == nil || !m.services["containerd"].Running:
		return fail("containerd is not running")
	case p["CRISocket"] != "npipe:////./pipe/containerd-containerd":
		return fail("unexpected CRI socket %q", p["CRISocket"])
	}
	if _, ok := m.files[strings.ToLower(p["KubeadmPath"])]; !ok {
		return fail("%s does not exist", p["KubeadmPath"])
	}
	var r reply
	if m.joined {
		r.printf("resetting what an earlier join left")
		m.joined = false
	}
	r.printf("[preflight] Running pre-flight checks")
	fails := m.FailJoin
	if len(fails) == 0 && m.OnJoin != nil {
		if err := m.OnJoin(JoinRequest{NodeName: p["NodeName"], Token: p["Token"], DiscoveryConfig: p["DiscoveryConfig"], CRISocket: p["CRISocket"]}); err != nil {
			fails = []string{"error execution phase kubelet-start: " + err.Error(), "To see the stack trace of this error execute with --v=5 or higher"}
		}
	}
	if len(fails) > 0 {
		r.lines = append(r.lines, fails...)
		r.status = map[string]any{"changed": true, "joined": false, "needsJoin": true, "exitCode": 1}
		r.exitCode = 1
		return r
	}
	r.printf("[kubelet-start] Starting the kubelet")
	r.printf("This node has joined the cluster")
	m.joined = true
	m.cniConf = true
	kubelet.StartType, kubelet.Running = "Automatic", true
	r.status = map[string]any{"changed": true, "joined": true, "needsJoin": false}
	return r
}
