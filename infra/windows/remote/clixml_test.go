package remote

import "testing"

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

func TestLastLines(t *testing.T) {
	if got := lastLines("a\r\n\r\nb\nc  \n", 2); got != "b\nc" {
		t.Errorf("got %q", got)
	}
}
