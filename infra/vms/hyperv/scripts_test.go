package hyperv

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/windows"
)

// Every script renders with exactly its parameters, each a single-quoted
// string: a value with quotes (the ASCII one and the typographic ones
// PowerShell also reads as quotes) and line breaks stays one string.
func TestRender(t *testing.T) {
	notes := "winconform-run=it's\r\nwinconform-created=x\u2019y; Remove-VM *"
	script, err := render(scriptCreate, param{"Name", "win-r-1"}, param{"RunID", "r"}, param{"Image", `D:\g.vhdx`}, param{"VhdxDir", `D:\w`},
		param{"Switch", "k8s"}, param{"Generation", "2"}, param{"SecureBootTemplate", ""}, param{"CPUs", "2"}, param{"MemoryBytes", "1024"},
		param{"Notes", notes})
	if err != nil {
		t.Fatal(err)
	}
	if want := "$Notes = 'winconform-run=it''s\r\nwinconform-created=x\u2019\u2019y; Remove-VM *'\n"; !strings.Contains(script, want) {
		t.Errorf("the script does not hold %q:\n%s", want, script)
	}
	if !strings.HasPrefix(script, windows.StepMarker+scriptCreate+"\n"+preludeStart+"\n$StepName = 'hyperv-create'\n") {
		t.Errorf("the script does not start with its marker and prelude:\n%s", script[:200])
	}
	if !strings.Contains(script, "function Write-Status") || !strings.Contains(script, "Hyper-V\\New-VHD") {
		t.Errorf("the script lacks the library or its body")
	}
	if _, err := render(scriptCreate, param{"Name", "x"}); err == nil || !strings.Contains(err.Error(), "takes parameters") {
		t.Errorf("render with parameters missing: %v", err)
	}
	if _, err := render(scriptList, param{"VhdxDir", "a\x00b"}); err == nil {
		t.Errorf("render with a NUL in a value: no error")
	}
}

// Every embedded script has its marker and its parameters' line, and is one
// the provider runs.
func TestScriptsEmbedded(t *testing.T) {
	known := map[string]bool{scriptHost: true, scriptCreate: true, scriptDelete: true, scriptList: true, scriptAddresses: true, scriptConsole: true}
	entries, err := fs.ReadDir(scriptFS, "scripts")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".ps1")
		if !ok || e.Name() == libraryFile || strings.HasSuffix(name, ".Tests") {
			continue
		}
		if !known[name] {
			t.Errorf("scripts/%s is embedded but the provider does not run it", e.Name())
		}
		seen++
	}
	if seen != len(known) {
		t.Errorf("%d scripts embedded, the provider runs %d", seen, len(known))
	}
}
