package upstream

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// windowsOnlyFlags takes out of args the flags that only the Windows build
// of a component defines (function of file, in the Windows source), and
// says which it took. Off Windows, a flag neither build defines stays in
// args, for the Linux build's flag set to refuse.
func windowsOnlyFlags(args []string, file, function string) (rest []string, fromSource []string, err error) {
	if runtime.GOOS == "windows" {
		return args, nil, nil
	}
	src, err := ReadSource(kubernetesModule, file)
	if err != nil {
		return nil, nil, err
	}
	names, err := src.FlagNames(function)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "--") && slices.Contains(names, name) {
			fromSource = append(fromSource, fmt.Sprintf("%s is a flag of the Windows build (%s, %s)", a, src, function))
			continue
		}
		rest = append(rest, a)
	}
	return rest, fromSource, nil
}
