package inventory

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file walks the YAML node tree. Walking nodes rather than decoding
// into structs lets the loader report every problem (not only the first),
// name each field with its machine, give lines, and take scalars as written.

// maxMergeDepth bounds nested merge keys (<<), which can only nest as deep as
// the file itself but need no more than a few levels in practice.
const maxMergeDepth = 16

// maxMerged bounds the entries that merge keys bring in over a whole file,
// so that merges of merges of one anchor (a "billion laughs") stay cheap.
const maxMerged = 10000

// entry is one key: value pair of a mapping.
type entry struct {
	key  string
	k, v *yaml.Node
}

// deref follows aliases (*name) to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxMergeDepth; i++ {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is absent or an explicit null (~, null or nothing).
func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe names a node's type for messages: "a list", "a mapping"...
func describe(n *yaml.Node) string {
	n = deref(n)
	switch {
	case isNull(n):
		return "empty"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		return "the number " + n.Value
	case "!!bool":
		return n.Value
	}
	return "the string " + quote(n.Value)
}

// quote quotes a value for a message, cut short when long.
func quote(s string) string {
	const max = 64
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// entries returns a mapping's entries in order, with merge keys (<<)
// expanded: keys written in the mapping win over merged ones, and earlier
// merged mappings over later. It reports keys that are not strings and
// duplicate keys, and a node that is not a mapping (example shows the
// mapping's shape for the fix). A null node is an empty mapping.
func (d *decoder) entries(s scope, field string, n *yaml.Node, example string) ([]entry, bool) {
	return d.entriesDepth(s, field, n, example, 0)
}

func (d *decoder) entriesDepth(s scope, field string, n *yaml.Node, example string, depth int) ([]entry, bool) {
	n = deref(n)
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		d.report(s, field, n.Line, "is "+describe(n)+", not a mapping", "write a mapping such as "+example)
		return nil, false
	}
	if depth > maxMergeDepth {
		d.report(s, field, n.Line, "merge keys (<<) are nested too deep", "flatten the merged mappings")
		return nil, false
	}
	var out []entry
	seen := map[string]*yaml.Node{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		kd := deref(k)
		if kd == nil || kd.Kind != yaml.ScalarNode {
			d.report(s, field, k.Line, "has a key that is "+describe(kd)+", not a name", "write each key as a plain name")
			continue
		}
		if prev, dup := seen[kd.Value]; dup {
			d.report(s, join(field, kd.Value), k.Line, fmt.Sprintf("is written twice (first at line %d)", prev.Line), "keep one of them")
			continue
		}
		seen[kd.Value] = k
		out = append(out, entry{key: kd.Value, k: k, v: v})
	}
	for _, m := range merges {
		if d.merged > maxMerged {
			if !d.mergeReported {
				d.mergeReported = true
				d.report(s, join(field, "<<"), m.Line, fmt.Sprintf("merge keys bring in more than %d entries", maxMerged),
					"write the repeated fields out, or use defaults")
			}
			return out, false
		}
		m = deref(m)
		sources := []*yaml.Node{m}
		if m != nil && m.Kind == yaml.SequenceNode {
			sources = m.Content
		}
		for _, src := range sources {
			if src == nil {
				continue
			}
			if deref(src) == nil || deref(src).Kind != yaml.MappingNode {
				d.report(s, join(field, "<<"), src.Line, "merges "+describe(src), "merge a mapping (<<: *anchor) or a list of them")
				continue
			}
			merged, _ := d.entriesDepth(s, field, src, example, depth+1)
			d.merged += len(merged)
			for _, e := range merged {
				if _, dup := seen[e.key]; !dup {
					seen[e.key] = e.k
					out = append(out, e)
				}
			}
		}
	}
	return out, true
}

// join appends key to a field path: "winrm" + "port" = "winrm.port".
func join(base, key string) string {
	if base == "" {
		return key
	}
	return base + "." + key
}

// accept reports a key that is an inline password or that is not one of
// known (suggesting the nearest known key) and returns false for it.
func (d *decoder) accept(s scope, base string, e entry, what string, known []string) bool {
	if isPasswordKey(e.key) {
		d.inlinePassword(s, join(base, e.key), e.k.Line)
		return false
	}
	for _, k := range known {
		if e.key == k {
			return true
		}
	}
	fix := what + " accepts " + joinOr(known)
	if near := suggest(e.key, known); near != "" {
		fix = fmt.Sprintf("did you mean %q? %s", near, fix)
	}
	d.report(s, join(base, e.key), e.k.Line, "unknown field", fix)
	return false
}

// isPasswordKey reports whether a key would hold an inline password.
func isPasswordKey(key string) bool { return strings.EqualFold(key, "password") }

// inlinePassword reports an inline password. The message never holds the
// value.
func (d *decoder) inlinePassword(s scope, field string, line int) {
	d.report(s, field, line, "an inline password is refused: the inventory file must not hold passwords",
		"remove it and use passwordFrom: {env: VARIABLE} (a variable set where the harness runs) or passwordFrom: {file: PATH} (a file that holds only the password)")
}

// suggest returns the known key nearest to key, or "" when none is close.
func suggest(key string, known []string) string {
	best, bestDist := "", 3
	lk := strings.ToLower(key)
	for _, k := range known {
		if strings.ToLower(k) == lk {
			return k
		}
		if dist := levenshtein(lk, strings.ToLower(k)); dist < bestDist && dist < len(k)/2+1 {
			best, bestDist = k, dist
		}
	}
	return best
}

// levenshtein is the edit distance between a and b.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// str reads a string field. Any scalar is taken as written (port-like or
// numeric label values need no quotes); null is the empty string.
func (d *decoder) str(s scope, field string, v *yaml.Node) opt[string] {
	v = deref(v)
	o := opt[string]{set: true, line: v.Line}
	switch {
	case isNull(v):
	case v.Kind == yaml.ScalarNode:
		o.v = v.Value
	default:
		d.report(s, field, v.Line, "is "+describe(v)+", not a string", "write a single value")
		o.bad = true
	}
	return o
}

// boolean reads a true/false field; null sets it empty.
func (d *decoder) boolean(s scope, field string, v *yaml.Node) opt[bool] {
	v = deref(v)
	o := opt[bool]{set: true, line: v.Line}
	if isNull(v) {
		o.empty = true
		return o
	}
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" || v.Decode(&o.v) != nil {
		d.report(s, field, v.Line, "is "+describe(v)+", not true or false", "write true or false")
		o.bad = true
	}
	return o
}

// integer reads a whole-number field; null sets it empty.
func (d *decoder) integer(s scope, field string, v *yaml.Node, fix string) opt[int] {
	v = deref(v)
	o := opt[int]{set: true, line: v.Line}
	if isNull(v) {
		o.empty = true
		return o
	}
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&o.v) != nil {
		d.report(s, field, v.Line, "is "+describe(v)+", not a whole number", fix)
		o.bad = true
	}
	return o
}

// peekName returns the name a machine's mapping gives itself, without
// reporting anything, so that every problem of the machine can name it.
func peekName(n *yaml.Node) string {
	quiet := &decoder{}
	es, _ := quiet.entries(scope{}, "", n, "")
	for _, e := range es {
		if v := deref(e.v); e.key == "name" && v != nil && v.Kind == yaml.ScalarNode && !isNull(v) {
			return v.Value
		}
	}
	return ""
}
