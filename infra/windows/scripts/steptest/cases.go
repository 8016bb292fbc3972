// Package steptest holds the step scripts' cases, <step>.json for each
// script of infra/windows/scripts: the Pester tests beside them run each
// case against the real script, and the simulated machine answers from them
// (testing/steptest reads them; see its documentation for their
// form).
package steptest

import "embed"

// Files are the <step>.json files.
//
//go:embed *.json
var Files embed.FS
