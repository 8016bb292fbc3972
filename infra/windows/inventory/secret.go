package inventory

import (
	"fmt"
	"io"
	"log/slog"
)

// redacted is what every printed or encoded form of a Secret shows.
const redacted = "********"

// Secret is a machine's password. It prints and encodes as "********" in
// every form the standard library offers — any fmt verb (%v, %+v, %#v, %s,
// %q, %x...), JSON, text (and so YAML and XML), and log/slog — whether it is
// printed alone or as a field of a Machine or an Inventory. Reveal returns
// the password itself, for the one place that sends it to the machine.
//
// A Secret prints "********" even when it is empty: the output tells nothing
// about the value, not even its length.
type Secret string

// Reveal returns the password.
func (s Secret) Reveal() string { return string(s) }

// String returns "********".
func (Secret) String() string { return redacted }

// GoString returns `inventory.Secret("********")`, for %#v.
func (Secret) GoString() string { return `inventory.Secret("` + redacted + `")` }

// Format writes "********" for every verb (and the GoString form for %#v),
// so that no verb falls through to the underlying string.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, s.GoString())
		return
	}
	_, _ = io.WriteString(f, redacted)
}

// MarshalJSON encodes the Secret as "********".
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText encodes the Secret as ********.
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue makes log/slog record "********".
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }
