package config

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"reflect"
	"regexp"
	"strings"

	"github.com/winconform/winconform/internal/redact"
	"github.com/winconform/winconform/internal/userfile"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// redacted is what every printed or encoded form of a Secret shows.
const redacted = redact.Mask

// Secret is a secret's value (a password, a client secret). It prints and
// encodes as "********" in every form the standard library offers: any
// fmt verb, JSON, text (and so YAML), log/slog; Reveal returns it, for the
// one place that sends it.
type Secret string

// Reveal returns the secret.
func (s Secret) Reveal() string { return string(s) }

// String returns "********".
func (Secret) String() string { return redacted }

// GoString returns `config.Secret("********")`, for %#v.
func (Secret) GoString() string { return `config.Secret("` + redacted + `")` }

// Format writes "********" for every verb (the GoString form for %#v).
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, s.GoString())
		return
	}
	_, _ = io.WriteString(f, redacted)
}

// MarshalText encodes the Secret (as JSON, YAML, text) as ********.
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue makes log/slog record "********".
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// SecretRef is a secret by reference, the only way a file holds one:
// exactly one of {env: VARIABLE} (a variable set where the harness runs)
// and {file: PATH} (a file that holds only the secret, relative to the
// file that names it). Loading reads it into Secret; a secret written
// inline is refused.
type SecretRef struct {
	Env string `yaml:"env,omitempty" json:"env,omitempty"`
	// File is absolute once loaded.
	File string `yaml:"file,omitempty" json:"file,omitempty"`
	// Secret is what Env or File holds.
	Secret Secret `yaml:"-" json:"-"`
}

// String describes where the secret comes from: "env WIN_A_PASSWORD" or "file /path".
func (r SecretRef) String() string {
	if r.File != "" {
		return "file " + r.File
	}
	return "env " + r.Env
}

type secretRef SecretRef // SecretRef's fields, without its decoding

func (r *SecretRef) decodeYAML(l *loader, p *field.Path, n *yaml.Node) {
	if n.Kind == yaml.ScalarNode {
		l.inlineSecret(p, n.Line)
		return
	}
	before := len(l.problems)
	l.value(p, n, reflect.ValueOf((*secretRef)(r)).Elem(), p.String())
	if len(l.problems) > before {
		return
	}
	const fix = "write {env: VARIABLE} (a variable that holds the secret) or {file: PATH} (a file that holds only the secret)"
	switch {
	case r.Env != "" && r.File != "":
		l.add(p, n.Line, "sets both env and file", "keep one of them")
	case r.Env == "" && r.File == "":
		l.add(p, n.Line, "sets neither env nor file", fix)
	case r.Env != "":
		v, set := l.env(r.Env)
		at := p.Child("env")
		switch {
		case strings.HasPrefix(r.Env, "$"):
			l.add(at, 0, Quote(r.Env)+" starts with '$'", "write the variable's name alone: env: "+strings.Trim(r.Env, "${}"))
		case len(validation.IsEnvVarName(r.Env)) > 0:
			l.add(at, 0, Quote(r.Env)+" is not a variable's name", "use letters, digits and '_', such as WIN_A_PASSWORD")
		case !set:
			l.add(at, 0, "the variable "+r.Env+" is not set",
				fmt.Sprintf("set %s in the environment the harness runs in (export %s=...), or use file: PATH", r.Env, r.Env))
		case v == "":
			l.add(at, 0, "the variable "+r.Env+" is set but empty", "set "+r.Env+" to the secret")
		default:
			r.Secret = Secret(v)
			redact.Add(v)
		}
	default:
		at, raw := p.Child("file"), r.File
		r.File = l.resolve(raw)
		data, ok := l.readFile(at, raw, userfile.Secret, "create it with the secret on one line, or fix the path")
		v := strings.TrimRight(string(data), "\r\n")
		switch {
		case !ok:
		case v == "":
			l.add(at, 0, l.describePath(raw)+" is empty", "write the secret in it (a final newline is fine)")
		case strings.ContainsAny(v, "\r\n"):
			l.add(at, 0, l.describePath(raw)+" has more than one line", "keep only the secret in the file, on one line")
		default:
			r.Secret = Secret(v)
			redact.Add(v)
		}
	}
}

// PEMFile is a file of PEM certificates (a CA bundle), written as its path
// (relative to the file that names it); loading reads and checks it.
type PEMFile struct {
	// Path is absolute, "" for none.
	Path string
	// PEM is the file's content.
	PEM []byte
}

// MarshalText writes the file as its path.
func (f PEMFile) MarshalText() ([]byte, error) { return []byte(f.Path), nil }

func (f *PEMFile) decodeYAML(l *loader, p *field.Path, n *yaml.Node) {
	var raw string
	if l.scalar(p, n, reflect.ValueOf(&raw).Elem()); raw == "" {
		return
	}
	f.Path = l.resolve(raw)
	data, ok := l.readFile(p, raw, userfile.CA, "put the CA's certificate there (PEM), or fix the path")
	if !ok {
		return
	}
	const fixPEM = "point it at the CA's certificate in PEM form (-----BEGIN CERTIFICATE-----); convert a DER file with: openssl x509 -inform der -in ca.cer -out ca.pem"
	certs := 0
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		switch {
		case strings.Contains(b.Type, "PRIVATE KEY"):
			l.add(p, 0, l.describePath(raw)+" holds a private key", "keep only the CA's certificates in the file, and the key out of it")
			return
		case b.Type == "CERTIFICATE":
			certs++
			if _, err := x509.ParseCertificate(b.Bytes); err != nil {
				l.add(p, 0, fmt.Sprintf("certificate #%d in %s does not parse: %v", certs, l.describePath(raw), err), fixPEM)
				return
			}
		}
	}
	if certs == 0 {
		l.add(p, 0, l.describePath(raw)+" holds no PEM certificate", fixPEM)
		return
	}
	f.PEM = data
}

// readFile reads a file of kind k the file names (raw, as written) at p,
// through the one door for users' files (internal/userfile): a file that
// is missing, not a regular file (a device would never end), larger than
// its kind is, unreadable, or (a secret's) open to others is reported. fix
// is what to do when it does not exist.
func (l *loader) readFile(p *field.Path, raw string, k userfile.Kind, fix string) ([]byte, bool) {
	data, err := userfile.Read(p.String(), l.resolve(raw), k)
	var ue *userfile.Error
	switch {
	case err == nil:
		return data, true
	case !errors.As(err, &ue):
		l.add(p, 0, fmt.Sprintf("%s cannot be read: %v", l.describePath(raw), err), "check the file")
	case errors.Is(err, fs.ErrNotExist):
		l.add(p, 0, l.describePath(raw)+" does not exist", fix+" (a relative path is from the file's directory)")
	default:
		l.add(p, 0, l.describePath(raw)+" "+ue.Problem, ue.Fix)
	}
	return nil, false
}

// describePath names a path as written, and as resolved when that differs.
func (l *loader) describePath(raw string) string {
	if abs := l.resolve(raw); abs != raw {
		return fmt.Sprintf("%s (%s)", Quote(raw), abs)
	}
	return Quote(raw)
}

// isSecretKey reports whether a key names a secret that would be written
// inline (password, clientSecret, token), not a reference to one
// (passwordFrom, tokenFile).
func isSecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, ref := range []string{"from", "ref", "file", "env"} {
		if strings.HasSuffix(k, ref) {
			return false
		}
	}
	for _, s := range []string{"password", "passwd", "secret", "token", "apikey", "accesskey"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// inlineSecret reports a secret written inline; the message never holds it.
func (l *loader) inlineSecret(p *field.Path, line int) {
	l.add(p, line, "an inline secret is refused: files hold references to secrets, never secrets",
		"remove it and reference it: {env: VARIABLE} (a variable set where the harness runs) or {file: PATH} (a file that holds only the secret), as a machine's passwordFrom or a provider's connection.credentials")
}

// userinfoRe finds user:password@ at the start of a value with no scheme
// (user:pw@host), where url.Parse sees no user information.
var userinfoRe = regexp.MustCompile(`^[^/@\s:]+:[^/@\s]+@\S`)

// credentialInURL reports whether s is a URL that holds a credential: a
// password in its user information, or a query parameter named as a secret
// (password=, token=). The value is never quoted in the message.
func credentialInURL(s string) bool {
	if userinfoRe.MatchString(s) {
		return true
	}
	if !strings.Contains(s, "://") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil {
		// Not a URL Go parses: look for user:password@ after the scheme.
		_, rest, _ := strings.Cut(s, "://")
		return userinfoRe.MatchString(rest)
	}
	if _, set := u.User.Password(); u.User != nil && set {
		return true
	}
	for k := range u.Query() {
		if isSecretKey(k) {
			return true
		}
	}
	return false
}
