package remote

import (
	_ "embed"
	"encoding/base64"
	"errors"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/masterzen/winrm"
)

// stdinBootstrap runs a script that comes on stdin as the base64 of its
// UTF-8 text: base64 because the console's code page must not matter. It
// reads stdin with $input, as Ansible's bootstrap does over WinRM. The exit
// code is the script's: its own "exit N", else its last native command's
// non-zero code, else 1 when its last statement failed. It is
// stdin-bootstrap.ps1 (checked there by pscheck and Pester), its line
// endings made LF whatever the checkout did.
//
// The first line is the marker the wsmantest fake recognises
// (wsmantest.StdinBootstrapMarker); keep the two in step.
var stdinBootstrap = strings.ReplaceAll(stdinBootstrapFile, "\r\n", "\n")

//go:embed stdin-bootstrap.ps1
var stdinBootstrapFile string

// stdinLine is the length of the base64 lines sent on stdin.
const stdinLine = 76

// stdinChunk is how much stdin goes in one write (winrm splits further to
// stay under its envelope size).
const stdinChunk = 32 << 10

// powershellPrefix starts every command line: no profile scripts (a
// profile on the machine must not change, slow or break a step) and no
// prompts (a step that would ask fails instead of waiting), as Ansible
// runs PowerShell over WinRM.
const powershellPrefix = "powershell.exe -NoProfile -NonInteractive -EncodedCommand "

// progressPreamble goes in front of every script, as masterzen/winrm's
// Powershell puts it: progress records would come back as CLIXML on
// stderr. The wsmantest fake takes it off again.
const progressPreamble = "$ProgressPreference = 'SilentlyContinue';"

// powershellCommand is the command line that runs script:
// -EncodedCommand takes the base64 of the script's UTF-16LE text.
func powershellCommand(script string) string {
	units := utf16.Encode([]rune(progressPreamble + script))
	raw := make([]byte, 2*len(units))
	for i, u := range units {
		raw[2*i], raw[2*i+1] = byte(u), byte(u>>8)
	}
	return powershellPrefix + base64.StdEncoding.EncodeToString(raw)
}

// commandFor returns the command line that runs script and what to send on
// its stdin: the encoded script itself when the command line is short
// enough, else the stdin bootstrap with the script on stdin.
func commandFor(script string, maxCommandLine int) (cmdline string, stdin []byte, err error) {
	if !utf8.ValidString(script) {
		return "", nil, errors.New("the script is not valid UTF-8")
	}
	if cmdline = powershellCommand(script); len(cmdline) <= maxCommandLine {
		return cmdline, nil, nil
	}
	return powershellCommand(stdinBootstrap), encodeStdinScript(script), nil
}

// FitsCommandLine reports whether script goes on the command line whole
// (MaxCommandLine characters at most), rather than on stdin behind the
// bootstrap.
func FitsCommandLine(script string) bool {
	return utf8.ValidString(script) && len(powershellCommand(script)) <= MaxCommandLine
}

// encodeStdinScript is what the bootstrap reads: the base64 of the script's
// UTF-8 text, in CRLF-terminated lines.
func encodeStdinScript(script string) []byte {
	b64 := base64.StdEncoding.EncodeToString([]byte(script))
	var b strings.Builder
	b.Grow(len(b64) + len(b64)/stdinLine*2 + 2)
	for len(b64) > stdinLine {
		b.WriteString(b64[:stdinLine])
		b.WriteString("\r\n")
		b64 = b64[stdinLine:]
	}
	b.WriteString(b64)
	b.WriteString("\r\n")
	return []byte(b.String())
}

// sendStdin sends data on the command's stdin and closes it. winrm's stdin
// writer loses the error of a failed Send (it returns io.ErrShortWrite), so
// the transport's record of it is preferred.
func sendStdin(cmd *winrm.Command, data []byte, rt *runTransport) error {
	for len(data) > 0 {
		n := min(len(data), stdinChunk)
		if _, err := cmd.Stdin.Write(data[:n]); err != nil {
			return firstError(rt.lastSendErr(), err)
		}
		data = data[n:]
	}
	if err := cmd.Stdin.Close(); err != nil {
		return firstError(rt.lastSendErr(), err)
	}
	return nil
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
