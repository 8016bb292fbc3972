package simmachine

import (
	"fmt"
	"sort"
	"strings"
)

// Windows PowerShell 5.1, the PowerShell the WinRM shell runs, cannot
// remove a directory tree that holds a directory symbolic link:
// Remove-Item -Recurse -Force stops at the link with "There is a mismatch
// between the tag specified in the request and the tag present in the
// reparse point" (PowerShell/PowerShell#621; PowerShell 6 changed it, PR
// #3637, but Windows still runs 5.1), and the script stops there. .NET's
// Directory.Delete removes such a link as a link (RemoveDirectory removes
// a link whatever its target holds). So a case that removes a tree holding
// a link says that the step removes the link first: its sets remove the
// link: fact too.

// linkInTheWay returns the error Windows PowerShell 5.1 stops with when
// sets remove a directory that holds a link they do not remove, or "".
// m.mu must be held.
func (m *Machine) linkInTheWay(sets map[string]string) string {
	norm := map[string]string{}
	for k, v := range sets {
		norm[normKey(k)] = v
	}
	var dirs []string
	for k, v := range norm {
		if dir, ok := strings.CutPrefix(k, "dir:"); ok && v == "" {
			dirs = append(dirs, dir)
		}
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		for k := range m.facts {
			link, ok := strings.CutPrefix(k, "link:")
			if !ok || (link != dir && !strings.HasPrefix(link, dir+`\`)) {
				continue
			}
			if v, set := norm[k]; set && v == "" {
				continue
			}
			return fmt.Sprintf("Remove-Item : There is a mismatch between the tag specified in the request and the tag present in the reparse point (removing %s, which holds the directory link %s)", dir, link)
		}
	}
	return ""
}
