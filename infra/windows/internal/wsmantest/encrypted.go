package wsmantest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"mime"
	"strconv"
	"strings"
)

// The encrypted message of MS-WSMV 2.2.9.1.1 (Negotiate Encrypted
// Message), in which a listener that refuses unencrypted messages over
// HTTP (AllowUnencrypted=false, the default) wants every SOAP message:
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
// The header lines start with a tab (2.2.9.1.1.2.1 and 2.2.9.1.1.2.2); the
// second part is binary, delimited by the Length of OriginalContent (RC4
// keeps lengths).
const (
	encryptedProtocol = "application/HTTP-SPNEGO-session-encrypted"
	encryptedBoundary = "Encrypted Boundary"
	// EncryptedContentType is the Content-Type of an encrypted message.
	EncryptedContentType = `multipart/encrypted;protocol="` + encryptedProtocol + `";boundary="` + encryptedBoundary + `"`
	soapContentType      = "application/soap+xml;charset=UTF-8"
)

// isEncrypted reports whether a Content-Type is that of an encrypted
// message.
func isEncrypted(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "multipart/encrypted" && params["protocol"] == encryptedProtocol
}

// encryptedMessage is an encrypted message, taken apart.
type encryptedMessage struct {
	// originalType is the Content-Type of the message sealed, from
	// OriginalContent.
	originalType string
	signature    []byte
	sealed       []byte
}

// parseEncrypted takes an encrypted message apart, strictly: the client's
// framing must be what Windows reads.
func parseEncrypted(contentType string, body []byte) (*encryptedMessage, error) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, fmt.Errorf("the Content-Type %q does not parse: %v", contentType, err)
	}
	dash := []byte("--" + params["boundary"] + "\r\n")
	if params["boundary"] == "" || !bytes.HasPrefix(body, dash) {
		return nil, errors.New("the body does not start with its boundary")
	}
	rest := body[len(dash):]
	end := bytes.Index(rest, dash)
	if end < 0 {
		return nil, errors.New("the body has no second part")
	}
	var m encryptedMessage
	length := -1
	for _, line := range strings.Split(strings.TrimSuffix(string(rest[:end]), "\r\n"), "\r\n") {
		if !strings.HasPrefix(line, "\t") {
			return nil, fmt.Errorf("the header line %q does not start with a tab", line)
		}
		name, value, _ := strings.Cut(line[1:], ":")
		value = strings.TrimSpace(value)
		switch name {
		case "Content-Type":
			if value != encryptedProtocol {
				return nil, fmt.Errorf("the first part's Content-Type is %q, want %q", value, encryptedProtocol)
			}
		case "OriginalContent":
			typ, ln, ok := strings.Cut(value, ";Length=")
			n, err := strconv.Atoi(ln)
			if !ok || err != nil || !strings.HasPrefix(typ, "type=") {
				return nil, fmt.Errorf("OriginalContent %q does not read as type=...;Length=N", value)
			}
			m.originalType, length = strings.TrimPrefix(typ, "type="), n
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
		return nil, errors.New("the second part is truncated")
	}
	sigLen := int(binary.LittleEndian.Uint32(rest))
	if sigLen != 16 || len(rest) < 4+sigLen+length {
		return nil, fmt.Errorf("the second part holds a %d-byte signature and %d bytes, want 16 and %d", sigLen, len(rest)-4-min(sigLen, len(rest)-4), length)
	}
	m.signature = rest[4 : 4+sigLen]
	m.sealed = rest[4+sigLen : 4+sigLen+length]
	if tail := string(rest[4+sigLen+length:]); tail != "--"+params["boundary"]+"--\r\n" {
		return nil, fmt.Errorf("the body ends with %q after the sealed message, want its closing boundary", shorten(tail, 40))
	}
	return &m, nil
}

// encryptedBody frames a sealed message.
func encryptedBody(originalType string, signature, sealed []byte) []byte {
	var b bytes.Buffer
	dash := "--" + encryptedBoundary + "\r\n"
	b.WriteString(dash)
	b.WriteString("\tContent-Type: " + encryptedProtocol + "\r\n")
	b.WriteString("\tOriginalContent: type=" + originalType + ";Length=" + strconv.Itoa(len(sealed)) + "\r\n")
	b.WriteString(dash)
	b.WriteString("\tContent-Type: application/octet-stream\r\n")
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(signature)))
	b.Write(n[:])
	b.Write(signature)
	b.Write(sealed)
	b.WriteString("--" + encryptedBoundary + "--\r\n")
	return b.Bytes()
}

func shorten(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
