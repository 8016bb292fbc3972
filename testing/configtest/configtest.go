// Package configtest checks what config refused in a file.
package configtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/winconform/winconform/config"
)

// Refused checks that err is a *config.Error with a problem at field (its
// path from the top of the file) whose detail says says, with a fix, and
// that the error shows none of secrets.
func Refused(t testing.TB, err error, field, says string, secrets ...string) {
	t.Helper()
	var e *config.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want a *config.Error", err)
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("the error shows a secret (%q):\n%v", s, err)
		}
	}
	for _, fe := range e.List {
		if d := config.Detail(fe); fe.Field == field && strings.Contains(d, says) {
			if !strings.Contains(d, "; ") {
				t.Errorf("%s: %q has no fix", fe.Field, d)
			}
			return
		}
	}
	t.Errorf("no problem of %s saying %q in:\n%v", field, says, err)
}
