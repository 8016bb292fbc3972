package vms

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/internal/strictyaml"
)

// Block is a provider's own block of the VM file (or a mapping within it)
// as Registration.Settings decodes it: strictly, every problem reported
// with its field's path from the top of the file and its line, and
// credentials only by reference.
//
// A provider decodes its block into a struct of yaml.Node fields with an
// inline map for the keys it does not know (see internal/strictyaml), then
// reads each field with the typed methods:
//
//	type settingsDoc struct {
//		Network yaml.Node            `yaml:"network"`
//		Pool    yaml.Node            `yaml:"pool"`
//		Unknown map[string]yaml.Node `yaml:",inline"`
//	}
//	func decode(b *vms.Block) any {
//		var doc settingsDoc
//		if !b.Decode(&doc, "write a mapping such as {network: kind}") {
//			return nil
//		}
//		return Settings{Network: b.Required("network", &doc.Network, "set network: the libvirt network to attach to"),
//			Pool: b.String("pool", &doc.Pool)}
//	}
type Block struct {
	d    *decoder
	path *field.Path
	node *yaml.Node
	conn *Connection
}

// Node returns the block's node (nil when the file has no such block).
func (b *Block) Node() *yaml.Node { return b.node }

// Empty reports whether the block is absent or written empty.
func (b *Block) Empty() bool { return strictyaml.IsNull(b.node) }

// Field returns the path of key within the block, for messages:
// "libvirt.network".
func (b *Block) Field(key string) string { return b.at(key).String() }

// Env looks up an environment variable in the environment the VM file is
// loaded in (for a file the block points at that references variables
// itself, such as an inventory).
func (b *Block) Env(name string) (string, bool) { return b.d.env(name) }

// Connection returns the VM file's connection, as decoded, for settings
// that depend on it.
func (b *Block) Connection() Connection { return *b.conn }

// Decode decodes the block, a mapping, into out: a pointer to a struct of
// yaml.Node fields and one `yaml:",inline"` map[string]yaml.Node. Keys out
// has no field for are refused (a secret written inline as such), and the
// fields it knows are still decoded. fix says how to write the block, for a
// block that is not a mapping (then Decode returns false). An absent block
// decodes as an empty one.
func (b *Block) Decode(out any, fix string) bool {
	keys, ok := b.d.Mapping(b.path, b.node, out, fix)
	if !ok {
		return false
	}
	b.d.refuse(b.path, keys, b.path.String(), strictyaml.Fields(out))
	return true
}

// Child returns the block of the mapping at key (n is the key's field).
func (b *Block) Child(key string, n *yaml.Node) *Block {
	return &Block{d: b.d, path: b.at(key), node: n, conn: b.conn}
}

// at returns the path of a key, which may be dotted ("disk.pool").
func (b *Block) at(key string) *field.Path {
	p := b.path
	for _, part := range strings.Split(key, ".") {
		p = p.Child(part)
	}
	return p
}

// Report records a problem with the field key (n is its node, for the
// line; nil for the block's line).
func (b *Block) Report(key string, n *yaml.Node, msg, fix string) {
	line := b.d.lineOf(n)
	if line == 0 {
		line = b.d.lineOf(b.node)
	}
	p := b.path
	if key != "" {
		p = b.at(key)
	}
	b.d.Report(p, line, msg, fix)
}

// ReportConnection records a problem with a field of connection
// ("endpoint", "credentials.password"), found while decoding the block.
func (b *Block) ReportConnection(key, msg, fix string) {
	p := field.NewPath("connection")
	for _, part := range strings.Split(key, ".") {
		p = p.Child(part)
	}
	b.d.Report(p, 0, msg, fix)
}

// String returns the field's value as written, "" when it is absent or
// empty; a list or a mapping is reported.
func (b *Block) String(key string, n *yaml.Node) string {
	v, _ := b.d.scalar(b.at(key), n)
	return v
}

// Required is String for a field that must be set: absent or empty is
// reported with fix.
func (b *Block) Required(key string, n *yaml.Node, fix string) string {
	v, ok := b.d.scalar(b.at(key), n)
	switch {
	case !ok:
	case n.Kind == 0:
		b.Report(key, nil, "is missing", fix)
	case v == "":
		b.Report(key, n, "is empty", fix)
	}
	return v
}

// Int returns the field's whole number, def when it is absent; a value
// that is not one, or is out of [min, max], is reported with fix.
func (b *Block) Int(key string, n *yaml.Node, def, min, max int, fix string) int {
	v, set, ok := b.d.integer(b.at(key), n, fix)
	switch {
	case !ok:
		return def
	case !set:
		return def
	case v < min || v > max:
		b.Report(key, n, fmt.Sprintf("%d is out of range (%d to %d)", v, min, max), fix)
	}
	return v
}

// Bool returns the field's true or false, def when it is absent.
func (b *Block) Bool(key string, n *yaml.Node, def bool) bool {
	v := strictyaml.Deref(n)
	if v == nil || v.Kind == 0 || strictyaml.IsNull(v) {
		return def
	}
	var out bool
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" || v.Decode(&out) != nil {
		b.Report(key, n, "is "+describe(v)+", not true or false", "write true or false")
		return def
	}
	return out
}

// Duration returns the field's duration (Go's form: 90s, 5m, 1h30m), def
// when it is absent; a value that is not one, or not positive, is reported.
func (b *Block) Duration(key string, n *yaml.Node, def time.Duration) time.Duration {
	v, ok := b.d.scalar(b.at(key), n)
	if !ok || v == "" {
		return def
	}
	dur, err := time.ParseDuration(v)
	if err != nil || dur <= 0 {
		b.Report(key, n, quote(v)+" is not a positive duration", "write a duration such as 90s, 5m or 1h30m")
		return def
	}
	return dur
}

// Path returns the field's path made absolute from the VM file's
// directory, "" when it is absent.
func (b *Block) Path(key string, n *yaml.Node) string {
	return b.d.resolve(b.String(key, n))
}

// Secret reads a credential by reference at the field, {env: VAR} or
// {file: PATH}, and returns the secret, false when it is absent or wrong
// (reported). A value written inline is refused.
func (b *Block) Secret(key string, n *yaml.Node) (Secret, bool) {
	if n.Kind == 0 {
		return "", false
	}
	return b.d.secretRef(b.at(key), n)
}
