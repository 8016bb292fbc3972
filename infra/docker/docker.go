// Package docker runs the Docker CLI for the harness: a daemon check that fails
// with a clear line, commands with timeouts whose errors carry their output, and
// the detection of host quirks (a daemon that cannot start --privileged
// containers) together with the workaround kind needs on such a host.
package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/winconform/winconform/internal/text"
)

// Client runs one Docker CLI binary.
type Client struct {
	// Bin is the path of the docker CLI.
	Bin string
}

// New finds the docker CLI on PATH.
func New() (*Client, error) {
	bin, err := exec.LookPath("docker")
	if err != nil {
		return nil, errors.New("docker CLI not found on PATH: install Docker (on Debian: apt-get install -y docker.io)")
	}
	// With a shim active in this process, the docker on PATH is the shim;
	// a client runs the real CLI and lets a shim route it when it must.
	return &Client{Bin: realDocker(bin)}, nil
}

// RunError is a failed docker command, with what it printed.
type RunError struct {
	Args   []string
	Stderr []byte
	Err    error
}

func (e *RunError) Error() string {
	msg := strings.TrimSpace(string(e.Stderr))
	if i := strings.LastIndex(msg, "\n"); i >= 0 && len(msg) > 600 {
		msg = "..." + msg[i+1:]
	}
	cmd := "docker " + strings.Join(truncateArgs(e.Args), " ")
	if msg == "" {
		return fmt.Sprintf("%s: %v", cmd, e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", cmd, e.Err, msg)
}

func (e *RunError) Unwrap() error { return e.Err }

// truncateArgs keeps error messages to one readable line.
func truncateArgs(args []string) []string {
	if len(args) <= 8 {
		return args
	}
	out := append([]string{}, args[:7]...)
	return append(out, "...")
}

// Output runs docker with args and returns its standard output. stdin may be nil.
func (c *Client) Output(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, c.Bin, args...)
	cmd.Stdin = stdin
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return stdout.Bytes(), &RunError{Args: args, Stderr: stderr.Bytes(), Err: err}
	}
	return stdout.Bytes(), nil
}

// Run runs docker with args, discarding standard output.
func (c *Client) Run(ctx context.Context, args ...string) error {
	_, err := c.Output(ctx, nil, args...)
	return err
}

// Ping checks that a Docker daemon answers, within 20 seconds, and returns its version.
func (c *Client) Ping(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := c.Output(ctx, nil, "version", "--format", "{{.Server.Version}}")
	if err != nil {
		reason := err.Error()
		var re *RunError
		if errors.As(err, &re) {
			reason = text.FirstLine(string(re.Stderr))
			if reason == "" {
				reason = re.Err.Error()
			}
		}
		return "", fmt.Errorf("docker is not running (%s): start the Docker daemon (dockerd, or systemctl start docker) and try again", reason)
	}
	return strings.TrimSpace(string(out)), nil
}

// ImageExists reports whether ref is present in the daemon's image store.
func (c *Client) ImageExists(ctx context.Context, ref string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return c.Run(ctx, "image", "inspect", "--format", "{{.Id}}", ref) == nil
}

// ImageLabel returns the value of label key on image ref ("" when unset).
func (c *Client) ImageLabel(ctx context.Context, ref, key string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := c.Output(ctx, nil, "image", "inspect", "--format", fmt.Sprintf("{{index .Config.Labels %q}}", key), ref)
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(out))
	if v == "<no value>" {
		v = ""
	}
	return v, nil
}

// Pull pulls ref, giving up after timeout.
func (c *Client) Pull(ctx context.Context, ref string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.Run(ctx, "pull", "--quiet", ref)
}

// CgroupVersion returns the cgroup version of the daemon's host (1 or 2),
// which kind's nodes share: `docker info`'s CgroupVersion (Docker 20.10 and
// later).
func (c *Client) CgroupVersion(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := c.Output(ctx, nil, "info", "--format", "{{.CgroupVersion}}")
	if err != nil {
		return 0, fmt.Errorf("docker info: %w", err)
	}
	switch v := strings.TrimSpace(string(out)); v {
	case "1":
		return 1, nil
	case "2":
		return 2, nil
	default:
		return 0, fmt.Errorf("docker info reports cgroup version %q, neither 1 nor 2: Docker 20.10 or later reports it", v)
	}
}
