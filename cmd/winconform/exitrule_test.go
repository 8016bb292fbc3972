package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Kinds of bad input in the exit-status table.
const (
	badFlag = "flag" // a flag's value the flag refuses
	badFile = "file" // a file a flag or argument names that cannot be used
	badArg  = "arg"  // an argument the command does not take
)

// refusal is one bad input of a command: its kind, the command line after
// the command's path, and what the last line of stderr says (the flag or
// field, and the fix).
type refusal struct {
	kind string
	args []string
	want []string
}

// The exit-status rule (docs/exit-status.md), for every command: refused
// input (a bad flag value, file or argument) exits 2, with the last line of
// stderr naming the flag or field and the fix, before any contact with
// Docker, kind, kubectl, sonobuoy, a provider or a cluster.
//
// Environment failures exit 1, not 2, and are not in the table: no
// Chromium on PATH for report --screenshot (without --browser), no Docker
// daemon, a missing build output (sonobuoy images' suite-runner), a
// provider or cluster that does not answer.
func TestEveryCommandRefusesBadInputWithExitTwo(t *testing.T) {
	dir := t.TempDir()
	file := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cluster := file("cluster.yaml", "nmae: winconform\n")
	inventory := file("machines.yaml", "machines:\n  - nmae: win-1\n")
	vmsFile := file("vms.yaml", "provider: nosuch\n")
	overrides := file("overrides.yaml", "imgaes: {}\n")
	state := file("state.json", "nope")
	policy := file("policy.yaml", "requird: [NET-01]\n")
	missing := filepath.Join(dir, "missing")
	unwritable := "/proc/winconform/out" // no directory can be made there, not even by root
	typo := []string{"nmae", `did you mean "name"`}
	table := map[string][]refusal{
		"winconform": {{badArg, []string{"bogus"}, []string{`unknown command "bogus"`, "winconform --help"}}},
		"up": {
			{badFlag, []string{"--remote-nodes", "-5"}, []string{`"--remote-nodes"`, "a whole number from 0 to 4"}},
			{badFile, []string{"--config", cluster}, typo},
			{badArg, []string{"extra"}, []string{`unknown command "extra"`}},
		},
		"down": {
			{badFlag, []string{"--name", ""}, []string{`"--name"`, "give the cluster's name"}},
			{badFile, []string{"--config", cluster}, typo},
			{badArg, []string{"extra"}, []string{`unknown command "extra"`}},
		},
		"e2e": {
			{badFlag, []string{"--junit-file", dir}, []string{`"--junit-file"`, "is a directory: give a file's path"}},
			{badFlag, []string{"--report-dir", unwritable}, []string{`"--report-dir"`, "give a directory that can be written"}},
			{badFlag, []string{"--timeout", "0"}, []string{`"--timeout"`, "want a positive duration"}},
			{badFlag, []string{"--dead-after", "-1m"}, []string{`"--dead-after"`, "want a positive duration"}},
			{badFlag, []string{"--remote-nodes", "-5"}, []string{`"--remote-nodes"`, "a whole number from 0 to 4"}},
			{badFlag, []string{"--kubeconfig", "a", "--existing", "b"}, []string{`"--existing"`, "give one of them once"}},
			{badFile, []string{"--inventory", inventory}, []string{"passwordFrom", "set passwordFrom"}},
			{badArg, []string{"networking", "storage"}, []string{"one suite at a time"}},
		},
		"list": {
			{badFlag, []string{"--suite-binary", ""}, []string{`"--suite-binary"`, "give the suite binary's path"}},
			{badFile, []string{"--suite-binary", missing}, []string{"suite binary " + missing, "make build"}},
			{badArg, []string{"networking"}, []string{`unknown command "networking"`}},
		},
		"node-image": {
			{badFlag, []string{"--kubernetes-version", "1.34"}, []string{"--kubernetes-version", "the supported lines are"}},
			{badArg, []string{"1.34"}, []string{`unknown command "1.34"`}},
		},
		"images": {{badArg, []string{"bogus"}, []string{`unknown command "bogus"`}}},
		"images list": {
			{badFile, []string{"--overrides", overrides}, []string{"--overrides", `did you mean "images"`}},
			{badArg, []string{"extra"}, []string{`unknown command "extra"`}},
		},
		"images push": {
			{badFlag, []string{"--ref", ""}, []string{`"--ref"`, "give REGISTRY/REPO:TAG"}},
			{badFlag, []string{"--base", "nosuch=x"}, []string{`--base "nosuch=x"`, "want RELEASE=REF"}},
			{badFile, []string{"--overrides", overrides}, []string{"--overrides", `did you mean "images"`}},
		},
		"join": {
			{badFlag, []string{"--render", unwritable}, []string{`"--render"`, "give a directory that can be written"}},
			{badFile, []string{"--inventory", inventory}, []string{"passwordFrom", "set passwordFrom"}},
			{badArg, []string{"extra"}, []string{`unknown command "extra"`}},
		},
		"reset": {
			{badFlag, []string{"--machine", ""}, []string{`"--machine"`, "give a machine's name"}},
			{badFile, []string{"--inventory", inventory}, []string{"passwordFrom", "set passwordFrom"}},
		},
		"sonobuoy": {{badArg, []string{"bogus"}, []string{`unknown command "bogus"`}}},
		"sonobuoy plugin": {
			{badFlag, []string{"--image", ""}, []string{`"--image"`, "give the suite image's reference"}},
			{badFlag, []string{"-o", unwritable}, []string{`"-o, --output"`, "give a file in a directory that can be written"}},
			{badFlag, []string{"--claim", "NET-99"}, []string{`unknown claim "NET-99"`}},
			{badFile, []string{"--image-overrides", overrides}, []string{`did you mean "images"`}},
		},
		"sonobuoy images": {
			{badFlag, []string{"-o", dir}, []string{`"-o, --output"`, "is a directory: give a file's path"}},
			{badArg, []string{"extra"}, []string{`unknown command "extra"`}},
		},
		"sonobuoy run": {
			{badFlag, []string{"--timeout", "-1s"}, []string{`"--timeout"`, "want a positive duration"}},
			{badFlag, []string{"--out", unwritable}, []string{`"--out"`, "give a directory that can be written"}},
			{badFile, []string{"--suite-binary", missing}, []string{"suite binary " + missing, "make build"}},
		},
		"vms": {{badArg, []string{"bogus"}, []string{`unknown command "bogus"`}}},
		"vms up": {
			{badFlag, []string{"--vms", vmsFile, "--settle", "-1s"}, []string{`"--settle"`, "want a positive duration"}},
			{badFlag, []string{"--vms", vmsFile, "--ready-timeout", "0"}, []string{`"--ready-timeout"`, "want a positive duration"}},
			{badFlag, []string{"--vms", vmsFile, "--dir", vmsFile}, []string{`"--dir"`, "is not a directory"}},
			{badFile, []string{"--vms", vmsFile}, []string{"provider", "set provider to one of"}},
			{badArg, []string{"--vms", vmsFile, "extra"}, []string{`unknown command "extra"`}},
		},
		"vms down": {
			{badFlag, []string{"--run-id", "Not_A_Label"}, []string{"--run-id"}},
			{badFile, []string{"--state", state}, []string{"--state", "state file " + state}},
		},
		"vms sweep": {
			{badFlag, []string{"--vms", vmsFile, "--older-than", "0"}, []string{`"--older-than"`, "want a positive duration"}},
			{badFlag, []string{"--vms", vmsFile, "--older-than", "30m"}, []string{`"--older-than"`, "below the floor of 1h0m0s", "give 1h0m0s or more"}},
			{badFile, []string{"--vms", vmsFile, "--older-than", "24h"}, []string{"provider", "set provider to one of"}},
		},
		"vms list": {
			{badFile, []string{"--vms", vmsFile}, []string{"provider", "set provider to one of"}},
			{badArg, []string{"--vms", vmsFile, "extra"}, []string{`unknown command "extra"`}},
		},
		"underlay": {{badArg, []string{"bogus"}, []string{`unknown command "bogus"`}}},
		"underlay check": {
			{badFlag, []string{"--out", dir}, []string{`"--out"`, "is a directory: give a file's path"}},
			{badFile, []string{"--inventory", inventory}, []string{"passwordFrom", "set passwordFrom"}},
		},
		"underlay plan": {
			{badFile, []string{"--config", cluster}, typo},
			{badArg, []string{"extra"}, []string{`unknown command "extra"`}},
		},
		"sweep": {
			{badFlag, []string{"--older-than", "0"}, []string{`"--older-than"`, "want a positive duration"}},
			{badFlag, []string{"--vms", vmsFile, "--older-than", "2m"}, []string{"--older-than with --vms", "give 1h0m0s or more"}},
			{badFile, []string{"--config", cluster}, typo},
		},
		"gate": {
			{badFlag, []string{"--report", ""}, []string{`"--report"`, "give a run's report directory"}},
			{badFlag, []string{"--bogus"}, []string{"unknown flag: --bogus", "see winconform gate --help"}},
			{badFile, []string{"--check", "--policy", policy}, []string{"requird", `did you mean "required"`}},
		},
		"diff": {
			{badFlag, []string{"--out", unwritable}, []string{`"--out"`, "give a directory that can be written"}},
			{badFile, []string{"--report", missing, "--baseline", missing}, []string{"no such report directory", "pass the directory a run wrote"}},
		},
		"report": {
			{badFlag, []string{"--report", dir, "--screenshot", "--browser", missing}, []string{`"--browser"`, "give the Chromium binary's path"}},
			{badFlag, []string{"--screenshot-timeout", "0"}, []string{`"--screenshot-timeout"`, "want a positive duration"}},
			{badFile, []string{"--report", missing}, []string{"no such report directory", "pass the directory a run wrote"}},
		},
		"version": {
			{badFlag, []string{"-o", "yaml"}, []string{"yaml"}},
			{badArg, []string{"extra"}, []string{`unknown command "extra"`}},
		},
		"results": {
			{badFlag, []string{missing, "--outcome", "nosuch"}, []string{"--outcome"}},
			{badFile, []string{missing}, []string{"no such report directory", "pass the directory a run wrote"}},
			{badArg, nil, []string{"accepts 1 arg(s), received 0"}},
		},
		"help":       {{badArg, []string{"nonexistent"}, []string{`unknown help topic "nonexistent"`, "give a command"}}},
		"completion": {{badArg, []string{"tcsh"}, []string{`unknown command "tcsh"`, "bash, fish, powershell, zsh"}}},
		// The shells' scripts take no argument.
		"completion bash":       {{badArg, []string{"extra", "more"}, []string{`unknown command "extra"`}}},
		"completion zsh":        {{badArg, []string{"extra"}, []string{`unknown command "extra"`}}},
		"completion fish":       {{badArg, []string{"extra"}, []string{`unknown command "extra"`}}},
		"completion powershell": {{badArg, []string{"extra"}, []string{`unknown command "extra"`}}},
	}

	// Every command has a row: a new command without one fails here.
	var paths []string
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.Hidden && c.Name() != cobra.ShellCompRequestCmd && c.Name() != cobra.ShellCompNoDescRequestCmd {
			paths = append(paths, strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), "winconform"), " "))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(rootCmd())
	for i, p := range paths {
		if p == "" {
			paths[i] = "winconform"
		}
	}
	for _, p := range paths {
		if _, ok := table[p]; !ok {
			t.Errorf("command %q has no row in the exit-status table: add its bad inputs", p)
		}
	}
	for p := range table {
		if !slices.Contains(paths, p) {
			t.Errorf("the table has a row for %q, which is no command", p)
		}
	}

	fakes := newStandIns(t)
	// The stand-ins record what reaches them.
	if err := exec.Command("docker", "ps").Run(); err == nil || fakes.calls(t) != "docker ps\n" {
		t.Fatalf("the docker stand-in does not record its calls (%v)", err)
	}
	kinds := 0
	for path, rows := range table {
		seen := map[string]bool{}
		for _, r := range rows {
			seen[r.kind] = true
			args := r.args
			if path != "winconform" {
				args = append(strings.Fields(path), args...)
			}
			t.Run(path+"/"+r.kind+"/"+strings.Join(r.args, " "), func(t *testing.T) {
				code, stderr := fakes.run(t, args...)
				last := lastLine(stderr)
				if code != exitUsage {
					t.Errorf("exit status %d, want %d (refused input); stderr:\n%s", code, exitUsage, stderr)
				}
				for _, w := range r.want {
					if !strings.Contains(last, w) {
						t.Errorf("the last line of stderr lacks %q:\n%s", w, last)
					}
				}
				if strings.Contains(stderr, "exit status") || strings.Contains(stderr, "panic") || !strings.HasPrefix(stderr, "winconform") && !strings.Contains(stderr, ".yaml:") {
					t.Errorf("stderr is not the command's answer:\n%s", stderr)
				}
				if calls := fakes.calls(t); calls != "" {
					t.Errorf("refused input reached a tool or a cluster:\n%s", calls)
				}
			})
		}
		kinds += len(seen)
	}
	t.Logf("%d commands, %d (command, kind) pairs", len(table), kinds)
}

// standIns are executables on PATH in place of the tools a command may
// contact (docker, kind, kubectl, sonobuoy, virsh, ...), each recording its
// call, and a KUBECONFIG of a server that does not answer.
type standIns struct{ record string }

func newStandIns(t *testing.T) standIns {
	t.Helper()
	bin := t.TempDir()
	record := filepath.Join(t.TempDir(), "calls")
	if err := os.WriteFile(record, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"docker", "podman", "nerdctl", "kind", "kubectl", "sonobuoy", "virsh", "qemu-img", "az", "pwsh", "govc", "chromium", "ginkgo", "ip", "iptables", "nft", "ssh", "sudo"} {
		script := "#!/bin/sh\necho \"" + tool + " $*\" >> " + record + "\nexit 1\n"
		if err := os.WriteFile(filepath.Join(bin, tool), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(unreachable), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	t.Setenv("KUBECONFIG", kc)
	return standIns{record: record}
}

// run runs a command line as main does, in a directory of its own.
func (s standIns) run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	t.Chdir(t.TempDir())
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, errb.String()
}

// calls is what the stand-ins recorded, emptied.
func (s standIns) calls(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(s.record)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(s.record, nil, 0o600)
	return string(data)
}

// lastLine is text's last line that is not empty.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return lines[len(lines)-1]
}
