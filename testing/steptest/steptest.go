// Package steptest reads, per step script of infra/windows/scripts, what the
// script does as data: a list of cases, each a machine the step may meet
// (the facts it checks), what the step does there (the facts it changes,
// whether it reports a change, asks for a reboot or restarts the machine,
// what it prints, the error it fails with) and its status line.
//
// Two readers use the same files. The Pester tests beside them (one
// <step>.Tests.ps1 per script, run on Windows) stage each case on a fake
// machine, run the real script and check that it does what its case says,
// so that the data is the scripts' behaviour, shown by the scripts. The
// simulated machine of testing/simmachine answers each step
// from the first case that fits its state, so that the harness's join and
// reset tests run against what the scripts do rather than a Go copy of it.
//
// # Facts
//
// A fact is a key and a string value; "" means absent. Keys by kind:
//
//	feature:NAME            a Windows feature: Available, InstallPending, Installed ("" = no such feature)
//	file:PATH               a file, by its content (a versioned program's content is its version, such
//	                        as v1.34.4; another file's content names where it came from)
//	dir:PATH                a directory: present
//	link:PATH               a directory symbolic link, by its target
//	path:DIR                DIR is on the machine's PATH (the registry's, machine scope): present
//	winrm-path:DIR          DIR is on the PATH a new WinRM shell starts with: the WinRM service's
//	                        environment, read from the registry when the service started (at boot)
//	service:NAME            a Windows service: START/STATUS, such as Automatic/Running
//	service-command:NAME    its command line as the service control manager holds it (what
//	                        Win32_Service and sc.exe qc report, and what a start runs)
//	service-imagepath:NAME  its command line in the registry (ImagePath), which the service
//	                        control manager reads at boot only; it follows service-command
//	                        unless a case sets it alone (a script that edits the registry)
//	service-process:NAME    the command line of its running process ("" when it is stopped)
//	service-deps:NAME       the services it depends on, separated by |
//	state:NAME.KEY          a value the steps keep in C:\winconform\state\NAME.json
//	firewall:RULE           an inbound firewall rule: PORT/ENABLED, such as 10250/True
//	defender:available      Microsoft Defender's cmdlets exist: yes
//	defender:paths, defender:processes   its exclusions, separated by |
//	hns:module              the HNS cmdlets exist: yes
//	hns:networks            the HNS networks' names, separated by |
//	registry:KEY\NAME       a registry value (HKLM\...), its data: a DWORD in decimal
//	image:REF               an image in containerd's k8s.io namespace (the CRI's): present
//	route:DEST              an IPv4 route (route:0.0.0.0/0 the default): ALIAS via NEXTHOP, then
//	                        metric N for a route of a metric of its own (route -p add ... metric N,
//	                        New-NetRoute -RouteMetric; 256 when none is written), then persistent when
//	                        Windows keeps it in the registry's PersistentRoutes (route -p: no interface;
//	                        put back on the adapter that reaches its gateway), or persistent bound when
//	                        the persistent store keeps it bound to its adapter (New-NetRoute's default)
//	env:NAME                what the machine reports: hostname, user, admin, build, productName,
//	                        installationType, bootTime, pendingReboot (what makes a reboot pending,
//	                        separated by |), freeBytes and sizeBytes (of the system drive), utcNow
//	                        (the machine's clock, in UTC; the simulated machine reads its clock when
//	                        no test sets it)
//	output:PROGRAM ARGS     what a program that only reports prints, such as output:ROUTE.EXE print
//	events:LOG/PROVIDER     a Windows event log's events of one provider, one a line:
//	                        TIME ID MESSAGE, oldest first
//	process:PATH            a process runs the program at PATH (Windows keeps the file from being
//	                        overwritten or deleted, not from being renamed): what runs it,
//	                        service:NAME or pod (a container the kubelet restarts)
//
// A case's given facts are what the step checks; its world facts are what
// the machine reaches or runs but does not keep (web:URL, the content served
// at URL; file: sources (an image archive's content: the images it holds,
// separated by |); kubeadm:join and kubeadm:reset, ok or fails;
// feature-install:NAME, fails; pull:REF, fails when the registry is out of
// reach). In given, "*" is any present value; in sets,
// "*" is a value the case does not state (written by a program).
//
// What Windows does on its own, whatever the script, the simulated machine
// does (see package simmachine): a reboot reloads the services'
// configuration from the registry and refreshes the WinRM service's PATH;
// a service started runs the service control manager's command line, one
// still running keeps the command line it was started with; and the
// Windows PowerShell 5.1 that WinRM runs cannot remove a directory tree that
// holds a directory link (a case that removes one must remove the link
// first, in its sets).
//
// # Templates
//
// Strings may hold {Param} (a parameter's value), {Param|dir} (its parent
// directory), {Param:int} (the whole string: a number) and {@KEY} (a fact's
// value).
package steptest

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	cases "github.com/winconform/winconform/infra/windows/scripts/steptest"
)

// files are the cases, kept beside the scripts and their Pester tests.
var files = cases.Files

// Step is a step script's data: <step>.json.
type Step struct {
	// Step is the script's name.
	Step string `json:"step"`
	// About says what the step does.
	About string `json:"about"`
	// Params are the script's parameters with example values, which a case
	// uses unless it gives its own.
	Params map[string]string `json:"params"`
	// Secrets name parameters whose values must never appear in anything
	// the step prints.
	Secrets []string `json:"secrets,omitempty"`
	// Cases are the machines the step may meet. The simulated machine
	// takes the first that fits.
	Cases []Case `json:"cases"`
}

// Case is one machine a step may meet, and what the step does there.
type Case struct {
	// Name says what the case is.
	Name string `json:"name"`
	// Params are the parameter values the case is for, over the step's
	// examples; the simulated machine takes the case only for them.
	Params map[string]string `json:"params,omitempty"`
	// Given are the facts the step checks, as the case has them.
	Given map[string]string `json:"given,omitempty"`
	// World are facts of what the machine reaches or runs.
	World map[string]string `json:"world,omitempty"`
	// Error, when set, is the message the step fails with (a terminating
	// error: exit code 1, the message on stderr).
	Error string `json:"error,omitempty"`
	// Changed and RestartNeeded are the step's report.
	Changed       bool  `json:"changed"`
	RestartNeeded *bool `json:"restartNeeded,omitempty"`
	// Reboots says that the step restarts the machine.
	Reboots bool `json:"reboots,omitempty"`
	// Sets are the facts the step changes, with their new values.
	Sets map[string]string `json:"sets,omitempty"`
	// Cut describes a run cut short (the connection lost, the machine
	// rebooted) when the step starts the program named in At: what it has
	// changed by then.
	Cut *Cut `json:"cut,omitempty"`
	// Says are lines the step prints before its status, in this order.
	Says []string `json:"says,omitempty"`
	// Echoes names a program whose output the step prints: "kubeadm join"
	// or "kubeadm reset".
	Echoes string `json:"echoes,omitempty"`
	// PrintsJSON names a fact (a list) the step prints as a JSON array of
	// objects with a Name.
	PrintsJSON string `json:"printsJson,omitempty"`
	// Status are the fields of the status line besides step, changed and
	// restartNeeded.
	Status map[string]any `json:"status,omitempty"`
	// ExitCode is the step's exit code after it printed its status.
	ExitCode int `json:"exitCode,omitempty"`
	// RefreshesPath says that the step sets its session's PATH from the
	// machine's (and the user's) before it runs programs by name. Without
	// it, they get the PATH the WinRM shell inherited (winrm-path:), which
	// lacks what earlier steps put on the machine's PATH until a reboot:
	// kubeadm join's preflight runs kubelet --version through it.
	RefreshesPath bool `json:"refreshesPath,omitempty"`
}

// Cut is what a step has done when its run is cut short.
type Cut struct {
	At   string            `json:"at"`
	Sets map[string]string `json:"sets"`
}

// Load reads the data of step.
func Load(step string) (*Step, error) {
	data, err := files.ReadFile(step + ".json")
	if err != nil {
		return nil, fmt.Errorf("steptest: no data for step %q: %w", step, err)
	}
	var s Step
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("steptest: %s.json: %w", step, err)
	}
	if s.Step != step {
		return nil, fmt.Errorf("steptest: %s.json is for step %q", step, s.Step)
	}
	return &s, nil
}

// Names lists the steps that have data, sorted.
func Names() []string {
	entries, _ := fs.Glob(files, "*.json")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(path.Base(e), ".json"))
	}
	slices.Sort(out)
	return out
}

// ParamsFor returns the parameters a case runs with: the step's examples,
// then the case's own.
func (s *Step) ParamsFor(c Case) map[string]string {
	out := map[string]string{}
	for k, v := range s.Params {
		out[k] = v
	}
	for k, v := range c.Params {
		out[k] = v
	}
	return out
}

// template is one {...} reference.
var template = regexp.MustCompile(`\{(@[^{}]+|[A-Za-z][A-Za-z0-9]*(?:\|dir|:int)?)\}`)

// Facts gives a fact's value ("" when absent).
type Facts func(key string) string

// Expand replaces the templates of s: {Param}, {Param|dir}, {Param:int}
// (as its number's text) and {@KEY}. An unknown parameter is an error.
func Expand(s string, params map[string]string, facts Facts) (string, error) {
	var err error
	out := template.ReplaceAllStringFunc(s, func(m string) string {
		ref := m[1 : len(m)-1]
		if key, ok := strings.CutPrefix(ref, "@"); ok {
			if facts == nil {
				err = fmt.Errorf("%q: no facts to take %s from", s, key)
				return m
			}
			return facts(key)
		}
		name, mod := ref, ""
		if i := strings.IndexAny(ref, "|:"); i >= 0 {
			name, mod = ref[:i], ref[i:]
		}
		v, ok := params[name]
		if !ok {
			err = fmt.Errorf("%q: no parameter %s", s, name)
			return m
		}
		switch mod {
		case "|dir":
			if i := strings.LastIndexByte(v, '\\'); i > 0 {
				v = v[:i]
			}
		case ":int":
			if _, perr := strconv.Atoi(v); perr != nil {
				err = fmt.Errorf("%q: parameter %s is %q, not a number", s, name, v)
			}
		}
		return v
	})
	if err == nil && strings.ContainsAny(template.ReplaceAllString(s, ""), "{}") {
		err = fmt.Errorf("%q: a brace that is no template", s)
	}
	return out, err
}

// Refs returns the parameters the templates of s name, in order.
func Refs(s string) []string {
	var out []string
	for _, m := range template.FindAllStringSubmatch(s, -1) {
		if ref := m[1]; !strings.HasPrefix(ref, "@") {
			if i := strings.IndexAny(ref, "|:"); i >= 0 {
				ref = ref[:i]
			}
			out = append(out, ref)
		}
	}
	return out
}

// Uses reports whether the facts the case checks or sets name parameter p
// in their templates.
func (c Case) Uses(p string) bool {
	for _, m := range []map[string]string{c.Given, c.Sets} {
		for k, v := range m {
			if slices.Contains(Refs(k), p) || slices.Contains(Refs(v), p) {
				return true
			}
		}
	}
	return false
}

// ExpandMap expands the keys and values of m.
func ExpandMap(m map[string]string, params map[string]string, facts Facts) (map[string]string, error) {
	out := make(map[string]string, len(m))
	for k, v := range m {
		ek, err := Expand(k, params, facts)
		if err != nil {
			return nil, err
		}
		ev, err := Expand(v, params, facts)
		if err != nil {
			return nil, err
		}
		out[ek] = ev
	}
	return out, nil
}

// ExpandValue expands the strings of a status value (a string, or a list
// of them; other values are kept); a string that is only {Param:int}
// becomes a number.
func ExpandValue(v any, params map[string]string, facts Facts) (any, error) {
	switch t := v.(type) {
	case string:
		e, err := Expand(t, params, facts)
		if err != nil {
			return nil, err
		}
		if m := template.FindStringSubmatch(t); m != nil && m[0] == t && strings.HasSuffix(m[1], ":int") {
			n, err := strconv.Atoi(e)
			return n, err
		}
		return e, nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			e, err := ExpandValue(x, params, facts)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	}
	return v, nil
}

// Matches reports whether a fact's value is what a case's given wants: ""
// absent, "*" any present value, else that value.
func Matches(want, got string) bool {
	switch want {
	case "":
		return got == ""
	case "*":
		return got != ""
	}
	return got == want
}

// Kinds are the fact kinds, by the prefix of their keys.
var Kinds = []string{
	"feature:", "file:", "dir:", "link:", "path:", "winrm-path:", "service:", "service-command:",
	"service-imagepath:", "service-process:", "service-deps:", "state:",
	"firewall:", "defender:", "hns:", "env:",
	"process:", "output:", "events:", "registry:", "route:", "image:",
}

// WorldKinds are the kinds of world facts.
var WorldKinds = []string{"web:", "file:", "kubeadm:", "feature-install:", "pull:"}

// KindOf returns the kind of a fact key, "" for none of kinds.
func KindOf(key string, kinds []string) string {
	for _, k := range kinds {
		if strings.HasPrefix(key, k) {
			return k
		}
	}
	return ""
}
