package text

import "testing"

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "",
		"one":                     "one",
		"  one\ntwo\n":            "one",
		"error: x\r\nmore\r\n":    "error: x",
		"\n\nafter blank lines\n": "after blank lines",
	} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
