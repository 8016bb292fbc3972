package inventory

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// This file reads what the inventory points at: password variables and
// files, and CA bundles. Messages name variables and paths, never contents.

// password reads a machine's password from its source. who is "" for a
// machine's own source, or says which machines take it from defaults.
func (d *decoder) password(p *field.Path, src opt[passwordFrom], who string) (Secret, bool) {
	if env := src.v.env; env != "" {
		v, ok := d.env(env)
		switch {
		case !ok:
			d.Report(p.Child("passwordFrom", "env"), src.line, fmt.Sprintf("the variable %s is not set%s", env, who),
				fmt.Sprintf("set %s to the password in the environment the harness runs in (export %s=...), or use passwordFrom.file", env, env))
			return "", false
		case v == "":
			d.Report(p.Child("passwordFrom", "env"), src.line, fmt.Sprintf("the variable %s is set but empty%s", env, who),
				fmt.Sprintf("set %s to the password", env))
			return "", false
		}
		return Secret(v), true
	}
	f := src.v.file
	data, ok := d.readFile(p.Child("passwordFrom", "file"), src.line, f, who,
		"create the file with the password on one line, or fix the path")
	if !ok {
		return "", false
	}
	password := strings.TrimRight(string(data), "\r\n")
	switch {
	case password == "":
		d.Report(p.Child("passwordFrom", "file"), src.line, fmt.Sprintf("%s is empty%s", describePath(f), who),
			"write the password in it (a trailing newline is fine)")
		return "", false
	case strings.ContainsAny(password, "\r\n"):
		d.Report(p.Child("passwordFrom", "file"), src.line, fmt.Sprintf("%s has more than one line%s", describePath(f), who),
			"keep only the password in the file, on one line")
		return "", false
	}
	return Secret(password), true
}

// caBundle reads a CA bundle: PEM certificates and nothing secret.
func (d *decoder) caBundle(p *field.Path, src opt[filePath], who string) ([]byte, bool) {
	at := p.Child("winrm", "caBundle")
	const fixPEM = "point caBundle at the CA's certificate in PEM form (-----BEGIN CERTIFICATE-----); convert a DER file with: openssl x509 -inform der -in ca.cer -out ca.pem"
	f := src.v
	data, ok := d.readFile(at, src.line, f, who, "put the CA certificate that issued the machine's WinRM certificate there, or fix the path")
	if !ok {
		return nil, false
	}
	certs, blocks := 0, 0
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		blocks++
		switch {
		case strings.Contains(b.Type, "PRIVATE KEY"):
			d.Report(at, src.line, fmt.Sprintf("%s holds a private key%s", describePath(f), who),
				"keep only the CA's certificates in the bundle, and the key out of it")
			return nil, false
		case b.Type == "CERTIFICATE":
			certs++
			if _, err := x509.ParseCertificate(b.Bytes); err != nil {
				d.Report(at, src.line, fmt.Sprintf("certificate #%d in %s does not parse: %v%s", certs, describePath(f), err, who), fixPEM)
				return nil, false
			}
		}
	}
	switch {
	case blocks == 0:
		d.Report(at, src.line, fmt.Sprintf("%s is not PEM%s", describePath(f), who), fixPEM)
		return nil, false
	case certs == 0:
		d.Report(at, src.line, fmt.Sprintf("%s holds no certificate%s", describePath(f), who), fixPEM)
		return nil, false
	}
	return data, true
}

// readFile reads a file the inventory points at, reporting a missing
// file, a directory or a read error.
func (d *decoder) readFile(p *field.Path, line int, f filePath, who, fix string) ([]byte, bool) {
	info, err := os.Stat(f.abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.Report(p, line, fmt.Sprintf("%s does not exist%s", describePath(f), who),
			fix+" (a relative path is from the inventory file's directory)")
		return nil, false
	case err == nil && info.IsDir():
		d.Report(p, line, fmt.Sprintf("%s is a directory%s", describePath(f), who), "point at a file")
		return nil, false
	}
	data, err := os.ReadFile(f.abs)
	if err != nil {
		d.Report(p, line, fmt.Sprintf("%s cannot be read%s: %v", describePath(f), who, err),
			"check the file's permissions")
		return nil, false
	}
	return data, true
}

// describePath names a path as written, and as resolved when that differs.
func describePath(f filePath) string {
	if f.raw == f.abs {
		return quote(f.raw)
	}
	return fmt.Sprintf("%s (%s)", quote(f.raw), f.abs)
}
