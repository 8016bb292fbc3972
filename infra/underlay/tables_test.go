package underlay

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// fakeTables models the chains the underlay touches as iptables shows them
// (checked against iptables v1.8.9 (nf_tables), the host's, with -S and
// -v -S): a chain lists as "-N CHAIN" (a user chain) or "-P CHAIN POLICY"
// (a built-in one) and then "-A CHAIN <spec>" per rule in order; a comment
// shows double-quoted; with counters, "-c PACKETS BYTES" comes before the
// target. -C and -D match a rule's specification exactly (the harness
// hands them the specification it inserted, or the -S line's arguments).
type fakeTables struct {
	chains  map[string][]fakeRule // "table/chain"
	builtin map[string]string     // "table/chain" -> policy
	// fail makes the named operation fail.
	fail map[string]error
}

type fakeRule struct {
	spec    []string
	packets uint64
}

func newFakeTables() *fakeTables {
	return &fakeTables{
		chains:  map[string][]fakeRule{},
		builtin: map[string]string{"nat/POSTROUTING": "ACCEPT", "filter/FORWARD": "DROP"},
		fail:    map[string]error{},
	}
}

// dockerHost is a host as Docker 20.10 leaves it with the kind network
// (172.18.0.0/16 on br-kind) and its default bridge: DOCKER-USER that
// returns, and a MASQUERADE per network.
func dockerHost() *fakeTables {
	f := newFakeTables()
	f.chains["filter/DOCKER-USER"] = []fakeRule{{spec: []string{"-j", "RETURN"}}}
	f.chains["nat/POSTROUTING"] = []fakeRule{
		{spec: []string{"-s", "172.18.0.0/16", "!", "-o", "br-kind", "-j", "MASQUERADE"}},
		{spec: []string{"-s", "172.17.0.0/16", "!", "-o", "docker0", "-j", "MASQUERADE"}},
	}
	return f
}

func (f *fakeTables) key(table, chain string) string { return table + "/" + chain }

func (f *fakeTables) ChainExists(table, chain string) (bool, error) {
	k := f.key(table, chain)
	_, user := f.chains[k]
	_, builtin := f.builtin[k]
	return user || builtin, f.fail["exists"]
}

func render(spec []string, counters *uint64) string {
	var out []string
	for i, a := range spec {
		if i > 0 && spec[i-1] == "--comment" {
			a = `"` + a + `"`
		}
		if a == "-j" && counters != nil {
			out = append(out, "-c", fmt.Sprint(*counters), fmt.Sprint(*counters*100))
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

func (f *fakeTables) list(table, chain string, counters bool) ([]string, error) {
	k := f.key(table, chain)
	var out []string
	if p, ok := f.builtin[k]; ok {
		out = append(out, "-P "+chain+" "+p)
	} else {
		out = append(out, "-N "+chain)
	}
	for _, r := range f.chains[k] {
		var c *uint64
		if counters {
			n := r.packets
			c = &n
		}
		out = append(out, "-A "+chain+" "+render(r.spec, c))
	}
	return out, nil
}

func (f *fakeTables) List(table, chain string) ([]string, error) {
	if err := f.fail["list"]; err != nil {
		return nil, err
	}
	return f.list(table, chain, false)
}

func (f *fakeTables) ListWithCounters(table, chain string) ([]string, error) {
	return f.list(table, chain, true)
}

func (f *fakeTables) Insert(table, chain string, pos int, spec ...string) error {
	if err := f.fail["insert"]; err != nil {
		return err
	}
	k := f.key(table, chain)
	rules := f.chains[k]
	if pos < 1 || pos > len(rules)+1 {
		return fmt.Errorf("iptables: Index of insertion too big.")
	}
	f.chains[k] = slices.Insert(rules, pos-1, fakeRule{spec: slices.Clone(spec)})
	return nil
}

func (f *fakeTables) index(table, chain string, spec []string) int {
	return slices.IndexFunc(f.chains[f.key(table, chain)], func(r fakeRule) bool { return slices.Equal(r.spec, spec) })
}

func (f *fakeTables) Exists(table, chain string, spec ...string) (bool, error) {
	return f.index(table, chain, spec) >= 0, nil
}

func (f *fakeTables) Delete(table, chain string, spec ...string) error {
	i := f.index(table, chain, spec)
	if i < 0 {
		return fmt.Errorf("iptables: Bad rule (does a matching rule exist in that chain?).")
	}
	k := f.key(table, chain)
	f.chains[k] = slices.Delete(f.chains[k], i, i+1)
	return nil
}

// lines are a chain's rules as -S shows them, without the chain's own line.
func (f *fakeTables) lines(table, chain string) []string {
	l, _ := f.list(table, chain, false)
	return l[1:]
}

// count sets the packets of the rule whose comment holds mark.
func (f *fakeTables) count(mark string, packets uint64) {
	for k, rules := range f.chains {
		for i, r := range rules {
			if slices.Contains(r.spec, mark) {
				f.chains[k][i].packets = packets
			}
		}
	}
}

// fakeFlows records what the host asked conntrack to forget.
type fakeFlows struct{ forgot []string }

func (f *fakeFlows) Forget(src netip.Prefix, dst netip.Addr) (uint, error) {
	f.forgot = append(f.forgot, src.String()+" -> "+dst.String())
	return 3, nil
}
