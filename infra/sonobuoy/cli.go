package sonobuoy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/winconform/winconform/internal/text"
)

// CLI runs the sonobuoy command against one cluster and namespace. Every
// call has a time limit: the context's, or the one it is given.
type CLI struct {
	Binary     string    // the sonobuoy binary (_output/bin/sonobuoy)
	Kubeconfig string    // the cluster's kubeconfig
	Namespace  string    // Sonobuoy's namespace (default "sonobuoy")
	Log        io.Writer // receives the commands and their output (os.Stderr when nil)
}

// AggregatorService is the Service `sonobuoy run` puts in front of the
// aggregator, in Sonobuoy's namespace, and its port.
const AggregatorService = "sonobuoy-aggregator:8080"

// RunOptions say how `sonobuoy run` runs the plugin.
type RunOptions struct {
	Plugin          string        // the plugin definition file (a Sonobuoy configuration is written beside it)
	AggregatorImage string        // --sonobuoy-image
	PullPolicy      string        // --image-pull-policy (default IfNotPresent)
	Timeout         time.Duration // how long Sonobuoy waits for the plugin, and the CLI for Sonobuoy
}

func (c CLI) namespace() string {
	if c.Namespace == "" {
		return "sonobuoy"
	}
	return c.Namespace
}

func (c CLI) log() io.Writer {
	if c.Log == nil {
		return os.Stderr
	}
	return c.Log
}

// common are the flags every command that talks to the cluster takes.
func (c CLI) common() []string {
	return []string{"--kubeconfig", c.Kubeconfig, "--namespace", c.namespace()}
}

// Check says whether the binary is there and is the Sonobuoy release
// wanted (its `version --short`).
func (c CLI) Check(ctx context.Context, version string) error {
	if _, err := os.Stat(c.Binary); err != nil {
		return fmt.Errorf("sonobuoy binary: %w (make sonobuoy builds it into _output/bin)", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.Binary, "version", "--short").Output()
	if err != nil {
		return fmt.Errorf("%s version: %w", c.Binary, err)
	}
	if got := strings.TrimSpace(string(out)); got != version {
		return fmt.Errorf("%s is Sonobuoy %s; want %s (delete it and run make sonobuoy to build %s)", c.Binary, got, version, version)
	}
	return nil
}

// Run starts the plugin with `sonobuoy run` and waits for the run to end,
// or for the timeout. Only this plugin runs (a --plugin given replaces
// Sonobuoy's default e2e and systemd-logs plugins).
func (c CLI) Run(ctx context.Context, o RunOptions) error {
	if o.Timeout <= 0 {
		return errors.New("sonobuoy run: no timeout")
	}
	if o.PullPolicy == "" {
		o.PullPolicy = "IfNotPresent"
	}
	// Workers reach the aggregator at the address it advertises, by default
	// its pod IP written as "[IP]:8080", which Go's net/url refuses since Go
	// 1.24.8 and 1.25.2 (only IPv6 may stand in brackets), so that a Sonobuoy
	// built with a current Go fails in every worker: "parsing AggregatorURL:
	// invalid IP-literal". Its Service's name is an address every Go accepts.
	config := filepath.Join(filepath.Dir(o.Plugin), "sonobuoy-config.json")
	if err := os.WriteFile(config, []byte(`{"Server": {"advertiseaddress": "`+AggregatorService+`"}}`+"\n"), 0o644); err != nil {
		return err
	}
	args := append([]string{"run",
		"--config", config, // first: sonobuoy refuses it after flags that change the configuration
		"--plugin", o.Plugin,
		"--sonobuoy-image", o.AggregatorImage,
		"--image-pull-policy", o.PullPolicy,
		"--timeout", strconv.Itoa(int(o.Timeout / time.Second)),
	}, c.common()...)
	if err := c.run(ctx, 2*time.Minute, c.log(), args...); err != nil {
		return err
	}
	// Sonobuoy gives the plugin o.Timeout: wait a minute more for it to say so.
	return c.wait(ctx, o.Timeout+time.Minute)
}

// StatusPoll is how often Run reads the run's status. The CLI's own
// `sonobuoy run --wait` reads it every 20 s, the first time 20 s after the
// start (pkg/client/run.go, pollInterval), which made every run end 10 s
// late on average.
var StatusPoll = 2 * time.Second

// runStatus is what `sonobuoy status --json` prints: Sonobuoy's
// pkg/plugin/aggregation Status (of v0.57), the fields read here.
type runStatus struct {
	Status  string `json:"status"` // running, post-processing, complete, failed
	Plugins []struct {
		Plugin       string `json:"plugin"`
		Node         string `json:"node"`
		Status       string `json:"status"`
		ResultStatus string `json:"result-status"`
	} `json:"plugins"`
}

func (s runStatus) String() string {
	var b strings.Builder
	b.WriteString(s.Status)
	for _, p := range s.Plugins {
		fmt.Fprintf(&b, "; %s on %s: %s", p.Plugin, p.Node, p.Status)
		if p.ResultStatus != "" {
			fmt.Fprintf(&b, ", %s", p.ResultStatus)
		}
	}
	return b.String()
}

var errWaitTimeout = errors.New("the wait for sonobuoy's run timed out")

// parseStatus finds the status object in what `sonobuoy status --json`
// printed (on one line; warnings may come before it).
func parseStatus(out string) (runStatus, bool) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var st runStatus
		if strings.HasPrefix(lines[i], "{") && json.Unmarshal([]byte(lines[i]), &st) == nil && st.Status != "" {
			return st, true
		}
	}
	return runStatus{}, false
}

// wait reads the run's status every StatusPoll until it is complete (nil)
// or failed, or timeout passes. As in Sonobuoy's own wait, a status that
// cannot be read (the aggregator not yet tagged with one) is read again.
func (c CLI) wait(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errWaitTimeout)
	defer cancel()
	quiet := c
	quiet.Log = io.Discard
	var last string
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, StatusPoll, true, func(ctx context.Context) (bool, error) {
		var out bytes.Buffer
		// A failed run's status is printed, and the command exits 1
		// (cmd/sonobuoy/app/status.go, exitCode); an aggregator with no
		// status yet is described in words, exit 0. A read cut short by
		// the wait's end says nothing.
		err := quiet.run(ctx, time.Minute, &out, append([]string{"status", "--json"}, c.common()...)...)
		if ctx.Err() != nil {
			return false, nil
		}
		st, ok := parseStatus(out.String())
		switch {
		case ok:
			if line := st.String(); line != last {
				fmt.Fprintf(c.log(), "%s sonobuoy: %s\n", time.Now().Format("15:04:05"), line)
				last = line
			}
			switch st.Status {
			case "complete":
				return true, nil
			case "failed":
				return false, fmt.Errorf("sonobuoy's run failed: %s", last)
			}
		case err != nil:
			lastErr = err
		case out.Len() > 0:
			lastErr = errors.New(text.LastLines(out.String(), 2))
		}
		return false, nil
	})
	switch {
	case err == nil || ctx.Err() == nil:
		return err
	case context.Cause(ctx) != errWaitTimeout:
		return ctx.Err()
	case last == "":
		return fmt.Errorf("sonobuoy's run did not end within %s, its status never read (last: %v)", timeout, lastErr)
	}
	return fmt.Errorf("sonobuoy's run did not end within %s (last status: %s)", timeout, last)
}

// Retrieve downloads the results tarball into dir and returns its path.
func (c CLI) Retrieve(ctx context.Context, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	const name = "sonobuoy-results.tar.gz"
	path := filepath.Join(dir, name)
	os.Remove(path)
	args := append([]string{"retrieve", dir, "--filename", name}, c.common()...)
	if err := c.run(ctx, 5*time.Minute, c.log(), args...); err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("sonobuoy retrieve wrote no %s: %w", path, err)
	}
	return path, nil
}

// Results is `sonobuoy results TARBALL` in mode (report, detailed,
// readable or dump), for the plugin.
func (c CLI) Results(ctx context.Context, tarball, mode string) (string, error) {
	var out bytes.Buffer
	// Not logged: the caller shows the output with the command.
	quiet := c
	quiet.Log = io.Discard
	err := quiet.run(ctx, 2*time.Minute, &out, "results", tarball, "--mode", mode, "--plugin", PluginName)
	return out.String(), err
}

// Status is `sonobuoy status`.
func (c CLI) Status(ctx context.Context) (string, error) {
	var out bytes.Buffer
	err := c.run(ctx, time.Minute, &out, append([]string{"status"}, c.common()...)...)
	return out.String(), err
}

// Logs is `sonobuoy logs`: the aggregator's and the plugin's containers.
func (c CLI) Logs(ctx context.Context) (string, error) {
	var out bytes.Buffer
	err := c.run(ctx, 2*time.Minute, &out, append([]string{"logs"}, c.common()...)...)
	return out.String(), err
}

// Delete removes Sonobuoy's namespace and cluster roles, and waits for
// them to go (at most timeout).
func (c CLI) Delete(ctx context.Context, timeout time.Duration) error {
	minutes := int((timeout + time.Minute - 1) / time.Minute)
	args := append([]string{"delete", "--wait=" + strconv.Itoa(minutes), "--wait-output", "silent"}, c.common()...)
	return c.run(ctx, timeout+time.Minute, c.log(), args...)
}

// run runs the binary with args, its output to out, for at most timeout.
func (c CLI) run(ctx context.Context, timeout time.Duration, out io.Writer, args ...string) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fmt.Fprintf(c.log(), "$ sonobuoy %s\n", strings.Join(args, " "))
	var tail bytes.Buffer
	cmd := exec.CommandContext(ctx, c.Binary, args...)
	w := io.MultiWriter(out, &tail)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	if parent.Err() != nil {
		return fmt.Errorf("sonobuoy %s: %w", args[0], parent.Err())
	}
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("sonobuoy %s did not finish within %s", args[0], timeout)
	}
	if err != nil {
		return fmt.Errorf("sonobuoy %s: %w: %s", args[0], err, text.LastLines(tail.String(), 5))
	}
	return nil
}
