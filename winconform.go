// Package winconform is the root of the winconform conformance harness.
//
// It embeds the module's own go.mod so that the CLI knows, wherever its
// binary runs, which kind it creates clusters with: a locally built node
// image carries that kind's base image files (infra/nodeimage).
package winconform

import _ "embed"

// GoMod is the content of the module's go.mod.
//
//go:embed go.mod
var GoMod []byte
