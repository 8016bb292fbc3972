// Package framing is the encrypted message of MS-WSMV 2.2.9.1.1 (Negotiate
// Encrypted Message), in which a WinRM listener that refuses unencrypted
// messages over HTTP (AllowUnencrypted=false, Windows' default) wants every
// SOAP message, and answers. It is written once, for the harness's WinRM
// client (infra/windows/remote) and for the WS-Management stand-in that
// plays Windows in its tests:
//
//	Content-Type: multipart/encrypted;protocol="application/HTTP-SPNEGO-session-encrypted";boundary="Encrypted Boundary"
//
//	--Encrypted Boundary\r\n
//	\tContent-Type: application/HTTP-SPNEGO-session-encrypted\r\n
//	\tOriginalContent: type=application/soap+xml;charset=UTF-8;Length=<n>\r\n
//	--Encrypted Boundary\r\n
//	\tContent-Type: application/octet-stream\r\n
//	<signature length, uint32 LE><NTLM signature><sealed message, n bytes>--Encrypted Boundary--\r\n
//
// The header lines start with a tab (2.2.9.1.1.2.1 and 2.2.9.1.1.2.2; so
// pywinrm's encryption.py writes them, and reads Windows' answers). The
// second part is binary, delimited by OriginalContent's Length (RC4 keeps
// lengths), never by searching it for the boundary. The signature is an
// NTLM message signature, 16 bytes (MS-NLMP 2.2.2.9.1,
// NTLMSSP_MESSAGE_SIGNATURE: Version, Checksum, SeqNum): a message that
// claims another length is refused here, before an NTLM library slices it.
package framing

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"mime"
	"strconv"
	"strings"
)

// The message's constants.
const (
	Protocol = "application/HTTP-SPNEGO-session-encrypted"
	Boundary = "Encrypted Boundary"
	// ContentType is the HTTP Content-Type of an encrypted message.
	ContentType = `multipart/encrypted;protocol="` + Protocol + `";boundary="` + Boundary + `"`
	// SOAPType is the original type of the SOAP messages sealed.
	SOAPType = "application/soap+xml;charset=UTF-8"
	// SignatureSize is the size of an NTLM message signature.
	SignatureSize = 16
)

// IsEncrypted reports whether a Content-Type is an encrypted message's.
func IsEncrypted(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "multipart/encrypted" && params["protocol"] == Protocol
}

// Frame frames a sealed message of original type originalType with its
// signature.
func Frame(originalType string, signature, sealed []byte) []byte {
	var b bytes.Buffer
	dash := "--" + Boundary + "\r\n"
	b.WriteString(dash)
	b.WriteString("\tContent-Type: " + Protocol + "\r\n")
	b.WriteString("\tOriginalContent: type=" + originalType + ";Length=" + strconv.Itoa(len(sealed)) + "\r\n")
	b.WriteString(dash)
	b.WriteString("\tContent-Type: application/octet-stream\r\n")
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(signature)))
	b.Write(n[:])
	b.Write(signature)
	b.Write(sealed)
	b.WriteString("--" + Boundary + "--\r\n")
	return b.Bytes()
}

// Message is an encrypted message, taken apart.
type Message struct {
	// OriginalType is the Content-Type of the message sealed, from
	// OriginalContent.
	OriginalType string
	// Signature is the NTLM signature (SignatureSize bytes), Sealed the
	// sealed message.
	Signature, Sealed []byte
}

// Parse takes an encrypted message apart, refusing what Windows would
// not have written: a boundary other than the Content-Type's, a header line
// without its tab, no OriginalContent Length, a signature that is not
// SignatureSize bytes, fewer bytes than the Length, anything between the
// sealed message and the closing boundary.
func Parse(contentType string, body []byte) (*Message, error) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, fmt.Errorf("the Content-Type %q does not parse: %v", contentType, err)
	}
	boundary := params["boundary"]
	dash := []byte("--" + boundary + "\r\n")
	if boundary == "" || !bytes.HasPrefix(body, dash) {
		return nil, errors.New("the body does not start with its boundary")
	}
	rest := body[len(dash):]
	end := bytes.Index(rest, dash)
	if end < 0 {
		return nil, errors.New("the body has no second part")
	}
	var m Message
	length := -1
	for _, line := range strings.Split(strings.TrimSuffix(string(rest[:end]), "\r\n"), "\r\n") {
		if !strings.HasPrefix(line, "\t") {
			return nil, fmt.Errorf("the header line %q does not start with a tab", line)
		}
		name, value, _ := strings.Cut(line[1:], ":")
		value = strings.TrimSpace(value)
		switch name {
		case "Content-Type":
			if value != Protocol {
				return nil, fmt.Errorf("the first part's Content-Type is %q, want %q", value, Protocol)
			}
		case "OriginalContent":
			typ, ln, ok := strings.Cut(value, ";Length=")
			n, err := strconv.Atoi(ln)
			if !ok || err != nil || n < 0 || !strings.HasPrefix(typ, "type=") {
				return nil, fmt.Errorf("OriginalContent %q does not read as type=...;Length=N", value)
			}
			m.OriginalType, length = strings.TrimPrefix(typ, "type="), n
		}
	}
	if length < 0 {
		return nil, errors.New("the first part has no OriginalContent")
	}
	rest = rest[end+len(dash):]
	const octet = "\tContent-Type: application/octet-stream\r\n"
	if !bytes.HasPrefix(rest, []byte(octet)) {
		return nil, errors.New("the second part does not start with its Content-Type, application/octet-stream")
	}
	rest = rest[len(octet):]
	if len(rest) < 4 {
		return nil, errors.New("the second part is truncated before its signature's length")
	}
	if n := binary.LittleEndian.Uint32(rest); n != SignatureSize {
		return nil, fmt.Errorf("the signature is %d bytes, an NTLM signature %d", n, SignatureSize)
	}
	rest = rest[4:]
	if len(rest) < SignatureSize+length {
		return nil, fmt.Errorf("the second part holds %d bytes after its signature's length, want the %d-byte signature and the %d bytes of OriginalContent's Length", len(rest), SignatureSize, length)
	}
	m.Signature, m.Sealed = rest[:SignatureSize], rest[SignatureSize:SignatureSize+length]
	if tail := string(rest[SignatureSize+length:]); tail != "--"+boundary+"--\r\n" {
		if len(tail) > 40 {
			tail = tail[:40] + "..."
		}
		return nil, fmt.Errorf("the body ends with %q after the sealed message, want its closing boundary", tail)
	}
	return &m, nil
}
