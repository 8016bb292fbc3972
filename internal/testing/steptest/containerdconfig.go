package steptest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A containerd-config fact is containerd's config.toml as far as the join
// reads or writes it: the file's version, then each key of ContainerdKeys
// the file has, written TABLE.KEY=VALUE with VALUE as the file has it (a
// TOML string or array), in that order, separated by spaces:
//
//	version=2 grpc.v1.cri.sandbox_image='registry.k8s.io/pause:3.10.1' grpc.v1.cri.cni.bin_dir='C:\opt\cni\bin' grpc.v1.cri.cni.conf_dir='C:\etc\cni\net.d'
//
// A table is named by its plugin's ID without io.containerd. (the TOML
// table [plugins."io.containerd.grpc.v1.cri".cni] is grpc.v1.cri.cni).
// Keys of other tables, and other keys, are not part of the fact. The
// Pester fakes write a file from the fact and read one into it
// (StepTest.ps1); what each containerd version makes of the file, the
// simulated machine models (simmachine, containerd.go).
type ContainerdConfig struct {
	// Version is the file's version = (0 when it has none).
	Version int
	// Keys are the keys of ContainerdKeys the file has, by TABLE.KEY, with
	// their TOML values as written.
	Keys map[string]string
}

// ContainerdKeys are the keys a containerd-config fact holds, in its
// order: containerd 1.7's (config version 2), where the CRI plugin,
// io.containerd.grpc.v1.cri, holds the sandbox image and the CNI
// directories; containerd 2's (config versions 3 and 4), where the CRI
// image service (io.containerd.cri.v1.images) pins the sandbox image and
// the CRI runtime (io.containerd.cri.v1.runtime) holds the CNI
// directories; and the directory of containerd 2's image verifier, which
// runs every program it holds on each image pull.
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

var containerdKeyAt = regexp.MustCompile(`(?:^| )(version|` + strings.Join(quoteAll(ContainerdKeys), "|") + `)=`)

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, k := range s {
		out[i] = regexp.QuoteMeta(k)
	}
	return out
}

// ParseContainerdConfig reads a containerd-config fact.
func ParseContainerdConfig(v string) (ContainerdConfig, error) {
	c := ContainerdConfig{Keys: map[string]string{}}
	at := containerdKeyAt.FindAllStringSubmatchIndex(v, -1)
	if len(at) == 0 || at[0][0] != 0 {
		return c, fmt.Errorf("containerd-config %q: want version=N, then TABLE.KEY=VALUE of %s", v, strings.Join(ContainerdKeys, ", "))
	}
	for i, m := range at {
		key := v[m[2]:m[3]]
		end := len(v)
		if i+1 < len(at) {
			end = at[i+1][0]
		}
		value := v[m[1]:end]
		if key == "version" {
			n, err := strconv.Atoi(value)
			if err != nil || i != 0 {
				return c, fmt.Errorf("containerd-config %q: version=%s is no number, or not first", v, value)
			}
			c.Version = n
			continue
		}
		if _, dup := c.Keys[key]; dup {
			return c, fmt.Errorf("containerd-config %q: %s twice", v, key)
		}
		if _, err := TOMLStrings(value); err != nil {
			return c, fmt.Errorf("containerd-config %q: %s: %v", v, key, err)
		}
		c.Keys[key] = value
	}
	return c, nil
}

// String writes the fact in its order.
func (c ContainerdConfig) String() string {
	parts := []string{"version=" + strconv.Itoa(c.Version)}
	for _, k := range ContainerdKeys {
		if v, ok := c.Keys[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// Str returns the string value of key, and whether the file has it.
func (c ContainerdConfig) Str(key string) (string, bool) {
	v, ok := c.Keys[key]
	if !ok {
		return "", false
	}
	s, err := TOMLStrings(v)
	if err != nil || len(s) != 1 || strings.HasPrefix(v, "[") {
		return "", false
	}
	return s[0], true
}

// List returns the array value of key, and whether the file has it.
func (c ContainerdConfig) List(key string) ([]string, bool) {
	v, ok := c.Keys[key]
	if !ok || !strings.HasPrefix(v, "[") {
		return nil, false
	}
	s, err := TOMLStrings(v)
	return s, err == nil
}

// TOMLStrings reads a TOML string (a literal 'string' or a basic "string"
// with its escapes) or an array of them: the strings it holds.
func TOMLStrings(v string) ([]string, error) {
	if inner, ok := strings.CutPrefix(v, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if !ok {
			return nil, fmt.Errorf("%s: an array without its ]", v)
		}
		out := []string{}
		for rest := strings.TrimSpace(inner); rest != ""; {
			s, n, err := tomlString(rest)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", v, err)
			}
			out = append(out, s)
			rest = strings.TrimSpace(rest[n:])
			rest, ok = strings.CutPrefix(rest, ",")
			if !ok && rest != "" {
				return nil, fmt.Errorf("%s: no comma between the array's strings", v)
			}
			rest = strings.TrimSpace(rest)
		}
		return out, nil
	}
	s, n, err := tomlString(v)
	if err == nil && n != len(v) {
		err = fmt.Errorf("%s: more after the string", v)
	}
	return []string{s}, err
}

// tomlString reads the string v starts with: its value and its length.
func tomlString(v string) (string, int, error) {
	switch {
	case strings.HasPrefix(v, "'"):
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", 0, fmt.Errorf("%s: a literal string without its closing '", v)
		}
		return v[1 : 1+end], end + 2, nil
	case strings.HasPrefix(v, `"`):
		for i := 1; i < len(v); i++ {
			switch v[i] {
			case '\\':
				i++
			case '"':
				s, err := strconv.Unquote(v[:i+1])
				return s, i + 1, err
			}
		}
		return "", 0, fmt.Errorf("%s: a basic string without its closing \"", v)
	}
	return "", 0, fmt.Errorf("%s: no TOML string", v)
}
