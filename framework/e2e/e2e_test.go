package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/internal/runmark"
)

// A spec on real Windows nodes records the build of each (their
// node.kubernetes.io/windows-build label), one record per build, so that a
// gate for a build counts only what was seen on it; Linux nodes have none.
func TestNodeRecordsCarryTheBuild(t *testing.T) {
	got := NodeRecords("windows", []facts.Node{
		{Name: "win-a", OS: "windows", WindowsBuild: "10.0.20348"},
		{Name: "win-b", OS: "windows", WindowsBuild: "10.0.17763"},
	})
	if len(got) != 2 {
		t.Fatalf("NodeRecords = %+v, want one record per build", got)
	}
	for i, want := range []string{"10.0.20348", "10.0.17763"} {
		if got[i].Level != claims.WindowsNode || got[i].Build != want {
			t.Errorf("record %d = %+v, want windows-node on build %s", i, got[i], want)
		}
	}
	lin := NodeRecords("linux", []facts.Node{{Name: "lin-a", OS: "linux"}})
	if len(lin) != 1 || lin[0].Level != claims.Linux || lin[0].Build != "" {
		t.Errorf("Linux NodeRecords = %+v", lin)
	}
}

// The framework's namespaces are the run's: its label in the creating
// request, its start annotated.
func TestNamespacesAreTheRuns(t *testing.T) {
	old, oldStart := framework.RunID, Options.RunStarted
	defer func() { framework.RunID, Options.RunStarted = old, oldStart }()
	framework.RunID = "wc-20261125t180000-0a1b2c3d"
	Options.RunStarted = time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	cs := fake.NewSimpleClientset()
	var created map[string]string
	cs.PrependReactor("create", "namespaces", func(a k8stesting.Action) (bool, runtime.Object, error) {
		created = a.(k8stesting.CreateAction).GetObject().(*corev1.Namespace).Labels
		return false, nil, nil
	})
	ns, err := createNamespace(context.Background(), "storage", cs, map[string]string{"e2e-framework": "storage"})
	if err != nil {
		t.Fatal(err)
	}
	if created[RunLabel] != "wc-20261125t180000-0a1b2c3d" || created["e2e-run"] != "wc-20261125t180000-0a1b2c3d" || created["e2e-framework"] != "storage" {
		t.Errorf("the namespace was created with the labels %v", created)
	}
	got, _ := cs.CoreV1().Namespaces().Get(context.Background(), ns.Name, metav1.GetOptions{})
	if got.Annotations[runmark.StartedAnnotation] != "2026-11-25T18:00:00Z" || ns.Annotations[runmark.StartedAnnotation] == "" {
		t.Errorf("annotations %v", got.Annotations)
	}
}
