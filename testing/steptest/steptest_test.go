package steptest_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/steptest"
)

func anyFact(string) string { return "x" }

func TestEveryScriptHasData(t *testing.T) {
	scripts, data := windows.ScriptNames(), steptest.Names()
	for _, s := range scripts {
		if !slices.Contains(data, s) {
			t.Errorf("script %s.ps1 has no %s.json: its Pester tests and the simulated machine need one", s, s)
		}
	}
	for _, d := range data {
		if !slices.Contains(scripts, d) {
			t.Errorf("%s.json is for no script", d)
		}
	}
}

var serviceValue = regexp.MustCompile(`^(Automatic|Manual|Disabled)/(Running|Stopped)$`)

// TestDataIsWellFormed checks what neither reader would catch: every case
// renders its script, names known facts, expands all of its templates, and
// keeps the step's secrets out of what the step prints.
func TestDataIsWellFormed(t *testing.T) {
	for _, name := range steptest.Names() {
		s, err := steptest.Load(name)
		if err != nil {
			t.Error(err)
			continue
		}
		if strings.TrimSpace(s.About) == "" || len(s.Cases) == 0 {
			t.Errorf("%s.json: no about or no cases", name)
		}
		if _, err := windows.RenderScript(name, params(s.Params)); err != nil {
			t.Errorf("%s.json: its params: %v", name, err)
		}
		for _, secret := range s.Secrets {
			if _, ok := s.Params[secret]; !ok {
				t.Errorf("%s.json: secret %s is no parameter", name, secret)
			}
		}
		seen := map[string]bool{}
		for _, c := range s.Cases {
			where := fmt.Sprintf("%s.json, case %q", name, c.Name)
			if c.Name == "" || seen[c.Name] {
				t.Errorf("%s: no name, or one used twice", where)
			}
			seen[c.Name] = true
			p := s.ParamsFor(c)
			for k := range c.Params {
				if _, ok := s.Params[k]; !ok {
					t.Errorf("%s: parameter %s is not the script's", where, k)
				}
			}
			if _, err := windows.RenderScript(name, params(p)); err != nil {
				t.Errorf("%s: %v", where, err)
			}
			checkFacts(t, where+", given", c.Given, steptest.Kinds, p, false)
			checkFacts(t, where+", sets", c.Sets, steptest.Kinds, p, true)
			checkFacts(t, where+", world", c.World, steptest.WorldKinds, p, false)
			if c.Cut != nil {
				if c.Cut.At == "" {
					t.Errorf("%s: a cut names no program", where)
				}
				checkFacts(t, where+", cut", c.Cut.Sets, steptest.Kinds, p, true)
			}
			var printed []string
			if c.Error != "" {
				if c.Changed || len(c.Sets) > 0 || len(c.Status) > 0 || len(c.Says) > 0 || c.Reboots {
					t.Errorf("%s: a failing case states changes, status or output", where)
				}
				printed = append(printed, expand(t, where, c.Error, p))
			}
			for _, l := range c.Says {
				printed = append(printed, expand(t, where, l, p))
			}
			for k, v := range c.Status {
				if k == "step" || k == "changed" || k == "restartNeeded" {
					t.Errorf("%s: status field %s is set from the case itself", where, k)
				}
				ev, err := steptest.ExpandValue(v, p, anyFact)
				if err != nil {
					t.Errorf("%s: status %s: %v", where, k, err)
				}
				printed = append(printed, fmt.Sprint(ev))
			}
			if _, joins := c.World["kubeadm:join"]; c.RefreshesPath && !joins {
				t.Errorf("%s: refreshesPath says what kubeadm join sees, but the case runs no kubeadm join", where)
			}
			switch c.Echoes {
			case "", "kubeadm join", "kubeadm reset":
			default:
				t.Errorf("%s: echoes %q: want kubeadm join or kubeadm reset", where, c.Echoes)
			}
			if c.PrintsJSON != "" && steptest.KindOf(c.PrintsJSON, []string{"hns:"}) == "" {
				t.Errorf("%s: printsJson %q is no HNS list", where, c.PrintsJSON)
			}
			for _, secret := range s.Secrets {
				if v := p[secret]; v != "" {
					for _, text := range printed {
						if strings.Contains(text, v) {
							t.Errorf("%s: the secret %s is in what the step prints: %q", where, secret, text)
						}
					}
				}
			}
		}
	}
}

func checkFacts(t *testing.T, where string, facts map[string]string, kinds []string, p map[string]string, sets bool) {
	t.Helper()
	for k, v := range facts {
		kind := steptest.KindOf(k, kinds)
		if kind == "" {
			t.Errorf("%s: %q is no fact of a known kind (%s)", where, k, strings.Join(kinds, " "))
			continue
		}
		ek, ev := expand(t, where, k, p), expand(t, where, v, p)
		if strings.TrimPrefix(ek, kind) == "" {
			t.Errorf("%s: %q names nothing", where, k)
		}
		if v == "*" && sets && kind != "file:" {
			t.Errorf("%s: %s is set to *, which only a file written by a program may be", where, k)
		}
		if kind == "service:" && ev != "" && ev != "*" && !serviceValue.MatchString(ev) {
			t.Errorf("%s: %s is %q, not START/STATUS", where, k, ev)
		}
		if kind == "file:" && strings.HasSuffix(ek, `\config.toml`) && ev != "" && ev != "*" {
			if _, err := steptest.ParseContainerdConfig(ev); err != nil {
				t.Errorf("%s: %s: %v", where, k, err)
			}
		}
		if (kind == "dir:" || kind == "path:" || kind == "winrm-path:") && ev != "" && ev != "present" && ev != "*" {
			t.Errorf("%s: %s is %q: a directory is present or absent", where, k, ev)
		}
	}
}

func expand(t *testing.T, where, s string, p map[string]string) string {
	t.Helper()
	e, err := steptest.Expand(s, p, anyFact)
	if err != nil {
		t.Errorf("%s: %v", where, err)
	}
	return e
}

func params(m map[string]string) []windows.Param {
	var out []windows.Param
	for k, v := range m {
		out = append(out, windows.Param{Name: k, Value: v})
	}
	return out
}

func TestExpand(t *testing.T) {
	p := map[string]string{"InstallDir": `C:\k`, "Port": "10250", "LogFile": `C:\var\log\c\c.log`}
	facts := func(k string) string { return map[string]string{`file:C:\x`: "v1"}[k] }
	for in, want := range map[string]string{
		`{InstallDir}\kubelet.exe`: `C:\k\kubelet.exe`,
		`dir:{LogFile|dir}`:        `dir:C:\var\log\c`,
		`v={@file:C:\x}`:           `v=v1`,
		`{Port:int}`:               `10250`,
		`plain`:                    `plain`,
	} {
		if got, err := steptest.Expand(in, p, facts); err != nil || got != want {
			t.Errorf("Expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"{Missing}", "{InstallDir", "a } b", "{Port", "{InstallDir:int}"} {
		if _, err := steptest.Expand(bad, p, facts); err == nil {
			t.Errorf("Expand(%q) took it", bad)
		}
	}
	if v, err := steptest.ExpandValue("{Port:int}", p, facts); err != nil || v != 10250 {
		t.Errorf("ExpandValue({Port:int}) = %#v, %v", v, err)
	}
	if v, err := steptest.ExpandValue([]any{"{InstallDir}", true}, p, facts); err != nil || fmt.Sprint(v) != `[C:\k true]` {
		t.Errorf("ExpandValue(list) = %#v, %v", v, err)
	}
}
