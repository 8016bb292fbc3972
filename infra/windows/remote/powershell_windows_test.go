package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// These tests run on Windows only (the Windows runners of
// .github/workflows/windows.yml): the command lines and the stdin bootstrap
// the harness sends over WinRM go through the real powershell.exe, locally.

// runReal runs script as WinRM would (see Local) and checks which way it
// travelled: on stdin through the bootstrap, or on the command line.
func runReal(t *testing.T, script string, viaStdin bool) Result {
	t.Helper()
	cmdline, stdin, err := commandFor(script, MaxCommandLine)
	if err != nil {
		t.Fatal(err)
	}
	if (stdin != nil) != viaStdin {
		t.Fatalf("the script went on stdin: %t, want %t (a command line of %d characters)", stdin != nil, viaStdin, len(cmdline))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Local{}.RunPS(ctx, "test", script)
	if err != nil {
		t.Fatalf("running powershell.exe: %v", err)
	}
	t.Logf("exit code %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	return res
}

// long makes a script long enough to need the stdin bootstrap.
func long(script string) string {
	return "# " + strings.Repeat("padding ", 600) + "\n" + script
}

func TestRealPowerShellRunsACommandLineScript(t *testing.T) {
	res := runReal(t, "Write-Output 'hello from the command line'\nWrite-Output $PSVersionTable.PSVersion.Major", false)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "hello from the command line") {
		t.Errorf("exit code %d, stdout %q", res.ExitCode, res.Stdout)
	}
	if !strings.Contains(res.Stdout, "5\r\n") {
		t.Errorf("not Windows PowerShell 5.1: %q", res.Stdout)
	}
}

// TestRealPowerShellGetsALongScriptWhole sends a script with a literal of
// 20,000 characters, non-ASCII ones among them, through the bootstrap: the
// SHA-256 PowerShell computes of the literal is the one Go computes.
func TestRealPowerShellGetsALongScriptWhole(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 20000; i++ {
		fmt.Fprintf(&b, "line %05d: caf\u00e9, it\u2019s \u65e5\u672c, \u00df\n", i)
	}
	literal := strings.TrimSuffix(b.String(), "\n")
	sum := sha256.Sum256([]byte(literal))
	want := strings.ToUpper(hex.EncodeToString(sum[:]))
	script := "$text = @'\n" + literal + "\n'@\n" +
		"$hash = [Security.Cryptography.SHA256]::Create().ComputeHash([Text.Encoding]::UTF8.GetBytes($text))\n" +
		"Write-Output ('sha256 ' + [BitConverter]::ToString($hash).Replace('-', ''))\n" +
		"Write-Output ('length ' + $text.Length)\n"
	res := runReal(t, script, true)
	if res.ExitCode != 0 {
		t.Fatalf("exit code %d: %s", res.ExitCode, res.StderrText())
	}
	if !strings.Contains(res.Stdout, "sha256 "+want) {
		t.Errorf("the script did not arrive whole: want sha256 %s, stdout %q", want, res.Stdout)
	}
	if !strings.Contains(res.Stdout, fmt.Sprintf("length %d", len([]rune(literal)))) {
		t.Errorf("want length %d in %q", len([]rune(literal)), res.Stdout)
	}
}

// TestRealPowerShellErrorsComeBackAsCLIXML: a script that throws exits with
// code 1, and its error comes on stderr as CLIXML, which decodeCLIXML reads.
func TestRealPowerShellErrorsComeBackAsCLIXML(t *testing.T) {
	script := "Set-StrictMode -Version Latest\n$ErrorActionPreference = 'Stop'\nWrite-Output 'before the failure'\nthrow 'kube-proxy.exe is missing: the kubelet comes before kube-proxy'\n"
	for _, viaStdin := range []bool{false, true} {
		s := script
		if viaStdin {
			s = long(script)
		}
		res := runReal(t, s, viaStdin)
		if res.ExitCode != 1 {
			t.Errorf("stdin %t: exit code %d, want 1", viaStdin, res.ExitCode)
		}
		if !strings.Contains(res.Stdout, "before the failure") {
			t.Errorf("stdin %t: stdout %q", viaStdin, res.Stdout)
		}
		if !strings.Contains(res.Stderr, clixmlMarker) {
			t.Errorf("stdin %t: stderr is not CLIXML, as it is over WinRM: %q", viaStdin, res.Stderr)
		}
		text := res.StderrText()
		if !strings.Contains(text, "kube-proxy.exe is missing: the kubelet comes before kube-proxy") || strings.Contains(text, "<Objs") {
			t.Errorf("stdin %t: decoded stderr %q", viaStdin, text)
		}
		var exit *ExitError
		if err := res.Err(); !errors.As(err, &exit) || !strings.Contains(exit.StderrTail, "kube-proxy.exe is missing") {
			t.Errorf("stdin %t: Result.Err() = %v", viaStdin, err)
		}
	}
}

// TestRealPowerShellExitCodes: the script's own exit code comes back, and
// through the bootstrap so does a native program's that ended the script.
func TestRealPowerShellExitCodes(t *testing.T) {
	for _, c := range []struct {
		script   string
		viaStdin bool
		want     int
	}{
		{"Write-Output 'x'\nexit 3\n", false, 3},
		{long("Write-Output 'x'\nexit 3\n"), true, 3},
		{long("Write-Output 'x'\n& cmd.exe /c exit 5\n"), true, 5},
		{long("Write-Output 'x'\n"), true, 0},
	} {
		if res := runReal(t, c.script, c.viaStdin); res.ExitCode != c.want {
			t.Errorf("%q: exit code %d, want %d", c.script[max(0, len(c.script)-30):], res.ExitCode, c.want)
		}
	}
}

// TestRealPowerShellKeepsTheScriptOffItsStreams: the script (a bootstrap
// token in its prelude) travels on stdin; neither it nor the token appears
// in what comes back, even when the script fails.
func TestRealPowerShellKeepsTheScriptOffItsStreams(t *testing.T) {
	const token = "w1nc0n.5ecretf0rp3ster"
	script := long("$Token = '" + token + "'\n$ErrorActionPreference = 'Stop'\nWrite-Output 'joining'\n$joinArgs = @('join', '--tls-bootstrap-token', $Token)\nthrow ('kubeadm join failed with ' + $joinArgs.Count + ' arguments')\n")
	res := runReal(t, script, true)
	if res.ExitCode != 1 || !strings.Contains(res.StderrText(), "kubeadm join failed with 3 arguments") {
		t.Errorf("exit code %d, stderr %q", res.ExitCode, res.StderrText())
	}
	for name, s := range map[string]string{"stdout": res.Stdout, "stderr": res.Stderr, "decoded stderr": res.StderrText()} {
		if strings.Contains(s, token) || strings.Contains(s, "padding padding") {
			t.Errorf("%s holds the token or the script: %q", name, s)
		}
	}
}
