package wsmantest

import (
	"slices"
	"testing"
	"time"
)

func TestInterpret(t *testing.T) {
	enc := EncodeCommand(winrmPreamble + "Get-Date")
	tests := []struct {
		name    string
		command string
		args    []string
		want    invocation
	}{
		{"winrm.Powershell", "powershell.exe -EncodedCommand " + enc, nil, invocation{powershell: true, encoded: true, script: "Get-Date"}},
		{"arguments apart", "powershell", []string{"-NoProfile", "-ExecutionPolicy", "Bypass", "-enc", enc}, invocation{powershell: true, encoded: true, script: "Get-Date"}},
		{"abbreviated -e", `C:\Windows\System32\WindowsPowerShell\v1.0\PowerShell.EXE -e ` + enc, nil, invocation{powershell: true, encoded: true, script: "Get-Date"}},
		{"-ec", "pwsh -ec " + enc, nil, invocation{powershell: true, encoded: true, script: "Get-Date"}},
		{"-Command text", `powershell.exe -NoProfile -Command "Get-Item C:\"`, nil, invocation{powershell: true, script: `Get-Item C:"`}},
		{"-Command -", "powershell.exe -NonInteractive -Command -", nil, invocation{powershell: true, stdinScript: true}},
		{"bare script", "powershell.exe Get-Date -Format o", nil, invocation{powershell: true, script: "Get-Date -Format o"}},
		{"bootstrap", "powershell.exe -EncodedCommand " + EncodeCommand(StdinBootstrapMarker+"\r\n$x = $input"), nil,
			invocation{powershell: true, encoded: true, bootstrap: true, script: StdinBootstrapMarker + "\r\n$x = $input"}},
		{"cmd", "ipconfig /all", nil, invocation{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := interpret(tt.command, tt.args); got != tt.want {
				t.Errorf("interpret = %+v, want %+v", got, tt.want)
			}
		})
	}
	if inv := interpret("powershell.exe -EncodedCommand ***", nil); inv.err == nil || !inv.powershell {
		t.Errorf("bad base64: %+v", inv)
	}
	if inv := interpret("powershell.exe -EncodedCommand", nil); inv.err == nil {
		t.Errorf("missing value: %+v", inv)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, s := range []string{"", "Write-Output 'héllo wörld'", "emoji 🙂 needs a surrogate pair", "\ufeffBOM"} {
		got, err := decodeEncodedCommand(EncodeCommand(s))
		want := stripBOM(s)
		if err != nil || got != want {
			t.Errorf("round trip of %q = %q, %v", s, got, err)
		}
	}
	if _, err := decodeEncodedCommand("QQ=="); err == nil {
		t.Error("an odd number of bytes decoded")
	}
}

func TestSplitCommandLine(t *testing.T) {
	tests := map[string][]string{
		`a b  c`:                {"a", "b", "c"},
		`"a b" c`:               {"a b", "c"},
		`a\\b "c\"d" e\\\"f`:    {`a\\b`, `c"d`, `e\"f`},
		`x "trailing\\" y`:      {"x", `trailing\`, "y"},
		"  leading\ttabs\r\n  ": {"leading", "tabs"},
		`""`:                    {""},
	}
	for in, want := range tests {
		if got := splitCommandLine(in); !slices.Equal(got, want) {
			t.Errorf("splitCommandLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := map[string]time.Duration{
		"PT60S":        60 * time.Second,
		"PT0.500S":     500 * time.Millisecond,
		"PT1M30S":      90 * time.Second,
		"P0DT0H1M1S":   61 * time.Second,
		"P1D":          24 * time.Hour,
		"PT7200.000S":  2 * time.Hour,
		"PT2H":         2 * time.Hour,
		"PT0.25S":      250 * time.Millisecond,
		"PT10.S":       10 * time.Second,
		"P0DT0H0M0S":   0,
		"PT0S":         0,
		"PT1H0M0.001S": time.Hour + time.Millisecond,
	}
	for in, want := range tests {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "60", "PT-1S", "PTS"} {
		if _, err := parseDuration(bad); err == nil {
			t.Errorf("parseDuration(%q) succeeded", bad)
		}
	}
}

func TestDecodeBootstrapStdin(t *testing.T) {
	got, err := decodeBootstrapStdin([]byte("V3JpdGUt\r\nT3V0cHV0\n IDE=\r\n"))
	if err != nil || got != "Write-Output 1" {
		t.Errorf("got %q, %v", got, err)
	}
}
