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

// A Set of its own masks every value it is given, however short (a WinRM
// password of three letters), in its one text, and the process's secrets
// there too; values added while in use (a bootstrap token made during a
// join) are masked from then on; the process's set ignores values too
// short to mask everywhere.
func TestASetMasksItsOwnAndTheProcesss(t *testing.T) {
	Add("process-wide-secret", "pw")
	s := New("abc")
	got := s.String("abc logged in with process-wide-secret; pw is a word")
	if got != Mask+" logged in with "+Mask+"; pw is a word" {
		t.Errorf("%q", got)
	}
	s.Add("tok123.0123456789abcdef")
	if got := s.String("kubeadm join --token tok123.0123456789abcdef"); strings.Contains(got, "tok123") {
		t.Errorf("a secret added in use: %q", got)
	}
	yaml := NewMasking("<redacted>", "value-of-a-Secret")
	if got := yaml.String("value: value-of-a-Secret\nother: process-wide-secret\n"); got != "value: <redacted>\nother: <redacted>\n" {
		t.Errorf("a Set of another mask: %q", got)
	}
	if got := String("abc stays"); got != "abc stays" {
		t.Errorf("a Set's secret leaked into the process's: %q", got)
	}
}

func TestAddWhileInUse(t *testing.T) {
	s := New()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			s.Add(fmt.Sprintf("secret-%03d", i))
		}
	}()
	for range 100 {
		_ = s.String("secret-050")
	}
	<-done
	if got := s.String("secret-050"); got != Mask {
		t.Errorf("%q", got)
	}
}
