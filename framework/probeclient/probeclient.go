// Package probeclient runs the probe program (images/probe) inside pods and reads
// its results: one JSON line per target, in the order given.
package probeclient

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
)

// Result is one line of `probe connect` output.
type Result struct {
	Index      int     `json:"index"`
	Target     string  `json:"target"`
	OK         bool    `json:"ok"`
	LatencyMs  float64 `json:"latencyMs"`
	ErrorClass string  `json:"errorClass"`
	Error      string  `json:"error"`
	Attempts   int     `json:"attempts"`
	Detail     Detail  `json:"detail"`
}

// Detail is what a successful or failed probe observed.
type Detail struct {
	Remote     string   `json:"remote,omitempty"`
	Local      string   `json:"local,omitempty"`
	StatusCode int      `json:"statusCode,omitempty"`
	Hostname   string   `json:"hostname,omitempty"`
	PodIP      string   `json:"podIP,omitempty"`
	Name       string   `json:"name,omitempty"`
	Caller     string   `json:"caller,omitempty"`
	Body       string   `json:"body,omitempty"`
	Addresses  []string `json:"addresses,omitempty"`
}

// Describe is a result in a few words, for failure messages.
func (r Result) Describe() string {
	if r.OK {
		return fmt.Sprintf("%s ok in %.1fms", r.Target, r.LatencyMs)
	}
	return fmt.Sprintf("%s failed (%s): %s", r.Target, r.ErrorClass, r.Error)
}

// Parse reads connect's output and checks it answers every target, in order.
func Parse(output string, targets []string) ([]Result, error) {
	var out []Result
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("probe output line %q: %w", line, err)
		}
		out = append(out, r)
	}
	if len(out) != len(targets) {
		return nil, fmt.Errorf("probe answered %d of %d targets: %q", len(out), len(targets), output)
	}
	for i, r := range out {
		if r.Index != i || r.Target != targets[i] {
			return nil, fmt.Errorf("probe result %d is for %q (index %d), expected %q", i, r.Target, r.Index, targets[i])
		}
	}
	return out, nil
}

// ConnectArgs is the argument list of `probe connect` for targets.
func ConnectArgs(timeoutSeconds, attempts int, targets []string) []string {
	args := []string{"connect", fmt.Sprintf("--timeout=%ds", timeoutSeconds), fmt.Sprintf("--attempts=%d", attempts)}
	return append(args, targets...)
}
