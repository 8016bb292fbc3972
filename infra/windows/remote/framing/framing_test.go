package framing_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/windows/remote/framing"
)

var (
	signature = bytes.Repeat([]byte{0x01}, framing.SignatureSize)
	sealed    = []byte("sealed\r\n--Encrypted Boundary\r\n bytes that look like a boundary")
)

func TestFrameParseRoundTrip(t *testing.T) {
	for _, msg := range [][]byte{nil, {0}, sealed, bytes.Repeat([]byte("--Encrypted Boundary--\r\n"), 50)} {
		m, err := framing.Parse(framing.ContentType, framing.Frame(framing.SOAPType, signature, msg))
		if err != nil {
			t.Fatalf("Parse(Frame(%q)): %v", msg, err)
		}
		if m.OriginalType != framing.SOAPType || !bytes.Equal(m.Signature, signature) || !bytes.Equal(m.Sealed, msg) {
			t.Errorf("Parse(Frame(%q)) = %+v", msg, m)
		}
	}
	if !framing.IsEncrypted(framing.ContentType) || framing.IsEncrypted(framing.SOAPType) {
		t.Error("IsEncrypted does not tell the encrypted type from SOAP's")
	}
}

// withSignatureLength frames sealed with a signature of sigBytes bytes and
// writes claimed as its length.
func withSignatureLength(claimed uint32, sigBytes int) []byte {
	body := framing.Frame(framing.SOAPType, make([]byte, sigBytes), sealed)
	i := bytes.Index(body, []byte("application/octet-stream\r\n")) + len("application/octet-stream\r\n")
	binary.LittleEndian.PutUint32(body[i:], claimed)
	return body
}

// An NTLM message signature is 16 bytes (MS-NLMP 2.2.2.9.1,
// NTLMSSP_MESSAGE_SIGNATURE: a 4-byte Version, an 8-byte Checksum, a 4-byte
// SeqNum); the NTLM library slices bytes 4 to 16 of whatever it is given,
// so any other length from a broken or hostile peer is an error here, on
// both sides (the client reads answers, the stand-in requests with Parse).
func TestParseRefusesAnySignatureButSixteenBytes(t *testing.T) {
	for _, c := range []struct {
		claimed uint32
		bytes   int
	}{
		{0, 0}, {1, 1}, {4, 4}, {12, 12}, {15, 15}, {17, 17}, {32, 32},
		{0xffffffff, 16}, {0x80000000, 16}, {16 + uint32(len(sealed)) + 100, 16},
		{15, 16}, {17, 16},
	} {
		_, err := framing.Parse(framing.ContentType, withSignatureLength(c.claimed, c.bytes))
		if err == nil || !strings.Contains(err.Error(), "signature") {
			t.Errorf("a %d-byte signature claiming %d: error %v, want one about the signature", c.bytes, c.claimed, err)
		}
	}
}

func TestParseRefusesWhatWindowsWouldNotWrite(t *testing.T) {
	good := framing.Frame(framing.SOAPType, signature, sealed)
	for name, c := range map[string]struct {
		contentType string
		body        []byte
	}{
		"no boundary parameter":   {"multipart/encrypted", good},
		"another boundary":        {strings.Replace(framing.ContentType, framing.Boundary, "Other", 1), good},
		"an unparsable type":      {"multipart/encrypted;;;=", good},
		"no tab":                  {framing.ContentType, bytes.Replace(good, []byte("\tOriginalContent"), []byte("OriginalContent"), 1)},
		"no Length":               {framing.ContentType, bytes.Replace(good, []byte(";Length="), []byte(";Size="), 1)},
		"a negative Length":       {framing.ContentType, bytes.Replace(good, []byte(";Length="), []byte(";Length=-"), 1)},
		"a Length past the end":   {framing.ContentType, bytes.Replace(good, []byte(";Length="), []byte(";Length=9"), 1)},
		"a Length short of it":    {framing.ContentType, framing.Frame(framing.SOAPType, signature, append(sealed, 'x'))[:len(good)-1]},
		"bytes after the message": {framing.ContentType, append(good[:len(good)-len("--Encrypted Boundary--\r\n")], []byte("xx--Encrypted Boundary--\r\n")...)},
		"no closing boundary":     {framing.ContentType, good[:len(good)-4]},
		"no second part":          {framing.ContentType, good[:bytes.Index(good, []byte("\tContent-Type: application/octet"))-len("--Encrypted Boundary\r\n")]},
		"another first type":      {framing.ContentType, bytes.Replace(good, []byte("\tContent-Type: "+framing.Protocol), []byte("\tContent-Type: text/plain"), 1)},
		"no octet-stream header":  {framing.ContentType, bytes.Replace(good, []byte("\tContent-Type: application/octet-stream\r\n"), nil, 1)},
		"empty":                   {framing.ContentType, nil},
	} {
		if _, err := framing.Parse(c.contentType, c.body); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// Whatever the bytes, Parse returns an error or a message within the body;
// it never panics.
func FuzzParse(f *testing.F) {
	f.Add(framing.Frame(framing.SOAPType, signature, sealed))
	f.Add(withSignatureLength(4, 4))
	f.Add(withSignatureLength(0xffffffff, 16))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := framing.Parse(framing.ContentType, body)
		if err == nil && (len(m.Signature) != framing.SignatureSize || len(m.Sealed) > len(body)) {
			t.Errorf("Parse accepted a %d-byte signature", len(m.Signature))
		}
	})
}
