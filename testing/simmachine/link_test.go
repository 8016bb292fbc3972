package simmachine

import (
	"strings"
	"testing"
)

// Windows PowerShell 5.1 cannot remove a tree that holds a directory link
// unless the link goes first.
func TestRemovingATreeWithALinkNeedsTheLinkRemovedFirst(t *testing.T) {
	m := New(Config{})
	m.SetFact(`link:C:\var\lib\kubelet\etc\kubernetes\pki`, `C:\etc\kubernetes\pki`)
	m.SetFact(`file:C:\var\lib\kubelet\config.yaml`, "x")
	m.mu.Lock()
	defer m.mu.Unlock()
	if msg := m.linkInTheWay(map[string]string{`dir:C:\var\lib\kubelet`: ""}); !strings.Contains(msg, "mismatch between the tag") {
		t.Errorf("removing the tree with its link: %q", msg)
	}
	if msg := m.linkInTheWay(map[string]string{`dir:C:\var\lib\kubelet`: "", `link:C:\var\lib\kubelet\etc\kubernetes\pki`: ""}); msg != "" {
		t.Errorf("removing the link, then the tree: %q", msg)
	}
	if msg := m.linkInTheWay(map[string]string{`dir:C:\var\lib\cni`: ""}); msg != "" {
		t.Errorf("removing another tree: %q", msg)
	}
}
