package remote

import (
	"fmt"
	"strings"
	"testing"
)

func TestDecodeCLIXML(t *testing.T) {
	tests := map[string]string{
		"plain text\r\n": "plain text\r\n",
		"#< CLIXML\r\n<Objs Version=\"1.1.0.1\" xmlns=\"http://schemas.microsoft.com/powershell/2004/04\">" +
			"<Obj S=\"progress\" RefId=\"0\"><TN RefId=\"0\"><T>System.Management.Automation.PSCustomObject</T></TN><MS><I64 N=\"SourceId\">1</I64><PR N=\"Record\"><AV>Preparing modules</AV></PR></MS></Obj>" +
			"<S S=\"Error\">Get-Item : Cannot find path 'C:\\nope'_x000D__x000A_</S>" +
			"<S S=\"Error\">    + CategoryInfo : ObjectNotFound_x000D__x000A_</S></Objs>": "Get-Item : Cannot find path 'C:\\nope'\r\n    + CategoryInfo : ObjectNotFound\r\n",
		"before\r\n#< CLIXML\r\n<Objs><S S=\"Error\">smile _xD83D__xDE00_</S></Objs>after": "before\r\nsmile \U0001F600after",
		"#< CLIXML\r\n<Objs><S S=\"Error\">cut short":                                      "cut short",
	}
	for in, want := range tests {
		if got := decodeCLIXML(in); got != want {
			t.Errorf("decodeCLIXML(%q) = %q, want %q", in, got, want)
		}
	}
}

// An *ExitError keeps the last stderrTailLines lines of stderr that are not
// blank, without their trailing white space, CRLF read as LF.
func TestExitErrorKeepsTheLastLinesOfStderr(t *testing.T) {
	var stderr strings.Builder
	for i := 1; i <= stderrTailLines+2; i++ {
		fmt.Fprintf(&stderr, "line %d  \r\n\r\n \t\n", i)
	}
	var want []string
	for i := 3; i <= stderrTailLines+2; i++ {
		want = append(want, fmt.Sprintf("line %d", i))
	}
	err := Result{Machine: "m", Step: "s", ExitCode: 1, Stderr: stderr.String()}.Err()
	if ee, ok := err.(*ExitError); !ok || ee.StderrTail != strings.Join(want, "\n") {
		t.Errorf("Err() = %#v, want the tail %q", err, strings.Join(want, "\n"))
	}
}
