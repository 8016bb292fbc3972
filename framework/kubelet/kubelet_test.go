package kubelet

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(capacity, allocatable string, extra corev1.ResourceList) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	n.Status.Capacity = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(capacity)}
	for k, v := range extra {
		n.Status.Capacity[k] = v
	}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(allocatable)}
	return n
}

// fivePercentOf1000Mi is 5% of 1000 MiB with the kubelet's float32 fraction.
var fivePercentOf1000Mi = func() int64 {
	frac, capacity := float32(0.05), int64(1000<<20)
	return int64(float64(capacity) * float64(frac))
}()

func TestNodeMemoryFromConfigz(t *testing.T) {
	cases := []struct {
		name    string
		configz string
		node    *corev1.Node
		want    int64
	}{
		{"reserved and a hard threshold",
			`{"kubeletconfig":{"systemReserved":{"memory":"2Gi","cpu":"500m"},"kubeReserved":{"memory":"500Mi"},"evictionHard":{"memory.available":"100Mi","nodefs.available":"10%"}}}`,
			node("8Gi", "0", nil), 8<<30 - 2<<30 - 500<<20 - 100<<20},
		{"a percentage threshold is taken of capacity",
			`{"kubeletconfig":{"evictionHard":{"memory.available":"5%"}}}`,
			node("1000Mi", "0", nil), 1000<<20 - fivePercentOf1000Mi},
		{"nothing reserved",
			`{"kubeletconfig":{}}`,
			node("4Gi", "0", nil), 4 << 30},
		{"huge pages come off allocatable memory",
			`{"kubeletconfig":{"evictionHard":{"memory.available":"100Mi"}}}`,
			node("4Gi", "0", corev1.ResourceList{"hugepages-2Mi": resource.MustParse("512Mi")}), 4<<30 - 100<<20 - 512<<20},
		{"never below zero",
			`{"kubeletconfig":{"systemReserved":{"memory":"5Gi"}}}`,
			node("4Gi", "0", nil), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfigz([]byte(c.configz))
			if err != nil {
				t.Fatal(err)
			}
			m, err := NodeMemory(c.node, cfg)
			if err != nil {
				t.Fatal(err)
			}
			e := m.Expected()
			if got := e.Value(); got != c.want {
				t.Errorf("expected allocatable %d, got %d (%s)", c.want, got, m)
			}
		})
	}
}

func TestParseConfigzRefusesOtherAnswers(t *testing.T) {
	for _, in := range []string{`not json`, `{"componentconfig":{}}`, `[]`} {
		if _, err := ParseConfigz([]byte(in)); err == nil {
			t.Errorf("%q: accepted", in)
		}
	}
}

func TestNodeMemoryBadValues(t *testing.T) {
	for _, configz := range []string{
		`{"kubeletconfig":{"systemReserved":{"memory":"lots"}}}`,
		`{"kubeletconfig":{"kubeReserved":{"memory":"1.5.5Gi"}}}`,
		`{"kubeletconfig":{"evictionHard":{"memory.available":"120%"}}}`,
		`{"kubeletconfig":{"evictionHard":{"memory.available":"x%"}}}`,
		`{"kubeletconfig":{"evictionHard":{"memory.available":"1Zz"}}}`,
	} {
		cfg, err := ParseConfigz([]byte(configz))
		if err != nil {
			t.Fatal(err)
		}
		_, err = NodeMemory(node("4Gi", "4Gi", nil), cfg)
		if err == nil {
			t.Errorf("%s: accepted", configz)
		}
	}
	cfg, _ := ParseConfigz([]byte(`{"kubeletconfig":{}}`))
	n := node("4Gi", "4Gi", nil)
	delete(n.Status.Capacity, corev1.ResourceMemory)
	if _, err := NodeMemory(n, cfg); err == nil || !strings.Contains(err.Error(), "no memory capacity") {
		t.Errorf("a node without memory capacity: %v", err)
	}
}

const metricsText = `# HELP kubelet_started_host_process_containers_total Cumulative number of hostprocess containers started.
# TYPE kubelet_started_host_process_containers_total counter
kubelet_started_host_process_containers_total{container_type="container"} 4
kubelet_started_host_process_containers_total{container_type="init_container"} 2
# HELP kubelet_started_host_process_containers_errors_total Cumulative number of errors.
# TYPE kubelet_started_host_process_containers_errors_total counter
kubelet_started_host_process_containers_errors_total{code="CreateContainerError",container_type="container"} 1
kubelet_started_host_process_containers_errors_total{code="RunContainerError",container_type="container"} 2
# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="ns1",pod="a"} 1.2e+07 1700000000000
pod_memory_working_set_bytes{namespace="ns1",pod="b"} 0 1700000000000
# HELP apiserver_request_duration_seconds a histogram
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{le="1"} 3
apiserver_request_duration_seconds_bucket{le="+Inf"} 4
apiserver_request_duration_seconds_sum 2
apiserver_request_duration_seconds_count 4
`

func TestMetrics(t *testing.T) {
	fs, err := ParseMetrics([]byte(metricsText))
	if err != nil {
		t.Fatal(err)
	}
	sum := func(name string, match map[string]string) float64 {
		v, _ := fs.Sum(name, match)
		return v
	}
	if got := sum("kubelet_started_host_process_containers_total", map[string]string{"container_type": "container"}); got != 4 {
		t.Errorf("started containers: %v", got)
	}
	if got := sum("kubelet_started_host_process_containers_errors_total", map[string]string{"container_type": "container"}); got != 3 {
		t.Errorf("errors are summed over their codes: %v", got)
	}
	if _, found := fs.Sum("kubelet_started_host_process_containers_errors_total", map[string]string{"container_type": "init_container"}); found {
		t.Error("a label value no sample has matched")
	}
	if got := sum("pod_memory_working_set_bytes", map[string]string{"namespace": "ns1", "pod": "a"}); got != 1.2e7 {
		t.Errorf("working set of pod a: %v", got)
	}
	if _, found := fs.Sum("apiserver_request_duration_seconds", nil); found {
		t.Error("a histogram has no single value")
	}
	if _, found := fs.Sum("no_such_metric", nil); found {
		t.Error("a missing family matched")
	}
	if got := fs.Labelled("pod_memory_working_set_bytes", "pod"); strings.Join(got, ",") != "a,b" {
		t.Errorf("pods: %v", got)
	}
	if _, err := ParseMetrics([]byte("this is { not metrics\n")); err == nil {
		t.Error("garbage parsed")
	}
}
