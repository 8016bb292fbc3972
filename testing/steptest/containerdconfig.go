package steptest

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// ContainerdConfig is containerd's config.toml (a file: fact's content) as
// far as the join reads or writes it: the file's version, and each key of
// ContainerdKeys the file has, by TABLE.KEY, the table named by its
// plugin's ID without io.containerd. (the TOML table
// [plugins."io.containerd.grpc.v1.cri".cni] is grpc.v1.cri.cni). Keys of
// other tables, and other keys, are not part of it. What each containerd
// version makes of the file, the simulated machine models (simmachine,
// containerd.go), held to containerd's own binaries.
type ContainerdConfig struct {
	// Version is the file's version = (0 when it has none).
	Version int
	// Keys are the keys of ContainerdKeys the file has, by TABLE.KEY: a
	// string, or a list of strings.
	Keys map[string]any
}

// ContainerdKeys are the keys a ContainerdConfig holds: containerd 1.7's
// (config version 2), where the CRI plugin, io.containerd.grpc.v1.cri,
// holds the sandbox image and the CNI directories; containerd 2's (config
// versions 3 and 4), where the CRI image service (io.containerd.cri.v1.images)
// pins the sandbox image and the CRI runtime (io.containerd.cri.v1.runtime)
// holds the CNI directories; and the directory of containerd 2's image
// verifier, which runs every program it holds on each image pull.
var ContainerdKeys = []string{
	"grpc.v1.cri.sandbox_image",
	"grpc.v1.cri.cni.bin_dir",
	"grpc.v1.cri.cni.conf_dir",
	"cri.v1.images.pinned_images.sandbox",
	"cri.v1.runtime.cni.bin_dir",
	"cri.v1.runtime.cni.bin_dirs",
	"cri.v1.runtime.cni.conf_dir",
	"image-verifier.v1.bindir.bin_dir",
}

// ParseContainerdConfig reads a config.toml.
func ParseContainerdConfig(text string) (ContainerdConfig, error) {
	c := ContainerdConfig{Keys: map[string]any{}}
	var doc map[string]any
	if _, err := toml.Decode(text, &doc); err != nil {
		return c, fmt.Errorf("config.toml: %w", err)
	}
	if v, ok := doc["version"]; ok {
		n, ok := v.(int64)
		if !ok {
			return c, fmt.Errorf("config.toml: version = %v is no number", v)
		}
		c.Version = int(n)
	}
	plugins, _ := doc["plugins"].(map[string]any)
	for id, cfg := range plugins {
		name, ok := strings.CutPrefix(id, "io.containerd.")
		if !ok {
			continue
		}
		flatten(name, cfg, c.Keys)
	}
	for k := range c.Keys {
		if !containsKey(k) {
			delete(c.Keys, k)
		}
	}
	return c, nil
}

func containsKey(k string) bool {
	for _, want := range ContainerdKeys {
		if k == want {
			return true
		}
	}
	return false
}

func flatten(prefix string, v any, out map[string]any) {
	m, ok := v.(map[string]any)
	if !ok {
		if list, ok := v.([]any); ok {
			var s []string
			for _, x := range list {
				if str, ok := x.(string); ok {
					s = append(s, str)
				}
			}
			out[prefix] = s
			return
		}
		out[prefix] = v
		return
	}
	for k, sub := range m {
		flatten(prefix+"."+k, sub, out)
	}
}

// Str returns the string value of key, and whether the file has it.
func (c ContainerdConfig) Str(key string) (string, bool) {
	s, ok := c.Keys[key].(string)
	return s, ok
}

// List returns the array value of key, and whether the file has it.
func (c ContainerdConfig) List(key string) ([]string, bool) {
	s, ok := c.Keys[key].([]string)
	return s, ok
}
