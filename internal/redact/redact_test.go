package redact

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestWriterRedactsAddedSecrets(t *testing.T) {
	const a, b = "hunter2-long", "hunter2-long-and-longer"
	Add(a, b, "abc")
	var buf bytes.Buffer
	fmt.Fprintf(Writer(&buf), "login failed with %s then %s; abc stays\n", b, a)
	got := buf.String()
	if strings.Contains(got, "hunter2") || strings.Count(got, Mask) != 2 || !strings.Contains(got, "abc stays") {
		t.Errorf("%q", got)
	}
}
