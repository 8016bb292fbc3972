// Package artifacts keeps a failed spec's bundle, what it leaves to debug
// it, under the report directory: for each pod of the spec's namespace its
// description (kubectl describe), its object as YAML, and the logs of its
// containers (the previous instance's too, after a restart); the
// namespace's events; and for each node its pods ran on, the kubelet's and
// the container runtime's logs of the spec's window (the node log query,
// framework/nodelogs), its kube-proxy and CNI agent pods' logs, and on a
// Windows node its HNS state (a HostProcess pod, no WinRM). What could not
// be collected is one line of not-collected.txt. Every file is redacted:
// the values of the namespace's Secrets and anything shaped like a
// bootstrap token become <redacted>.
package artifacts

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/winconform/winconform/framework/nodelogs"
	"github.com/winconform/winconform/internal/redact"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/describe"
	"sigs.k8s.io/yaml"
)

// Dir is the artifacts' directory in a report directory.
const Dir = "artifacts"

// Redacted replaces what must not be kept.
const Redacted = "<redacted>" // YAML reads "********" as an alias

// bootstrapToken is the shape of a kubeadm bootstrap token.
var bootstrapToken = regexp.MustCompile(`\b[a-z0-9]{6}\.[a-z0-9]{16}\b`)

// Slug is the directory name of a spec: its text, lower-cased, with
// anything but letters and digits made a dash, short enough for a path,
// and a hash of the whole text so that two specs never share one.
func Slug(spec string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(spec) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimSuffix(b.String(), "-")
	if len(s) > 80 {
		s = strings.TrimSuffix(s[:80], "-")
	}
	sum := sha256.Sum256([]byte(spec))
	return fmt.Sprintf("%s-%x", s, sum[:4])
}

// Redactor removes secrets from text: the values it is given (a
// namespace's Secrets), every secret the process loaded, and anything
// shaped like a bootstrap token.
type Redactor struct{ set *redact.Set }

// NewRedactor redacts each of values and bootstrap tokens.
func NewRedactor(values ...string) *Redactor {
	var vs []string
	for _, v := range values {
		// A Secret's value of one to three characters would mask common
		// words in every file: kept, as the process's own set keeps them.
		if len(strings.TrimSpace(v)) >= 4 {
			vs = append(vs, v)
		}
	}
	return &Redactor{set: redact.NewMasking(Redacted, vs...)}
}

// WriteFile writes content to path without its secrets, making path's
// directory: every file of a bundle is written so.
func (r *Redactor) WriteFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(r.Redact(content)), 0o644)
}

// Redact returns s without its secrets.
func (r *Redactor) Redact(s string) string {
	return bootstrapToken.ReplaceAllString(r.set.String(s), Redacted)
}

// Bundle writes a failed spec's bundle into dir: the artifacts of its
// namespace ns (its pods described, as YAML, their logs; its events) and
// those of the nodes its pods ran on (CollectNodes, with n's window and
// bounds; n.Names adds nodes). It goes on past what it cannot read, and
// says what it missed of the namespace in the returned error (of the nodes,
// in the bundle's NotCollectedFile). It returns the files written and the
// nodes that serve no log query.
func Bundle(ctx context.Context, cs kubernetes.Interface, ns, dir string, n Nodes) ([]string, []*nodelogs.Unserved, error) {
	written, nodes, red, err := collectNamespace(ctx, cs, ns, dir)
	n.Names = append(n.Names, nodes...)
	w, unserved := CollectNodes(ctx, cs, n, dir, red)
	return append(written, w...), unserved, err
}

// collectNamespace writes the artifacts of namespace ns into dir, and
// returns the files, the nodes its pods ran on, and the redactor of its
// Secrets.
func collectNamespace(ctx context.Context, cs kubernetes.Interface, ns, dir string) ([]string, []string, *Redactor, error) {
	var errs []error
	secrets, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		errs = append(errs, fmt.Errorf("listing the Secrets to redact: %w", err))
	}
	var values []string
	if secrets != nil {
		for _, s := range secrets.Items {
			for _, v := range s.Data {
				values = append(values, string(v))
			}
			for _, v := range s.StringData {
				values = append(values, v)
			}
		}
	}
	red := NewRedactor(values...)
	var written []string
	write := func(name, content string) {
		path := filepath.Join(dir, name)
		if err := red.WriteFile(path, content); err != nil {
			errs = append(errs, err)
			return
		}
		written = append(written, path)
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return written, nil, red, errors.Join(append(errs, fmt.Errorf("listing the pods of %s: %w", ns, err))...)
	}
	var nodes []string
	d := describe.PodDescriber{Interface: cs}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			nodes = append(nodes, p.Spec.NodeName)
		}
		if text, err := d.Describe(ns, p.Name, describe.DescriberSettings{ShowEvents: true, ChunkSize: 500}); err == nil {
			write(filepath.Join("pods", p.Name+".describe.txt"), text)
		} else {
			errs = append(errs, fmt.Errorf("describing pod %s: %w", p.Name, err))
		}
		p.ManagedFields = nil
		if data, err := yaml.Marshal(p); err == nil {
			write(filepath.Join("pods", p.Name+".yaml"), string(data))
		}
		for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			for _, previous := range []bool{false, true} {
				if previous && restarts(p, c.Name) == 0 {
					continue
				}
				data, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, Previous: previous}).DoRaw(ctx)
				if err != nil {
					errs = append(errs, fmt.Errorf("logs of %s/%s (previous %v): %w", p.Name, c.Name, previous, err))
					continue
				}
				name := c.Name + ".log"
				if previous {
					name = c.Name + ".previous.log"
				}
				write(filepath.Join("pods", p.Name, name), string(data))
			}
		}
	}
	events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		errs = append(errs, fmt.Errorf("listing the events of %s: %w", ns, err))
	} else {
		write("events.txt", formatEvents(events.Items))
	}
	return written, nodes, red, errors.Join(errs...)
}

func restarts(p corev1.Pod, container string) int32 {
	for _, s := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if s.Name == container {
			return s.RestartCount
		}
	}
	return 0
}

// formatEvents writes events oldest first, one a line.
func formatEvents(evs []corev1.Event) string {
	when := func(e corev1.Event) time.Time {
		switch {
		case !e.LastTimestamp.IsZero():
			return e.LastTimestamp.Time
		case !e.EventTime.IsZero():
			return e.EventTime.Time
		}
		return e.CreationTimestamp.Time
	}
	sort.SliceStable(evs, func(i, j int) bool { return when(evs[i]).Before(when(evs[j])) })
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s %-7s %-20s %s/%s: %s (x%d)\n", when(e).UTC().Format(time.RFC3339), e.Type, e.Reason,
			strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, e.Message, max(e.Count, 1))
	}
	return b.String()
}
