package vms

import (
	"go.yaml.in/yaml/v3"

	"github.com/winconform/winconform/infra/windows/inventory"
)

// Placed is a machine that has an address: what the inventory lists.
type Placed struct {
	// Name is the machine's name, its node name.
	Name string
	// Address is the address the lifecycle settled on.
	Address string
}

// Inventory returns the inventory file (YAML) of machines: the VM file's
// machine block as its defaults, and each machine's name and address. join,
// reset and the suites read it as any inventory. It is only for files of
// providers that make machines (not Existing ones).
func (f *File) Inventory(machines []Placed) ([]byte, error) {
	return inventoryYAML(f.machine, machines)
}

// ParseInventory decodes an inventory Inventory wrote (path names it), with
// the environment the VM file was loaded in (for passwordFrom.env).
func (f *File) ParseInventory(path string, data []byte) (*inventory.Inventory, error) {
	return inventory.Parse(path, data, f.env)
}

func inventoryYAML(defaults *yaml.Node, machines []Placed) ([]byte, error) {
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	list := &yaml.Node{Kind: yaml.SequenceNode}
	for _, m := range machines {
		list.Content = append(list.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			str("name"), str(m.Name), str("address"), str(m.Address),
		}})
	}
	top := &yaml.Node{Kind: yaml.MappingNode}
	if defaults != nil {
		top.Content = append(top.Content, str("defaults"), clean(copyNode(defaults)))
	}
	top.Content = append(top.Content, str("machines"), list)
	return yaml.Marshal(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{top}})
}

// clean drops the positions, comments and anchors of a copied tree, so
// that it encodes as plain YAML of its own.
func clean(n *yaml.Node) *yaml.Node {
	n.Line, n.Column = 0, 0
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	n.Anchor = ""
	n.Style &^= yaml.FlowStyle
	for _, c := range n.Content {
		clean(c)
	}
	return n
}
