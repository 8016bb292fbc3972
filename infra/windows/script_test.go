package windows

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/testing/simmachine"
)

func TestQuotePS(t *testing.T) {
	cases := map[string]string{
		"":                          "''",
		"plain":                     "'plain'",
		"it's":                      "'it''s'",
		"$env:PATH; `whoami` \"x\"": "'$env:PATH; `whoami` \"x\"'",
		"a\u2019b\u2018c":           "'a\u2019\u2019b\u2018\u2018c'",
		"line 1\nline 2":            "'line 1\nline 2'",
		`C:\Program Files\x`:        `'C:\Program Files\x'`,
	}
	for in, want := range cases {
		got, err := QuotePS(in)
		if err != nil || got != want {
			t.Errorf("QuotePS(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a\x00b", "\xff"} {
		if _, err := QuotePS(bad); err == nil {
			t.Errorf("QuotePS(%q) accepted", bad)
		}
	}
}

// Every value survives the prelude as PowerShell reads it (the simulated
// machine's parser reads it the way PowerShell's tokenizer does).
func TestPreludeRoundTrip(t *testing.T) {
	values := []string{"", "'", "''", "it's", "\u2019'\u201b", "'; Remove-Item C:\\ -Recurse; '", "a\r\nb\n'c'", "$(whoami)", "#", "# end of parameters"}
	for _, v := range values {
		script, err := RenderScript("probe", []Param{{"Source", v}, {"Destination", `C:\winconform\probe.exe`}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := simmachine.ParseScript(script)
		if err != nil {
			t.Fatalf("value %q: %v", v, err)
		}
		if s.Params["Source"] != v || s.Step != "probe" || s.Params["StepName"] != "probe" {
			t.Errorf("value %q came back as %q", v, s.Params["Source"])
		}
		if !strings.Contains(s.Body, "# winconform-library: common") || !strings.Contains(s.Body, "# step probe\n") {
			t.Errorf("the body lacks the library or the step")
		}
	}
}

func TestRenderScriptChecksParameters(t *testing.T) {
	if _, err := RenderScript("firewall", []Param{{"RuleName", "x"}}); err == nil || !strings.Contains(err.Error(), "takes parameters [RuleName, Port]") {
		t.Errorf("a missing parameter: %v", err)
	}
	if _, err := RenderScript("firewall", []Param{{"RuleName", "x"}, {"Port", "1"}, {"Extra", "y"}}); err == nil {
		t.Error("an extra parameter was accepted")
	}
	if _, err := RenderScript("no-such-step", nil); err == nil {
		t.Error("an unknown step was rendered")
	}
	if _, err := RenderScript("firewall", []Param{{"RuleName", "x\x00"}, {"Port", "1"}}); err == nil {
		t.Error("a NUL in a value was accepted")
	}
}

// ps7Only are constructs Windows PowerShell 5.1 does not have.
var ps7Only = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`\?\?`), "the null-coalescing operator ??"},
	{regexp.MustCompile(`\?\.`), "the null-conditional operator ?."},
	{regexp.MustCompile(`&&|\|\|`), "pipeline chain operators && and ||"},
	{regexp.MustCompile(`\s\?\s[^:]+\s:\s`), "the ternary operator"},
	{regexp.MustCompile(`(?i)-Parallel\b`), "ForEach-Object -Parallel"},
	{regexp.MustCompile(`(?i)\bpwsh\b`), "pwsh"},
	{regexp.MustCompile(`(?i)-AsHashtable\b`), "ConvertFrom-Json -AsHashtable"},
	{regexp.MustCompile(`(?i)\bclean\s*\{`), "the clean block"},
}

// TestScriptsArePowerShell51 is a lint, not a parser: it checks that each
// script's braces, brackets and parentheses balance outside strings and
// comments, and that no PowerShell 7 construct appears.
func TestScriptsArePowerShell51(t *testing.T) {
	files := map[string]string{"lib.ps1": "", "manifests/kube-proxy-windows.ps1": kubeProxyScript, "manifests/flannel-windows.ps1": flannelScript}
	for _, n := range ScriptNames() {
		files[n+".ps1"] = ""
	}
	for name, text := range files {
		if text == "" {
			data, err := scriptFS.ReadFile("scripts/" + name)
			if err != nil {
				t.Fatal(err)
			}
			text = string(data)
		}
		code := stripStringsAndComments(t, name, text)
		for _, c := range ps7Only {
			if loc := c.re.FindStringIndex(code); loc != nil {
				t.Errorf("%s uses %s: %q", name, c.what, code[max(0, loc[0]-20):min(len(code), loc[1]+20)])
			}
		}
		var stack []rune
		pairs := map[rune]rune{')': '(', ']': '[', '}': '{'}
		for i, r := range code {
			switch r {
			case '(', '[', '{':
				stack = append(stack, r)
			case ')', ']', '}':
				if len(stack) == 0 || stack[len(stack)-1] != pairs[r] {
					t.Errorf("%s: unbalanced %q at offset %d", name, r, i)
					break
				}
				stack = stack[:len(stack)-1]
			}
		}
		if len(stack) > 0 {
			t.Errorf("%s: %d unclosed brackets", name, len(stack))
		}
	}
	lib, _ := library("")
	for _, want := range []string{"Set-StrictMode -Version Latest", "$ErrorActionPreference = 'Stop'"} {
		if !strings.Contains(lib, want) {
			t.Errorf("lib.ps1 lacks %q", want)
		}
	}
	for _, s := range []string{kubeProxyScript, flannelScript} {
		if !strings.Contains(s, "Set-StrictMode -Version Latest") || !strings.Contains(s, "$ErrorActionPreference = 'Stop'") {
			t.Error("a DaemonSet script lacks strict mode or 'Stop'")
		}
	}
}

// stripStringsAndComments blanks out comments, single- and double-quoted
// strings and here-strings (keeping $( ) subexpressions' brackets out too).
func stripStringsAndComments(t *testing.T, name, s string) string {
	t.Helper()
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '#':
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
			b.WriteRune('\n')
		case r == '@' && i+1 < len(rs) && (rs[i+1] == '"' || rs[i+1] == '\''):
			q := rs[i+1]
			end := strings.Index(string(rs[i+2:]), "\n"+string(q)+"@")
			if end < 0 {
				t.Errorf("%s: unclosed here-string", name)
				return b.String()
			}
			i += 2 + len([]rune(string(rs[i+2:])[:end])) + 2
			b.WriteString(`""`)
		case r == '\'':
			j := i + 1
			for ; j < len(rs); j++ {
				if rs[j] == '\'' {
					if j+1 < len(rs) && rs[j+1] == '\'' {
						j++
						continue
					}
					break
				}
			}
			if j >= len(rs) {
				t.Errorf("%s: unclosed single-quoted string at offset %d", name, i)
			}
			i = j
			b.WriteString(`''`)
		case r == '"':
			j := i + 1
			for ; j < len(rs); j++ {
				if rs[j] == '`' {
					j++
					continue
				}
				if rs[j] == '"' {
					break
				}
			}
			if j >= len(rs) {
				t.Errorf("%s: unclosed double-quoted string at offset %d", name, i)
			}
			i = j
			b.WriteString(`""`)
		case r == '`':
			i++ // an escaped character
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestParseStatus(t *testing.T) {
	st, before, err := parseStatus("line 1\r\nline 2\r\n{\"step\":\"containerd\",\"changed\":true,\"restartNeeded\":false,\"version\":\"v1.7.28\"}\r\n\r\n", "containerd")
	if err != nil || !st.Changed || st.RestartNeeded || st.str("version") != "v1.7.28" || before != "line 1\nline 2" {
		t.Errorf("parseStatus = %+v, %q, %v", st, before, err)
	}
	if _, _, err := parseStatus("done\r\n", "containerd"); err == nil {
		t.Error("output without a status line was accepted")
	}
	if _, _, err := parseStatus(`{"step":"kubelet","changed":false}`, "containerd"); err == nil || !strings.Contains(err.Error(), `"kubelet"`) {
		t.Errorf("another step's status: %v", err)
	}
}

func TestJoinCommandHidesToken(t *testing.T) {
	jc := JoinCommand{Endpoint: "192.0.2.10:6443", Token: "abcdef.0123456789abcdef", CACertHashes: []string{"sha256:" + strings.Repeat("a", 64)}}
	if err := jc.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{jc.String(), jc.GoString()} {
		if strings.Contains(s, "0123456789abcdef") || !strings.Contains(s, "abcdef.") {
			t.Errorf("%q shows the token's secret or hides its id", s)
		}
	}
	bad := JoinCommand{Endpoint: "no-port", Token: "x", CACertHashes: []string{"md5:1"}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "not host:port") || !strings.Contains(err.Error(), "bootstrap token") {
		t.Errorf("Validate = %v", err)
	}
}

func TestKubernetesSources(t *testing.T) {
	j := &joinRun{version: "v1.37.2", versions: Versions{Kubelet: "v1.36.3", KubeProxy: "v1.35.4", Containerd: "2.3.7"}}
	j.m.Binaries = map[string]string{}
	if got := j.kubernetesSource("kubelet"); got != "https://dl.k8s.io/v1.36.3/bin/windows/amd64/kubelet.exe" {
		t.Errorf("default: %s, want the kubelet's version", got)
	}
	if got := j.kubernetesSource("kube-proxy"); got != "https://dl.k8s.io/v1.35.4/bin/windows/amd64/kube-proxy.exe" {
		t.Errorf("default: %s, want kube-proxy's version", got)
	}
	if got := j.source("containerd"); got != "https://github.com/containerd/containerd/releases/download/v2.3.7/containerd-2.3.7-windows-amd64.tar.gz" {
		t.Errorf("default: %s, want containerd's release archive of its version", got)
	}
	j.m.Binaries["kubernetes"] = "https://mirror.example.com/k8s/v1.34.4/"
	if got := j.kubernetesSource("kubeadm"); got != "https://mirror.example.com/k8s/v1.34.4/kubeadm.exe" {
		t.Errorf("URL base: %s", got)
	}
	j.m.Binaries["kubernetes"] = `C:\install\k8s\`
	if got := j.kubernetesSource("kube-proxy"); got != `C:\install\k8s\kube-proxy.exe` {
		t.Errorf("directory base: %s", got)
	}
	j.m.Binaries["kubernetes"] = `C:\install\kubernetes-node-windows-amd64.tar.gz`
	if got := j.kubernetesSource("kubelet"); got != `C:\install\kubernetes-node-windows-amd64.tar.gz` {
		t.Errorf("archive: %s", got)
	}
	j.m.Binaries["kubelet"] = `C:\install\kubelet.exe`
	if got := j.kubernetesSource("kubelet"); got != `C:\install\kubelet.exe` {
		t.Errorf("binaries.kubelet: %s", got)
	}
	for src, want := range map[string]string{
		"https://example.com/containerd-1.7.28-windows-amd64.tar.gz":        "1.7.28",
		`C:\install\containerd-2.1.0-rc.1-windows-amd64.zip`:                "2.1.0-rc.1",
		"https://example.com/v2.1.4/containerd-v2.1.4-windows-amd64.tar.gz": "2.1.4",
		`C:\install\containerd`: "",
	} {
		if got := versionOf(src); got != want {
			t.Errorf("versionOf(%s) = %q, want %q", src, got, want)
		}
	}
}

func TestParseFullBuild(t *testing.T) {
	b, err := parseFullBuild("10.0.20348.2340")
	if err != nil || b.Build.Number != 20348 || b.UBR != 2340 || b.String() != "10.0.20348.2340" || b.Build.String() != "10.0.20348" {
		t.Errorf("%+v %v", b, err)
	}
	if _, err := parseFullBuild("Windows 10"); err == nil {
		t.Error("accepted junk")
	}
}

// A Windows command line holds 8191 characters (cmd.exe runs WinRM's
// commands): with all of lib.ps1 (8 KB) in front of it, even ping went on
// stdin behind the bootstrap. A step takes only the functions it uses, so
// that the short ones go whole on the command line.
func TestShortStepsFitOnTheCommandLine(t *testing.T) {
	fits := map[string]bool{}
	for _, name := range ScriptNames() {
		src, err := loadScript(name)
		if err != nil {
			t.Fatal(err)
		}
		var params []Param
		for _, p := range src.params {
			// Parameters as long as a URL or a path of a lab's inventory.
			params = append(params, Param{Name: p, Value: strings.Repeat("v", 60)})
		}
		script, err := RenderScript(name, params)
		if err != nil {
			t.Fatal(err)
		}
		fits[name] = remote.FitsCommandLine(script)
		t.Logf("%-20s %5d characters, on the command line: %v, lib.ps1 functions: %v", name, len(script), fits[name], LibraryFunctions(script))
	}
	// ping is what the harness polls a rebooting machine with; reboot is
	// the command whose connection drops.
	for _, name := range []string{StepPing, StepReboot} {
		if !fits[name] {
			t.Errorf("step %s does not fit on a Windows command line", name)
		}
	}
}

// A step's library holds every lib.ps1 function its script calls, directly
// or through another function, and no other.
func TestStepLibraryHoldsWhatTheStepCalls(t *testing.T) {
	parts, err := libraryParts()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range parts {
		if p.function != "" {
			names = append(names, p.function)
		}
	}
	for _, step := range ScriptNames() {
		src, _ := loadScript(step)
		var params []Param
		for _, p := range src.params {
			params = append(params, Param{Name: p, Value: "x"})
		}
		script, err := RenderScript(step, params)
		if err != nil {
			t.Fatal(err)
		}
		held := LibraryFunctions(script)
		code := withoutComments(script)
		for _, name := range names {
			if slices.Contains(held, name) {
				continue
			}
			if mentions(code, name) {
				t.Errorf("step %s calls %s, which its library lacks", step, name)
			}
		}
		for _, name := range held {
			// Without the function's own definition, something else must
			// call it.
			lib, _ := library(src.body)
			rest := strings.Replace(withoutComments(lib)+withoutComments(src.body), "function "+name+" {", "", 1)
			if !mentions(rest, name) {
				t.Errorf("step %s holds %s, which nothing calls", step, name)
			}
		}
	}
	// The functions a step calls through others come too: Find-SourceFile
	// calls Expand-Source, which calls Get-SourceFile and Invoke-Native.
	lib, err := library("Find-SourceFile -Source $s -Name x -Work $w")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"function Find-SourceFile {", "function Expand-Source {", "function Get-SourceFile {", "function Invoke-Native {", "function Test-Archive {"} {
		if !strings.Contains(lib, want) {
			t.Errorf("the library of a Find-SourceFile call lacks %q", want)
		}
	}
	if strings.Contains(lib, "function Write-Status {") || !strings.Contains(lib, "Set-StrictMode -Version Latest") {
		t.Error("the library holds a function nothing calls, or lacks what runs before the functions")
	}
}

// lib.ps1 splits into its functions and the lines between them with nothing
// lost, each function whole (its braces balance).
func TestLibraryParts(t *testing.T) {
	data, err := scriptFS.ReadFile("scripts/" + libraryFile)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := libraryParts()
	if err != nil {
		t.Fatal(err)
	}
	var whole strings.Builder
	seen := map[string]bool{}
	for _, p := range parts {
		whole.WriteString(p.text)
		if p.function == "" {
			continue
		}
		if seen[strings.ToLower(p.function)] {
			t.Errorf("lib.ps1 defines %s twice", p.function)
		}
		seen[strings.ToLower(p.function)] = true
		code := stripStringsAndComments(t, p.function, p.text)
		if strings.Count(code, "{") != strings.Count(code, "}") {
			t.Errorf("function %s: its braces do not balance: a line that is \"}\" alone ends it early", p.function)
		}
	}
	if whole.String() != strings.ReplaceAll(string(data), "\r\n", "\n") {
		t.Error("lib.ps1's parts do not make lib.ps1")
	}
	if len(seen) < 10 {
		t.Errorf("%d functions found in lib.ps1", len(seen))
	}
}

func TestMentions(t *testing.T) {
	for code, want := range map[string]bool{
		"Get-State -Name x":            true,
		"$s = get-state -Name x":       true,
		"Get-StateValue $s 'k'":        false,
		"(Get-State x)":                true,
		"My-Get-State":                 false,
		"& Get-State":                  true,
		"Wait-Condition { Get-State }": true,
	} {
		if got := mentions(code, "Get-State"); got != want {
			t.Errorf("mentions(%q, Get-State) = %v", code, got)
		}
	}
}
