package main

import (
	"os"
	"strings"

	"golang.org/x/term"
)

// colorWanted says whether the suite's output may carry colour codes: not
// when asked not to (--no-color, NO_COLOR), in CI (CI=true, as GitHub
// Actions and most CI systems set it), or when standard output is not a
// terminal (a log file, a pipe).
func colorWanted(noColor bool, getenv func(string) string, stdout *os.File) bool {
	switch {
	case noColor, getenv("NO_COLOR") != "":
		return false
	case ciEnv(getenv("CI")):
		return false
	}
	return stdout != nil && term.IsTerminal(int(stdout.Fd()))
}

// ciEnv reads $CI: set to anything but false or 0.
func ciEnv(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v != "" && v != "false" && v != "0"
}
