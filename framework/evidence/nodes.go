package evidence

import (
	"strings"

	"github.com/winconform/winconform/framework/claims"
)

// On is a node or machine a result was obtained on: its name and, for a
// Windows one, its build (the node's node.kubernetes.io/windows-build
// label, or the build the machine reported).
type On struct {
	Name  string
	Build string
}

// Records are the records of a result obtained at level on nodes, detail
// saying what they are ("real windows node(s)"), their names after it. For
// a level on Windows there is one record per build, naming the nodes of
// that build; nodes whose build is missing or is none (not 10.0.NNNNN)
// share a record without a build, which reports count as unrecorded. For
// another level there is one record, without a build. partial, when set,
// makes every record partial: it names what the spec could not see.
func Records(level claims.Level, detail, partial string, nodes []On) []Record {
	record := func(build string, names []string) Record {
		d := detail
		if len(names) > 0 {
			d += " " + strings.Join(names, ", ")
		}
		return Record{Level: level, Detail: d, Partial: partial, Build: build}
	}
	var all []string
	for _, n := range nodes {
		all = append(all, n.Name)
	}
	if !level.OnWindows() || len(nodes) == 0 {
		return []Record{record("", all)}
	}
	var builds []string
	byBuild := map[string][]string{}
	for _, n := range nodes {
		b := n.Build
		if !buildPattern.MatchString(b) {
			b = ""
		}
		if _, seen := byBuild[b]; !seen {
			builds = append(builds, b)
		}
		byBuild[b] = append(byBuild[b], n.Name)
	}
	out := make([]Record, 0, len(builds))
	for _, b := range builds {
		out = append(out, record(b, byBuild[b]))
	}
	return out
}

// AddRecords records rs for the current spec.
func AddRecords(rs ...Record) {
	for _, r := range rs {
		add(r)
	}
}

// AddOn records that the current spec's result comes from level, obtained
// on nodes (Records: one record per Windows build).
func AddOn(level claims.Level, detail string, nodes ...On) {
	AddRecords(Records(level, detail, "", nodes)...)
}

// PartialOn records that the current spec saw, at level on nodes, only
// part of what its claim needs: why names what is missing.
func PartialOn(level claims.Level, detail, why string, nodes ...On) {
	AddRecords(Records(level, detail, why, nodes)...)
}
