package wsmantest

import (
	"encoding/base64"
	"errors"
	"path"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// winrmPreamble is what winrm.Powershell puts in front of every script; the
// fake takes it off so that Call.Script is the script the caller wrote.
const winrmPreamble = "$ProgressPreference = 'SilentlyContinue';"

// StdinBootstrapMarker starts the first line of a stdin bootstrap: an
// encoded PowerShell command that reads the base64 of a script's UTF-8 text
// from stdin and runs it. Scripts too long for a Windows command line travel
// that way; the fake runs the bootstrap's job itself and gives the handler
// the script it carried.
const StdinBootstrapMarker = "# stdin-script: base64-utf8"

// invocation is what the fake understood of a command line.
type invocation struct {
	// powershell is true for powershell.exe and pwsh.
	powershell bool
	// script is the script given on the command line (decoded for
	// -EncodedCommand, preamble removed).
	script string
	// encoded is true when script came from -EncodedCommand.
	encoded bool
	// stdinScript is true when the script is read from stdin as text
	// (-Command - or -File -).
	stdinScript bool
	// bootstrap is true when script is a stdin bootstrap.
	bootstrap bool
	// err is set when the command line names powershell but cannot be
	// understood (a bad -EncodedCommand).
	err error
}

// readsStdin reports whether the command reads its stdin before doing
// anything else.
func (inv invocation) readsStdin() bool { return inv.stdinScript || inv.bootstrap }

// interpret reads a command and its arguments as cmd.exe would pass them on.
func interpret(command string, args []string) invocation {
	words := splitCommandLine(command)
	for _, a := range args {
		words = append(words, splitCommandLine(a)...)
	}
	if len(words) == 0 || !isPowerShell(words[0]) {
		return invocation{}
	}
	inv := invocation{powershell: true}
	rest := words[1:]
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if !strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "/") {
			// The first word that is not a parameter starts the command.
			inv.script = strings.Join(rest[i:], " ")
			return inv
		}
		name := strings.ToLower(strings.TrimLeft(w, "-/"))
		switch {
		case name == "ec" || isPrefix(name, "encodedcommand", 1):
			if i+1 >= len(rest) {
				inv.err = errors.New("-EncodedCommand needs a value")
				return inv
			}
			script, err := decodeEncodedCommand(rest[i+1])
			if err != nil {
				inv.err = err
				return inv
			}
			inv.encoded = true
			inv.script = strings.TrimPrefix(script, winrmPreamble)
			inv.bootstrap = isBootstrap(inv.script)
			return inv
		case isPrefix(name, "command", 1), isPrefix(name, "file", 1):
			script := strings.Join(rest[i+1:], " ")
			if script == "-" {
				inv.stdinScript = true
				script = ""
			}
			inv.script = script
			return inv
		case valued[name]:
			i++ // skip the parameter's value
		}
	}
	return inv
}

// valued lists the powershell.exe parameters that take a value (and the
// spellings commonly used), so that the value is not read as the command.
var valued = map[string]bool{
	"executionpolicy": true, "ep": true, "ex": true, "exec": true,
	"windowstyle": true, "w": true, "win": true,
	"outputformat": true, "of": true, "o": true,
	"inputformat": true, "if": true, "i": true,
	"configurationname": true, "psconsolefile": true, "version": true, "v": true,
	"workingdirectory": true, "wd": true, "settingsfile": true,
	"encodedarguments": true, "ea": true,
}

// isPrefix reports whether abbrev abbreviates word (at least min letters), as
// PowerShell accepts for its parameters.
func isPrefix(abbrev, word string, min int) bool {
	return len(abbrev) >= min && strings.HasPrefix(word, abbrev)
}

// isPowerShell reports whether an executable is Windows PowerShell or pwsh.
func isPowerShell(exe string) bool {
	exe = strings.ToLower(strings.ReplaceAll(exe, `\`, "/"))
	base := strings.TrimSuffix(path.Base(exe), ".exe")
	return base == "powershell" || base == "pwsh"
}

// isBootstrap reports whether a script is a stdin bootstrap.
func isBootstrap(script string) bool {
	first, _, _ := strings.Cut(strings.TrimLeft(script, " \t\r\n"), "\n")
	return strings.TrimSpace(first) == StdinBootstrapMarker
}

// decodeEncodedCommand decodes -EncodedCommand's value: base64 of UTF-16LE.
func decodeEncodedCommand(b64 string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", errors.New("-EncodedCommand is not base64: " + err.Error())
	}
	if len(raw)%2 != 0 {
		return "", errors.New("-EncodedCommand is not UTF-16: odd length")
	}
	units := make([]uint16, len(raw)/2)
	for i := range units {
		units[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
	}
	if len(units) > 0 && units[0] == 0xfeff {
		units = units[1:]
	}
	return string(utf16.Decode(units)), nil
}

// EncodeCommand encodes script for powershell.exe -EncodedCommand: base64 of
// its UTF-16LE text. Tests use it to build command lines by hand.
func EncodeCommand(script string) string {
	units := utf16.Encode([]rune(script))
	raw := make([]byte, 2*len(units))
	for i, u := range units {
		raw[2*i], raw[2*i+1] = byte(u), byte(u>>8)
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// decodeBootstrapStdin decodes what a stdin bootstrap reads: base64 (line
// breaks and spaces allowed, as .NET's Convert.FromBase64String allows) of
// UTF-8 text.
func decodeBootstrapStdin(stdin []byte) (string, error) {
	clean := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, string(stdin))
	raw, err := base64.StdEncoding.DecodeString(clean)
	if err != nil {
		return "", errors.New(`Exception calling "FromBase64String" with "1" argument(s): "The input is not a valid Base-64 string."`)
	}
	return stripBOM(string(raw)), nil
}

// stdinText is stdin read as a script: UTF-8 without a byte-order mark.
func stdinText(stdin []byte) string {
	if !utf8.Valid(stdin) {
		return string([]rune(string(stdin)))
	}
	return stripBOM(string(stdin))
}

func stripBOM(s string) string { return strings.TrimPrefix(s, "\ufeff") }

// splitCommandLine splits a Windows command line into words the way
// CommandLineToArgvW does for the common cases: white space separates words,
// double quotes group them, and backslashes escape a double quote.
func splitCommandLine(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			if i < len(s) && s[i] == '"' {
				cur.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					cur.WriteByte('"')
				} else {
					quoted = !quoted
				}
			} else {
				cur.WriteString(strings.Repeat(`\`, n))
				i--
			}
			inWord = true
		case c == '"':
			quoted = !quoted
			inWord = true
		case (c == ' ' || c == '\t' || c == '\r' || c == '\n') && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
