package flagvalue

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// parse parses args with fs made to refuse repeats, as every command does.
func parse(fs *pflag.FlagSet, args ...string) error {
	RefuseRepeats(fs, Repeats{})
	return fs.Parse(args)
}

func TestValuesRefuseBadInputNamingTheFix(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o600)
	for _, tc := range []struct {
		args []string
		want string // "" when taken
	}{
		{[]string{"--settle", "20s"}, ""},
		{[]string{"--settle", "0"}, `invalid argument "0" for "--settle" flag: want a positive duration, such as 20s`},
		{[]string{"--settle", "-1s"}, "want a positive duration"},
		{[]string{"--settle", "soon"}, "not a duration: give one such as 20s"},
		{[]string{"--older-than", "59m"}, "59m0s is below the floor of 1h0m0s (younger may be live): give 1h0m0s or more"},
		{[]string{"--older-than", "1h"}, ""},
		{[]string{"--remote-nodes", "-5"}, "want remote nodes, a whole number from 0 to 4"},
		{[]string{"--remote-nodes", "4"}, ""},
		{[]string{"--machine", ""}, "empty: give a machine's name, or leave the flag out"},
		{[]string{"--machine", "win-1", "--machine", "win-2"}, `--machine was given already ("win-1"): it takes one value, give it once`},
		{[]string{"--machine", "win-1", "--machine", "win-1"}, ""},
		{[]string{"--kubeconfig", "a", "--existing", "b"}, `--kubeconfig was given already ("a"), and it is the same setting: give one of them once`},
		{[]string{"--dir", file}, "is not a directory: give a directory that can be written"},
		{[]string{"--dir", filepath.Join(file, "sub")}, "cannot be made: " + file + " is not a directory"},
		{[]string{"--dir", filepath.Join(dir, "new", "sub")}, ""},
		{[]string{"--out", dir}, "is a directory: give a file's path"},
		{[]string{"--out", "-"}, ""},
		{[]string{"--out", filepath.Join(file, "x")}, "give a file in a directory that can be written"},
		{[]string{"--browser", filepath.Join(dir, "nope")}, "is no program that can be run"},
		{[]string{"--claim", "A", "--claim", "B,C"}, ""},
	} {
		var (
			settle, older                time.Duration
			remote                       int
			machine, kc, d, out, browser string
			claim                        string
		)
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(new(strings.Builder))
		fs.Var(Duration(&settle, time.Second, 0, "", "20s"), "settle", "")
		fs.Var(Duration(&older, 0, time.Hour, "younger may be live", "24h"), "older-than", "")
		fs.Var(Int(&remote, -1, 0, 4, "remote nodes"), "remote-nodes", "")
		fs.Var(Name(&machine, "", "a machine's name"), "machine", "")
		fs.StringVar(&kc, "kubeconfig", "", "")
		fs.StringVar(&kc, "existing", "", "")
		fs.Var(Dir(&d, "", "reports"), "dir", "")
		fs.Var(OutFile(&out, "", true), "out", "")
		fs.Var(Program(&browser, "", "the Chromium binary"), "browser", "")
		fs.Var(List(&claim, ""), "claim", "")
		err := parse(fs, tc.args...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
		if tc.args[0] == "--claim" && claim != "A,B,C" {
			t.Errorf("--claim A --claim B,C is %q, want A,B,C", claim)
		}
	}
}

// A directory that cannot be written is refused; checking makes nothing.
func TestWritableDir(t *testing.T) {
	dir := t.TempDir()
	if err := WritableDir(filepath.Join(dir, "a", "b")); err != nil {
		t.Error(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the check left %v", entries)
	}
	if err := WritableDir("/proc/winconform"); err == nil {
		t.Error("/proc/winconform is writable")
	}
}
