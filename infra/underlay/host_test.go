package underlay

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func newHost(t *testing.T, f *fakeTables) (*Host, *fakeFlows) {
	t.Helper()
	fw := filepath.Join(t.TempDir(), "ip_forward")
	if err := os.WriteFile(fw, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	flows := &fakeFlows{}
	return &Host{Tables: f, Flows: flows, ForwardingFile: fw}, flows
}

// Apply puts the plan's rules at the top of DOCKER-USER, in the plan's
// order and ahead of Docker's RETURN, and the nat RETURN ahead of Docker's
// MASQUERADE of the kind network; applied again, it changes nothing.
func TestApply(t *testing.T) {
	f := dockerHost()
	h, flows := newHost(t, f)
	p := mustPlan(t, kindNet, remoteNode)
	changes, err := h.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 11 {
		t.Errorf("%d changes, want 11: %v", len(changes), changes)
	}
	user := f.lines("filter", "DOCKER-USER")
	if len(user) != 11 || user[10] != "-A DOCKER-USER -j RETURN" {
		t.Fatalf("DOCKER-USER:\n%s", strings.Join(user, "\n"))
	}
	for i, r := range p.RulesOf(remoteNode.Name)[:10] {
		if !strings.Contains(user[i], r.Mark("c1")) {
			t.Errorf("DOCKER-USER rule %d is %q, want %s", i+1, user[i], r.Purpose)
		}
	}
	nat := f.lines("nat", "POSTROUTING")
	if !strings.Contains(nat[0], ":keep-addresses") || !strings.Contains(nat[1], "MASQUERADE") {
		t.Errorf("POSTROUTING:\n%s", strings.Join(nat, "\n"))
	}
	if !slices.Equal(flows.forgot, []string{"172.18.0.0/16 -> 192.168.80.2"}) {
		t.Errorf("conntrack forgot %v, want the kind network's UDP flows to the machine, once the RETURN is in", flows.forgot)
	}
	again, err := h.Apply(p)
	if err != nil || len(again) != 0 {
		t.Errorf("applying again: %v, %v; want no change", again, err)
	}
	if probs, err := h.Missing(p, remoteNode.Name); err != nil || len(probs) != 0 {
		t.Errorf("Missing after Apply: %v, %v", probs, err)
	}
}

// A rule taken away is put back alone; a rule of a machine the plan no
// longer has, and a duplicate, are removed; other clusters' rules and
// Docker's stay.
func TestApplyRepairs(t *testing.T) {
	f := dockerHost()
	h, _ := newHost(t, f)
	other := kindNet
	other.Cluster = "c2"
	if _, err := h.Apply(mustPlan(t, other, lab)); err != nil {
		t.Fatal(err)
	}
	p := mustPlan(t, kindNet, remoteNode, lab)
	if _, err := h.Apply(p); err != nil {
		t.Fatal(err)
	}
	vx := p.RulesOf(remoteNode.Name)[3]
	if err := f.Delete("filter", "DOCKER-USER", vx.Spec("c1")...); err != nil {
		t.Fatal(err)
	}
	dup := p.RulesOf(lab.Name)[0]
	if err := f.Insert("filter", "DOCKER-USER", 1, dup.Spec("c1")...); err != nil {
		t.Fatal(err)
	}
	changes, err := h.Apply(mustPlan(t, kindNet, remoteNode)) // win-a left the cluster
	if err != nil {
		t.Fatal(err)
	}
	var added, removed int
	for _, c := range changes {
		switch c.Op {
		case "added":
			added++
			if !strings.Contains(c.Rule, vx.Mark("c1")) {
				t.Errorf("added %s, want only %s back", c.Rule, vx.Purpose)
			}
		case "removed":
			removed++
			if !strings.Contains(c.Rule, "winconform-underlay:c1:win-a:") {
				t.Errorf("removed %s, want only win-a's rules of c1", c.Rule)
			}
		}
	}
	if added != 1 || removed != 12 {
		t.Errorf("added %d, removed %d; want 1 and win-a's 11 and its duplicate: %v", added, removed, changes)
	}
	clusters, _ := h.Clusters()
	slices.Sort(clusters)
	if !slices.Equal(clusters, []string{"c1", "c2"}) {
		t.Errorf("clusters with rules: %v", clusters)
	}
	if got := f.lines("nat", "POSTROUTING"); !slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, "-s 172.17.0.0/16") }) {
		t.Errorf("Docker's rules went: %v", got)
	}
}

// Docker inserts a network's MASQUERADE at the top of POSTROUTING when it
// makes the network (libnetwork's bridge driver: its nat rule is
// inserted); a kind network made again after the RETURN would put it
// ahead. The check names it, and Apply moves the RETURN back on top.
func TestMasqueradeAhead(t *testing.T) {
	f := dockerHost()
	h, _ := newHost(t, f)
	p := mustPlan(t, kindNet, remoteNode)
	if _, err := h.Apply(p); err != nil {
		t.Fatal(err)
	}
	masq := []string{"-s", "172.18.0.0/16", "!", "-o", "br-kind", "-j", "MASQUERADE"}
	if err := f.Delete("nat", "POSTROUTING", masq...); err != nil {
		t.Fatal(err)
	}
	if err := f.Insert("nat", "POSTROUTING", 1, masq...); err != nil {
		t.Fatal(err)
	}
	probs, err := h.Missing(p, remoteNode.Name)
	if err != nil || len(probs) != 1 || probs[0].Rule.Purpose != "keep-addresses" || !strings.Contains(probs[0].What, "behind Docker's MASQUERADE") {
		t.Fatalf("Missing = %v, %v; want keep-addresses behind the MASQUERADE", probs, err)
	}
	if _, err := h.Apply(p); err != nil {
		t.Fatal(err)
	}
	if nat := f.lines("nat", "POSTROUTING"); !strings.Contains(nat[0], ":keep-addresses") {
		t.Errorf("after Apply, POSTROUTING:\n%s", strings.Join(nat, "\n"))
	}
}

// Remove takes a cluster's rules away, whoever made them; Sweep those of
// clusters that are gone.
func TestRemoveAndSweep(t *testing.T) {
	f := dockerHost()
	h, _ := newHost(t, f)
	other := kindNet
	other.Cluster = "c2"
	for _, p := range []Plan{mustPlan(t, kindNet, remoteNode), mustPlan(t, other, lab)} {
		if _, err := h.Apply(p); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := h.Remove("c1")
	if err != nil || len(removed) != 11 {
		t.Fatalf("Remove: %d changes, %v", len(removed), err)
	}
	swept, err := h.Sweep(func(c string) bool { return c == "c1" })
	if err != nil || len(swept) != 11 {
		t.Fatalf("Sweep: %d changes, %v", len(swept), err)
	}
	if got := f.lines("filter", "DOCKER-USER"); !slices.Equal(got, []string{"-A DOCKER-USER -j RETURN"}) {
		t.Errorf("DOCKER-USER left: %v", got)
	}
	if got := f.lines("nat", "POSTROUTING"); len(got) != 2 {
		t.Errorf("POSTROUTING left: %v", got)
	}
}

func TestApplyWithoutDockerUser(t *testing.T) {
	h, _ := newHost(t, newFakeTables())
	_, err := h.Apply(mustPlan(t, kindNet, remoteNode))
	if err == nil || !strings.Contains(err.Error(), "no DOCKER-USER chain") {
		t.Errorf("Apply without DOCKER-USER: %v", err)
	}
	f := dockerHost()
	f.fail["insert"] = errors.New("iptables: Permission denied")
	h, _ = newHost(t, f)
	if _, err := h.Apply(mustPlan(t, kindNet, remoteNode)); err == nil || !strings.Contains(err.Error(), "iptables -t") {
		t.Errorf("a failed insert: %v, want the command in the error", err)
	}
}

func TestCounters(t *testing.T) {
	f := dockerHost()
	h, _ := newHost(t, f)
	p := mustPlan(t, kindNet, remoteNode)
	if _, err := h.Apply(p); err != nil {
		t.Fatal(err)
	}
	f.count("winconform-underlay:c1:c1-remote:vxlan-in", 7)
	f.count("winconform-underlay:c1:c1-remote:vxlan-out", 9)
	got, err := h.Counters(p, remoteNode.Name)
	if err != nil || got["vxlan-in"] != 7 || got["vxlan-out"] != 9 || got["kubelet"] != 0 {
		t.Errorf("Counters = %v, %v", got, err)
	}
}
