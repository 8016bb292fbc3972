package remote

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/winconform/winconform/testing/wsmantest"
)

func TestBootstrapCarriesTheFakesMarker(t *testing.T) {
	first, _, _ := strings.Cut(stdinBootstrap, "\n")
	if first != wsmantest.StdinBootstrapMarker {
		t.Errorf("the bootstrap starts %q, the fake looks for %q", first, wsmantest.StdinBootstrapMarker)
	}
}

func TestCommandFor(t *testing.T) {
	cmd, stdin, err := commandFor("Get-Date", MaxCommandLine)
	if err != nil || stdin != nil || !strings.HasPrefix(cmd, "powershell.exe -NoProfile -NonInteractive -EncodedCommand ") {
		t.Errorf("short script: %q %q %v", cmd, stdin, err)
	}
	long := strings.Repeat("x", 4000)
	cmd, stdin, err = commandFor(long, MaxCommandLine)
	if err != nil || len(cmd) > MaxCommandLine {
		t.Fatalf("long script: a command line of %d, %v", len(cmd), err)
	}
	lines := strings.Split(strings.TrimSuffix(string(stdin), "\r\n"), "\r\n")
	for _, l := range lines[:len(lines)-1] {
		if len(l) != stdinLine {
			t.Fatalf("stdin line of %d characters", len(l))
		}
	}
	decoded, err := base64.StdEncoding.DecodeString(strings.Join(lines, ""))
	if err != nil || string(decoded) != long {
		t.Errorf("stdin does not decode to the script: %v", err)
	}
	if _, _, err := commandFor("bad \xff utf-8", MaxCommandLine); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
}

func TestPipeMode(t *testing.T) {
	msg := `<w:OptionSet><w:Option Name="WINRS_CONSOLEMODE_STDIN">TRUE</w:Option><w:Option Name="WINRS_SKIP_CMD_SHELL">FALSE</w:Option></w:OptionSet>`
	got, ok := pipeMode(msg)
	if !ok || got != `<w:OptionSet><w:Option Name="WINRS_CONSOLEMODE_STDIN">FALSE</w:Option><w:Option Name="WINRS_SKIP_CMD_SHELL">FALSE</w:Option></w:OptionSet>` {
		t.Errorf("pipeMode = %q, %v", got, ok)
	}
	if _, ok := pipeMode("<w:OptionSet/>"); ok {
		t.Error("pipeMode found an option in a message without one")
	}
}

func TestActionOf(t *testing.T) {
	msg := `<a:Action mustUnderstand="true">http://schemas.microsoft.com/wbem/wsman/1/windows/shell/Signal</a:Action>`
	if got := actionOf(msg); got != "Signal" {
		t.Errorf("actionOf = %q", got)
	}
	if got := actionOf("<x/>"); got != "" {
		t.Errorf("actionOf = %q", got)
	}
}

func TestWSManDuration(t *testing.T) {
	if got := wsmanDuration(1500e6); got != "PT1.500S" {
		t.Errorf("got %q", got)
	}
}

func TestFaultErrorText(t *testing.T) {
	f := &FaultError{Subcode: "w:TimedOut", Reason: "took too long", WSManCode: "2150858793"}
	if got := f.Error(); !strings.Contains(got, "OperationTimeout") || !strings.Contains(got, "took too long") {
		t.Errorf("a w:TimedOut fault must mention OperationTimeout for winrm to poll again: %q", got)
	}
	g := &FaultError{Subcode: "w:InternalError", Reason: "Generic.", Message: "Details."}
	if got := g.Error(); got != "WS-Management fault w:InternalError: Generic. Details." {
		t.Errorf("got %q", got)
	}
}

func TestParseFault(t *testing.T) {
	body := `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body><s:Fault><s:Code><s:Value>s:Sender</s:Value><s:Subcode><s:Value>w:InvalidSelectors</s:Value></s:Subcode></s:Code><s:Reason><s:Text xml:lang="en-US">Bad selectors.</s:Text></s:Reason><s:Detail><f:WSManFault xmlns:f="http://schemas.microsoft.com/wbem/wsman/1/wsmanfault" Code="2150858843" Machine="m"><f:Message><f:ProviderFault provider="x">The shell was not found &amp; gone.</f:ProviderFault></f:Message></f:WSManFault></s:Detail></s:Fault></s:Body></s:Envelope>`
	f := parseFault([]byte(body))
	if f == nil || f.Code != "s:Sender" || f.Subcode != "w:InvalidSelectors" || f.Reason != "Bad selectors." || f.WSManCode != "2150858843" || f.Message != "The shell was not found & gone." {
		t.Errorf("parsed %+v", f)
	}
	if parseFault([]byte("<not-a-fault/>")) != nil {
		t.Error("a fault found in nothing")
	}
}
