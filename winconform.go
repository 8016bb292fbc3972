// Package winconform is the root of the winconform conformance harness.
//
// It embeds the module's own go.mod and go.sum so that the CLI can compile the
// Kubernetes binaries of a locally built kind node image from exactly the
// dependency graph the harness itself was built against, wherever the binary runs.
package winconform

import _ "embed"

// GoMod is the content of the module's go.mod.
//
//go:embed go.mod
var GoMod []byte

// GoSum is the content of the module's go.sum.
//
//go:embed go.sum
var GoSum []byte
