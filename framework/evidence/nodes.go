package evidence

import (
	"strings"

	"github.com/winconform/winconform/framework/claims"
)

// On is a node or machine a result was obtained on: its name and, for a
// Windows one, its build (the node's node.kubernetes.io/windows-build
// label, or the build the machine reported). Machine marks a machine of
// the inventory (not a node name); Note is said after the name in the
// record's detail (a machine's caption).
type On struct {
	Name    string
	Build   string
	Machine bool
	Note    string
}

// Records are the records of a result obtained at level on nodes, detail
// saying what they are ("real windows node(s)"), their names after it. For
// a level on Windows there is one record per build, naming the nodes of
// that build; nodes whose build is missing or is none (not 10.0.NNNNN)
// share a record without a build, which reports count as unrecorded. For
// another level there is one record, without a build. partial, when set,
// makes every record partial: it names what the spec could not see.
func Records(level claims.Level, detail, partial string, nodes []On) []Record {
	record := func(build string, ons []On) Record {
		r := Record{Level: level, Detail: detail, Partial: partial, Build: build}
		var names []string
		for _, n := range ons {
			name := n.Name
			if n.Note != "" {
				name += " (" + n.Note + ")"
			}
			names = append(names, name)
			if n.Machine {
				r.Machines = append(r.Machines, n.Name)
			} else {
				r.Nodes = append(r.Nodes, n.Name)
			}
		}
		if len(names) > 0 {
			r.Detail += " " + strings.Join(names, ", ")
		}
		return r
	}
	if !level.OnWindows() || len(nodes) == 0 {
		return []Record{record("", nodes)}
	}
	var builds []string
	byBuild := map[string][]On{}
	for _, n := range nodes {
		b := n.Build
		if !buildPattern.MatchString(b) {
			b = ""
		}
		if _, seen := byBuild[b]; !seen {
			builds = append(builds, b)
		}
		byBuild[b] = append(byBuild[b], n)
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
