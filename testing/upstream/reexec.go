package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// childEnv names the judge a re-executed test binary runs, and childInput
// the file that holds its input.
const (
	childEnv   = "WINCONFORM_UPSTREAM_JUDGE"
	childInput = "WINCONFORM_UPSTREAM_INPUT"
	// childOutput is the file the child writes its result to: what the
	// components print goes to its stdout.
	childOutput = "WINCONFORM_UPSTREAM_OUTPUT"
)

// children are the judges a child process can run, by name.
var children = map[string]func(input []byte) (any, error){
	"kubeadm-join": kubeadmJoinChild,
}

func init() {
	name := os.Getenv(childEnv)
	if name == "" {
		return
	}
	run, ok := children[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "upstream: no judge %q\n", name)
		os.Exit(3)
	}
	input, err := os.ReadFile(os.Getenv(childInput))
	if err != nil {
		fmt.Fprintf(os.Stderr, "upstream: %v\n", err)
		os.Exit(3)
	}
	out, err := run(input)
	if err != nil {
		fmt.Fprintf(os.Stderr, "upstream: %v\n", err)
		os.Exit(3)
	}
	data, err := json.Marshal(out)
	if err == nil {
		err = os.WriteFile(os.Getenv(childOutput), data, 0o600)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "upstream: %v\n", err)
		os.Exit(3)
	}
	os.Exit(0)
}

// inChild runs judge name in a child process (this test binary again)
// whose working directory is dir, with input (JSON), and decodes its
// output into out.
func inChild(dir, name string, input, out any) error {
	data, err := json.Marshal(input)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp("", "upstream-input-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	result := f.Name() + ".out"
	defer os.Remove(result)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, self)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), childEnv+"="+name, childInput+"="+f.Name(), childOutput+"="+result)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("upstream: the %s judge: %v: %s", name, err, bytes.TrimSpace(append(stdout.Bytes(), stderr.Bytes()...)))
	}
	data, err = os.ReadFile(result)
	if err == nil {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		return fmt.Errorf("upstream: the %s judge's result: %v", name, err)
	}
	return nil
}
