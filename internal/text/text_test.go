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

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 3, ""},
		{"one", 3, "one"},
		{"a\nb\nc\nd\n", 2, "c\nd"},
		{"a\r\n\r\n  \r\nb  \r\nc\t\r\n\n", 2, "b\nc"},
		{"a\nb", 5, "a\nb"},
		{"  indented\nlast", 1, "last"},
		{"  indented\nlast", 2, "  indented\nlast"},
		{"a\nb", 0, ""},
		{"a\nb", -1, ""},
	} {
		if got := LastLines(tc.in, tc.n); got != tc.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"":               "machine",
		".":              "_",
		"..":             "__",
		"...":            "...",
		"win-2022-a":     "win-2022-a",
		"Win_A.lab":      "Win_A.lab",
		"../etc/passwd":  ".._etc_passwd",
		`C:\x y`:         "C__x_y",
		"wïn":            "w_n",
		"a/b:c*d?e\"f<g": "a_b_c_d_e_f_g",
	} {
		if got := FileName(in); got != want {
			t.Errorf("FileName(%q) = %q, want %q", in, got, want)
		}
	}
}
