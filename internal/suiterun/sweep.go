package suiterun

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/winconform/winconform/internal/runid"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/winconform/winconform/internal/kubenode"
	"github.com/winconform/winconform/internal/runmark"
)

// Left is something a run left in the cluster, and what became of it.
type Left struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Deleted bool   `json:"deleted"`
	Err     string `json:"error,omitempty"`
}

func (l Left) String() string {
	s := l.Kind + " " + l.Name
	if l.Err != "" {
		return s + " (not deleted: " + l.Err + ")"
	}
	return s
}

// Sweep deletes what run runID left in the cluster (namespaces, simulated
// nodes, RuntimeClasses, ClusterRoles, PersistentVolumes labelled with its
// ID), takes back what it added to nodes (labels, taints), removes its
// heartbeat, and waits, up to timeout, for its namespaces and volumes to be
// gone. It returns what it found; an empty list means the run cleaned up
// after itself.
func Sweep(ctx context.Context, cs kubernetes.Interface, runID string, timeout time.Duration) ([]Left, error) {
	if runID == "" {
		return nil, fmt.Errorf("no run ID to find the run's objects by")
	}
	byRun, err := collect(ctx, cs, runID)
	if err != nil {
		return nil, err
	}
	left, pending := remove(ctx, cs, byRun[runID])
	deleteLease(ctx, cs, runID)
	return left, waitGone(ctx, pending, timeout)
}

// SweepOptions say which runs SweepDead takes.
type SweepOptions struct {
	// OlderThan is how long a run's heartbeat may be silent (or, for a run
	// with none, how old its newest object must be) before it counts as
	// dead; a Lease that promised a longer silence gets that.
	OlderThan time.Duration
	// DryRun lists what would go and removes nothing.
	DryRun bool
	// Except is a run never swept (the run that sweeps).
	Except string
	// Now is the time to judge by (time.Now when zero).
	Now time.Time
	// Wait bounds the wait for namespaces and volumes to be gone (2 minutes when 0).
	Wait time.Duration
	// Log gets a line per run, as it is judged.
	Log io.Writer
}

// SweepFormat is the format of a SweepReport.
const SweepFormat = "winconform.sweep/v1"

// SweepReport is what SweepDead found and did (swept.json).
type SweepReport struct {
	Format    string    `json:"format"`
	At        time.Time `json:"at"`
	OlderThan string    `json:"olderThan"`
	DryRun    bool      `json:"dryRun,omitempty"`
	// By is the run that swept before its specs ("" for winconform sweep).
	By string `json:"by,omitempty"`
	// Dead are the runs whose things were removed (or, dry, would be).
	Dead []RunSwept `json:"dead"`
	// Live are the runs whose things were left, being alive.
	Live []RunSwept `json:"live,omitempty"`
}

// RunSwept is one run a sweep judged.
type RunSwept struct {
	ID      string     `json:"run"`
	Started *time.Time `json:"started,omitempty"`
	// LastBeat is its heartbeat's last renewal; nil when it had none.
	LastBeat *time.Time `json:"lastHeartbeat,omitempty"`
	Why      string     `json:"why"`
	Left     []Left     `json:"left,omitempty"`
}

// Removed counts the objects and node changes the dead runs left.
func (r SweepReport) Removed() int {
	n := 0
	for _, d := range r.Dead {
		n += len(d.Left)
	}
	return n
}

// Lines say, a line per run, what the sweep found and did.
func (r SweepReport) Lines() []string {
	verb := "removed"
	if r.DryRun {
		verb = "would remove"
	}
	var out []string
	for _, d := range r.Dead {
		if len(d.Left) == 0 {
			out = append(out, fmt.Sprintf("run %s: dead (%s); nothing of it was left but its heartbeat", d.ID, d.Why))
			continue
		}
		items := make([]string, len(d.Left))
		for i, l := range d.Left {
			items[i] = l.String()
		}
		out = append(out, fmt.Sprintf("run %s: dead (%s); %s %s", d.ID, d.Why, verb, strings.Join(items, ", ")))
	}
	for _, l := range r.Live {
		out = append(out, fmt.Sprintf("run %s: alive (%s); left alone", l.ID, l.Why))
	}
	return out
}

// SweepDead removes what runs that are no longer alive left in the
// cluster: a run is alive while its heartbeat (runmark.Beat) is renewed
// within OlderThan (or the Lease's own duration, when longer); a run with
// no heartbeat is dead once its newest object is older than OlderThan. The
// objects of live runs, and of Except, are never touched.
func SweepDead(ctx context.Context, cs kubernetes.Interface, o SweepOptions) (SweepReport, error) {
	if o.OlderThan < 0 {
		return SweepReport{}, fmt.Errorf("--older-than %v is negative: give a duration such as 2m", o.OlderThan)
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Wait <= 0 {
		o.Wait = 2 * time.Minute
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	rep := SweepReport{Format: SweepFormat, At: o.Now.UTC(), OlderThan: o.OlderThan.String(), DryRun: o.DryRun, By: o.Except, Dead: []RunSwept{}}
	byRun, err := collect(ctx, cs, "")
	if err != nil {
		return rep, err
	}
	leases, err := cs.CoordinationV1().Leases(runmark.LeaseNamespace).List(ctx, metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return rep, fmt.Errorf("listing the runs' heartbeats (Leases in %s): %w", runmark.LeaseNamespace, err)
	}
	runs := map[string]*RunSwept{}
	judge := func(id string) *RunSwept {
		if runs[id] == nil {
			runs[id] = &RunSwept{ID: id}
		}
		return runs[id]
	}
	alive := map[string]bool{}
	if leases != nil {
		for i := range leases.Items {
			l := &leases.Items[i]
			r := judge(l.Name)
			last := runmark.LastBeat(l)
			r.LastBeat = &last
			if st := runmark.StartedOf(l); !st.IsZero() {
				r.Started = &st
			}
			ago := o.Now.Sub(last).Round(time.Second)
			if alive[l.Name] = runmark.Alive(l, o.OlderThan, o.Now); alive[l.Name] {
				r.Why = fmt.Sprintf("heartbeat %s ago", ago)
			} else {
				r.Why = fmt.Sprintf("heartbeat stopped %s ago, at %s", ago, last.UTC().Format(time.RFC3339))
			}
		}
	}
	for id, items := range byRun {
		r := judge(id)
		if r.LastBeat != nil {
			continue
		}
		newest := time.Time{}
		for _, it := range items {
			if it.created.After(newest) {
				newest = it.created
			}
			if !it.started.IsZero() && (r.Started == nil || it.started.Before(*r.Started)) {
				st := it.started
				r.Started = &st
			}
		}
		ago := o.Now.Sub(newest).Round(time.Second)
		if alive[id] = ago <= o.OlderThan; alive[id] {
			r.Why = fmt.Sprintf("no heartbeat, but its newest object is %s old, younger than %s", ago, o.OlderThan)
		} else {
			r.Why = fmt.Sprintf("no heartbeat; its newest object is %s old", ago)
		}
	}
	ids := make([]string, 0, len(runs))
	for id := range runs {
		if id != o.Except {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var pending []gone
	for _, id := range ids {
		r := runs[id]
		if alive[id] {
			rep.Live = append(rep.Live, *r)
			continue
		}
		if o.DryRun {
			for _, it := range byRun[id] {
				r.Left = append(r.Left, it.planned()...)
			}
		} else {
			var p []gone
			r.Left, p = remove(ctx, cs, byRun[id])
			pending = append(pending, p...)
			deleteLease(ctx, cs, id)
		}
		sortLeft(r.Left)
		rep.Dead = append(rep.Dead, *r)
	}
	for _, line := range rep.Lines() {
		fmt.Fprintln(o.Log, line)
	}
	return rep, waitGone(ctx, pending, o.Wait)
}

// item is one thing a run left: an object, or its change to a node.
type item struct {
	kind, name string
	// created is when the object was made (a node change: when its run started).
	created time.Time
	// started is when its run started, when the object says so.
	started time.Time
	// undo removes it: what it removed, and what to wait for.
	undo func(ctx context.Context) ([]Left, *gone)
	// plan is what undo would remove (for a dry run).
	plan []Left
}

func (it item) planned() []Left {
	if it.plan != nil {
		return it.plan
	}
	return []Left{{Kind: it.kind, Name: it.name}}
}

// gone is an object deleted whose end is awaited (a namespace, a volume,
// which finalizers keep a while).
type gone struct {
	kind, name string
	get        func(ctx context.Context) error
}

// kind is a kind of object the runs create, found by RunLabel.
type kind struct {
	name string
	list func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error)
	del  func(ctx context.Context, cs kubernetes.Interface, name string) error
	get  func(ctx context.Context, cs kubernetes.Interface, name string) error
	// wait: a deleted one is awaited (finalizers keep it a while).
	wait bool
}

// objects lists the objects of kind k that match the label selector sel.
func (k kind) objects(ctx context.Context, cs kubernetes.Interface, sel string) ([]metav1.Object, error) {
	list, err := k.list(ctx, cs, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing the %ss: %w", k.name, err)
	}
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]metav1.Object, len(objs))
	for i, o := range objs {
		if out[i], err = meta.Accessor(o); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// client is what a sweep needs of a typed client of cluster-scoped objects.
type client[L runtime.Object, O any] interface {
	List(ctx context.Context, o metav1.ListOptions) (L, error)
	Get(ctx context.Context, name string, o metav1.GetOptions) (O, error)
	Delete(ctx context.Context, name string, o metav1.DeleteOptions) error
}

func kindOf[L runtime.Object, O any](name string, wait bool, c func(kubernetes.Interface) client[L, O]) kind {
	return kind{name: name, wait: wait,
		list: func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) (runtime.Object, error) {
			return c(cs).List(ctx, o)
		},
		del: func(ctx context.Context, cs kubernetes.Interface, n string) error {
			return c(cs).Delete(ctx, n, metav1.DeleteOptions{})
		},
		get: func(ctx context.Context, cs kubernetes.Interface, n string) error {
			_, err := c(cs).Get(ctx, n, metav1.GetOptions{})
			return err
		}}
}

var kinds = []kind{
	kindOf("namespace", true, func(cs kubernetes.Interface) client[*corev1.NamespaceList, *corev1.Namespace] {
		return cs.CoreV1().Namespaces()
	}),
	kindOf("node", false, func(cs kubernetes.Interface) client[*corev1.NodeList, *corev1.Node] { return cs.CoreV1().Nodes() }),
	kindOf("runtimeclass", false, func(cs kubernetes.Interface) client[*nodev1.RuntimeClassList, *nodev1.RuntimeClass] {
		return cs.NodeV1().RuntimeClasses()
	}),
	kindOf("clusterrole", false, func(cs kubernetes.Interface) client[*rbacv1.ClusterRoleList, *rbacv1.ClusterRole] {
		return cs.RbacV1().ClusterRoles()
	}),
	kindOf("persistentvolume", true, func(cs kubernetes.Interface) client[*corev1.PersistentVolumeList, *corev1.PersistentVolume] {
		return cs.CoreV1().PersistentVolumes()
	}),
}

// Footprint is everything in the cluster of the kinds a run can leave, as
// sorted lines ("<kind> <name>"): namespaces, simulated and real nodes,
// RuntimeClasses, ClusterRoles, PersistentVolumes, each node's labels
// ("node-label <node> k=v"), taints ("node-taint <node> k=v:Effect") and
// runs' change records ("node-change <node> <run>"), and the runs'
// heartbeats ("heartbeat <run>"): what to compare before and after runs.
func Footprint(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	var out []string
	for _, k := range kinds {
		objs, err := k.objects(ctx, cs, "")
		if err != nil {
			return nil, err
		}
		for _, m := range objs {
			out = append(out, k.name+" "+m.GetName())
			if n, ok := m.(*corev1.Node); ok {
				for key, v := range n.Labels {
					out = append(out, "node-label "+n.Name+" "+key+"="+v)
				}
				for _, t := range n.Spec.Taints {
					out = append(out, "node-taint "+n.Name+" "+runmark.TaintString(t))
				}
				for id := range runmark.NodeChanges(n) {
					out = append(out, "node-change "+n.Name+" "+id)
				}
			}
		}
	}
	leases, err := cs.CoordinationV1().Leases(runmark.LeaseNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the runs' heartbeats: %w", err)
	}
	for _, l := range leases.Items {
		out = append(out, "heartbeat "+l.Name)
	}
	sort.Strings(out)
	return out, nil
}

// collect finds, by run, what the runs left: the objects labelled with
// their ID, and their changes to nodes. With only set, the run only's
// (its namespaces also by the e2e framework's label); otherwise every
// run's (namespaces by the e2e framework's label only where the ID is of
// the CLI's shape: upstream's e2e runs label theirs too).
func collect(ctx context.Context, cs kubernetes.Interface, only string) (map[string][]item, error) {
	byRun := map[string][]item{}
	seen := map[string]bool{}
	for _, k := range kinds {
		selectors := []string{runmark.RunLabel}
		if only != "" {
			selectors = []string{runmark.RunLabel + "=" + only}
		}
		if k.name == "namespace" {
			if only != "" {
				selectors = append(selectors, runmark.E2ERunLabel+"="+only)
			} else {
				selectors = append(selectors, runmark.E2ERunLabel)
			}
		}
		for _, sel := range selectors {
			objs, err := k.objects(ctx, cs, sel)
			if err != nil {
				return nil, err
			}
			for _, m := range objs {
				id, created := runmark.Of(m)
				key := k.name + "/" + m.GetName()
				switch {
				case seen[key], m.GetDeletionTimestamp() != nil:
					continue
				case only == "" && m.GetLabels()[runmark.RunLabel] == "" && !runid.Made(id):
					continue // an e2e-run namespace of another harness
				}
				seen[key] = true
				byRun[id] = append(byRun[id], objectItem(cs, k, m.GetName(), created, runmark.StartedOf(m)))
			}
		}
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the nodes, for the runs' changes to them: %w", err)
	}
	for _, n := range nodes.Items {
		for id, c := range runmark.NodeChanges(&n) {
			if only != "" && id != only {
				continue
			}
			byRun[id] = append(byRun[id], nodeChangeItem(cs, n, id, c))
		}
	}
	return byRun, nil
}

func objectItem(cs kubernetes.Interface, k kind, name string, created, started time.Time) item {
	return item{kind: k.name, name: name, created: created, started: started,
		undo: func(ctx context.Context) ([]Left, *gone) {
			err := k.del(ctx, cs, name)
			l := Left{Kind: k.name, Name: name, Deleted: err == nil || apierrors.IsNotFound(err)}
			if !l.Deleted {
				l.Err = err.Error()
			}
			if !l.Deleted || !k.wait {
				return []Left{l}, nil
			}
			return []Left{l}, &gone{kind: k.name, name: name, get: func(ctx context.Context) error { return k.get(ctx, cs, name) }}
		}}
}

// nodeChangeItem takes back run id's change c to node n.
func nodeChangeItem(cs kubernetes.Interface, n corev1.Node, id string, c runmark.NodeChange) item {
	lefts := func(undone []string) []Left {
		var out []Left
		for _, u := range undone {
			what, value, _ := strings.Cut(u, " ")
			out = append(out, Left{Kind: "node " + what, Name: n.Name + " " + value, Deleted: true})
		}
		if len(out) == 0 {
			out = []Left{{Kind: "node annotation", Name: n.Name + " " + runmark.NodeChangePrefix + id, Deleted: true}}
		}
		return out
	}
	plan := lefts(runmark.UndoNodeChange(n.DeepCopy(), id))
	for i := range plan {
		plan[i].Deleted = false
	}
	return item{kind: "node change", name: n.Name, created: c.Started, started: c.Started, plan: plan,
		undo: func(ctx context.Context) ([]Left, *gone) {
			var undone []string
			_, err := kubenode.UpdateNode(ctx, cs, n.Name, func(got *corev1.Node) (bool, error) {
				undone = runmark.UndoNodeChange(got, id)
				return true, nil
			})
			switch {
			case apierrors.IsNotFound(err):
				return nil, nil // the node is gone, and the change with it
			case err != nil:
				failed := append([]Left(nil), plan...)
				for i := range failed {
					failed[i].Err = err.Error()
				}
				return failed, nil
			}
			return lefts(undone), nil
		}}
}

// remove undoes items and says what it removed, and what to wait for.
func remove(ctx context.Context, cs kubernetes.Interface, items []item) ([]Left, []gone) {
	var left []Left
	var pending []gone
	for _, it := range items {
		l, g := it.undo(ctx)
		left = append(left, l...)
		if g != nil {
			pending = append(pending, *g)
		}
	}
	sortLeft(left)
	return left, pending
}

func deleteLease(ctx context.Context, cs kubernetes.Interface, id string) {
	_ = cs.CoordinationV1().Leases(runmark.LeaseNamespace).Delete(ctx, id, metav1.DeleteOptions{})
}

func sortLeft(left []Left) {
	sort.Slice(left, func(i, j int) bool { return left[i].Kind+" "+left[i].Name < left[j].Kind+" "+left[j].Name })
}

// waitGone waits, up to timeout, for the deleted namespaces and volumes
// to be gone, and names those that are not.
func waitGone(ctx context.Context, pending []gone, timeout time.Duration) error {
	if len(pending) == 0 {
		return nil
	}
	var still []string
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		still = still[:0]
		for _, g := range pending {
			if err := g.get(ctx); !apierrors.IsNotFound(err) {
				still = append(still, g.kind+" "+g.name)
			}
		}
		return len(still) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%s still there %s after they were deleted", strings.Join(still, ", "), timeout)
	}
	return nil
}
