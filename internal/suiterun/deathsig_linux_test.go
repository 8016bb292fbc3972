package suiterun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A CLI killed with SIGKILL cannot pass anything on: the kernel interrupts
// its suite, which cleans up and reports as on Ctrl-C.
func TestSuiteInterruptedWhenTheCLIDies(t *testing.T) {
	if suite := os.Getenv("SUITERUN_TEST_SUITE"); suite != "" { // the CLI
		_ = Run(context.Background(), Options{Binary: suite, Procs: 1})
		os.Exit(0)
	}
	dir := t.TempDir()
	suite := script(t, `trap 'echo interrupted > `+dir+`/int; exit 130' INT
echo started > `+dir+`/started
i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
`)
	cli := exec.Command(os.Args[0], "-test.run=^TestSuiteInterruptedWhenTheCLIDies$")
	cli.Env = append(os.Environ(), "SUITERUN_TEST_SUITE="+suite)
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile := func(name string) string {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil && len(data) > 0 {
				return strings.TrimSpace(string(data))
			}
		}
		return ""
	}
	if waitFile("started") == "" {
		cli.Process.Kill()
		t.Fatal("the suite did not start")
	}
	if err := cli.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cli.Wait()
	if got := waitFile("int"); got != "interrupted" {
		t.Errorf("the suite was not interrupted when its CLI died (%q)", got)
	}
}
