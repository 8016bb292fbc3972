package hyperv

import (
	"sort"
	"strings"
)

// A Hyper-V VM keeps its tags in its Notes (Set-VM -Notes, free text the
// user may edit in Hyper-V Manager), one name=value line each, the names
// vms.TagRun, vms.TagCreated and vms.TagKeep. Lines that are not tags are
// left alone: a user's own notes do not hide the tags, nor the tags theirs.

// formatNotes writes tags as name=value lines, sorted, CRLF-separated as
// Windows' text boxes (Hyper-V Manager's Notes) show lines.
func formatNotes(tags map[string]string) string {
	names := make([]string, 0, len(tags))
	for n := range tags {
		names = append(names, n)
	}
	sort.Strings(names)
	lines := make([]string, len(names))
	for i, n := range names {
		lines[i] = n + "=" + tags[n]
	}
	return strings.Join(lines, "\r\n")
}

// parseNotes reads the name=value lines of notes (CRLF or LF line ends;
// spaces around the name and the value ignored). The first line of a name
// counts.
func parseNotes(notes string) map[string]string {
	tags := map[string]string{}
	for _, line := range strings.Split(strings.ReplaceAll(notes, "\r\n", "\n"), "\n") {
		name, value, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			continue
		}
		if _, seen := tags[name]; !seen {
			tags[name] = strings.TrimSpace(value)
		}
	}
	return tags
}
