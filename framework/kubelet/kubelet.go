// Package kubelet reads what a node's kubelet serves through the API
// server's node proxy, for Windows and Linux nodes alike: its running
// configuration (/configz), its metrics (/metrics, /metrics/resource), and
// derives from the configuration what the kubelet promises: the node's
// allocatable memory.
package kubelet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
)

// proxy GETs path from node's kubelet through the API server.
func proxy(ctx context.Context, cs kubernetes.Interface, node, path string) ([]byte, error) {
	data, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", path).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("GET /api/v1/nodes/%s/proxy/%s: %w", node, path, err)
	}
	return data, nil
}

// Config reads node's running kubelet configuration from its /configz.
func Config(ctx context.Context, cs kubernetes.Interface, node string) (*kubeletconfig.KubeletConfiguration, error) {
	data, err := proxy(ctx, cs, node, "configz")
	if err != nil {
		return nil, err
	}
	c, err := ParseConfigz(data)
	if err != nil {
		return nil, fmt.Errorf("the /configz of node %s: %w", node, err)
	}
	return c, nil
}

// ParseConfigz reads a kubelet's /configz answer: its configuration (as
// kubelet.config.k8s.io/v1beta1) under the key "kubeletconfig".
func ParseConfigz(data []byte) (*kubeletconfig.KubeletConfiguration, error) {
	var wrapper struct {
		Config *kubeletconfig.KubeletConfiguration `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(data, &wrapper); err != nil {
		return nil, fmt.Errorf("not a kubelet /configz answer: %w", err)
	}
	if wrapper.Config == nil {
		return nil, fmt.Errorf("no \"kubeletconfig\" object in %q", abbreviate(data))
	}
	return wrapper.Config, nil
}

func abbreviate(data []byte) string {
	s := string(data)
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// MemoryAvailable is the eviction signal of a node's available memory.
const MemoryAvailable = "memory.available"

// Memory is a node's memory as its kubelet accounts for it.
type Memory struct {
	Capacity       resource.Quantity
	SystemReserved resource.Quantity
	KubeReserved   resource.Quantity
	// HardEviction is the hard eviction threshold of memory.available (a
	// percentage is taken of Capacity).
	HardEviction resource.Quantity
	// HugePages is the memory the node sets aside as huge pages (never on Windows).
	HugePages resource.Quantity
	// Reported is the allocatable memory the node reports.
	Reported resource.Quantity
}

// NodeMemory gathers node's memory figures: its capacity and the
// allocatable memory it reports, from its status; what its kubelet
// reserves, and its hard eviction threshold, from its configuration.
func NodeMemory(node *corev1.Node, cfg *kubeletconfig.KubeletConfiguration) (Memory, error) {
	capacity, ok := node.Status.Capacity[corev1.ResourceMemory]
	if !ok {
		return Memory{}, fmt.Errorf("node %s reports no memory capacity", node.Name)
	}
	m := Memory{Capacity: capacity.DeepCopy(), Reported: node.Status.Allocatable.Memory().DeepCopy()}
	var err error
	if m.SystemReserved, err = reserved(cfg.SystemReserved, "systemReserved"); err != nil {
		return m, err
	}
	if m.KubeReserved, err = reserved(cfg.KubeReserved, "kubeReserved"); err != nil {
		return m, err
	}
	if m.HardEviction, err = Threshold(cfg.EvictionHard[MemoryAvailable], capacity); err != nil {
		return m, fmt.Errorf("evictionHard[%s]: %w", MemoryAvailable, err)
	}
	m.HugePages = resource.Quantity{Format: resource.BinarySI}
	for name, q := range node.Status.Capacity {
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			m.HugePages.Add(q)
		}
	}
	return m, nil
}

func reserved(list map[string]string, field string) (resource.Quantity, error) {
	v, ok := list[string(corev1.ResourceMemory)]
	if !ok || v == "" {
		return resource.Quantity{Format: resource.BinarySI}, nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return q, fmt.Errorf("%s[memory] %q is not a quantity: %w", field, v, err)
	}
	return q, nil
}

// Threshold is an eviction threshold's value for a resource of capacity:
// a quantity ("100Mi"), or a percentage of capacity ("5%"), truncated as
// the kubelet does; zero when unset.
func Threshold(value string, capacity resource.Quantity) (resource.Quantity, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return resource.Quantity{Format: resource.BinarySI}, nil
	}
	if pct, ok := strings.CutSuffix(value, "%"); ok {
		p, err := strconv.ParseFloat(pct, 32)
		if err != nil || p < 0 || p > 100 {
			return resource.Quantity{}, fmt.Errorf("%q is not a percentage between 0%% and 100%%", value)
		}
		// The kubelet keeps the percentage as a float32 fraction.
		frac := float32(p / 100)
		return *resource.NewQuantity(int64(float64(capacity.Value())*float64(frac)), resource.BinarySI), nil
	}
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return q, fmt.Errorf("%q is neither a quantity nor a percentage: %w", value, err)
	}
	return q, nil
}

// Expected is the allocatable memory the kubelet promises: capacity less
// system-reserved, kube-reserved, the hard eviction threshold and huge
// pages, never below zero.
func (m Memory) Expected() resource.Quantity {
	a := m.Capacity.DeepCopy()
	for _, q := range []resource.Quantity{m.SystemReserved, m.KubeReserved, m.HardEviction, m.HugePages} {
		a.Sub(q)
	}
	if a.Sign() < 0 {
		a.Set(0)
	}
	return a
}

// String puts the figures in one line, in bytes and MiB.
func (m Memory) String() string {
	mib := func(q resource.Quantity) string {
		return fmt.Sprintf("%d (%.1f MiB)", q.Value(), float64(q.Value())/(1<<20))
	}
	e := m.Expected()
	return fmt.Sprintf("capacity %s - system-reserved %s - kube-reserved %s - hard eviction %s - huge pages %s = %s; reported allocatable %s",
		mib(m.Capacity), mib(m.SystemReserved), mib(m.KubeReserved), mib(m.HardEviction), mib(m.HugePages), mib(e), mib(m.Reported))
}

// Metrics reads a kubelet metrics endpoint of node ("metrics",
// "metrics/resource") in the Prometheus text format, by family name.
func Metrics(ctx context.Context, cs kubernetes.Interface, node, path string) (Families, error) {
	data, err := proxy(ctx, cs, node, path)
	if err != nil {
		return nil, err
	}
	f, err := ParseMetrics(data)
	if err != nil {
		return nil, fmt.Errorf("the /%s of node %s: %w", path, node, err)
	}
	return f, nil
}

// Families are metric families by name.
type Families map[string]*dto.MetricFamily

// ParseMetrics reads the Prometheus text format. The parser is told which
// metric names to accept: prometheus/common v0.70 (Kubernetes 1.37's)
// panics without a scheme. UTF-8 names are a superset of the legacy ones
// the kubelet writes.
func ParseMetrics(data []byte) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	f, err := p.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return Families(f), nil
}

// Sum adds the values of family name's samples whose labels include every
// one of match; found says whether any sample matched.
func (fs Families) Sum(name string, match map[string]string) (total float64, found bool) {
	fam, ok := fs[name]
	if !ok {
		return 0, false
	}
	for _, m := range fam.GetMetric() {
		v, scalar := value(m)
		if !scalar || !hasLabels(m, match) {
			continue
		}
		found = true
		total += v
	}
	return total, found
}

// Labelled lists the values of a label across family name's samples, sorted.
func (fs Families) Labelled(name, label string) []string {
	seen := map[string]bool{}
	var out []string
	if fam, ok := fs[name]; ok {
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && !seen[l.GetValue()] {
					seen[l.GetValue()] = true
					out = append(out, l.GetValue())
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func hasLabels(m *dto.Metric, match map[string]string) bool {
	for k, v := range match {
		ok := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// value is a counter's, gauge's or untyped sample's value; histograms and
// summaries have none.
func value(m *dto.Metric) (float64, bool) {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}
