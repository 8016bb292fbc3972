package wsmantest

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/rc4"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf16"

	"golang.org/x/crypto/md4" //nolint:staticcheck // NTLM's NT hash is MD4 (MS-NLMP 3.3.1)
)

// The server side of NTLMv2 (MS-NLMP), as Windows runs it behind the
// Negotiate scheme of a WinRM listener: a CHALLENGE_MESSAGE for the
// client's NEGOTIATE_MESSAGE, the check of the AUTHENTICATE_MESSAGE's
// NTProofStr (and MIC, and channel bindings over TLS) against the
// configured password, and the session keys that seal the messages that
// follow (MS-NLMP 3.4). It is written from the specification, apart from
// the clients it serves (bodgit/ntlmssp for ours and masterzen/winrm's,
// ntlm-auth for pywinrm), so that a mistake shared by client and stand-in
// shows up against the other clients.

// ntlmSignature starts every NTLM message.
var ntlmSignature = []byte("NTLMSSP\x00")

// NTLM negotiate flags (MS-NLMP 2.2.2.5).
const (
	ntlmUnicode       uint32 = 1 << 0
	ntlmOEM           uint32 = 1 << 1
	ntlmRequestTarget uint32 = 1 << 2
	ntlmSign          uint32 = 1 << 4
	ntlmSeal          uint32 = 1 << 5
	ntlmNTLM          uint32 = 1 << 9
	ntlmAlwaysSign    uint32 = 1 << 15
	ntlmTargetServer  uint32 = 1 << 17
	ntlmESS           uint32 = 1 << 19 // extended session security
	ntlmTargetInfo    uint32 = 1 << 23
	ntlmVersion       uint32 = 1 << 25
	ntlm128           uint32 = 1 << 29
	ntlmKeyExch       uint32 = 1 << 30
	ntlm56            uint32 = 1 << 31
)

// AV_PAIR ids (MS-NLMP 2.2.2.1).
const (
	avEOL             = 0
	avNbComputerName  = 1
	avNbDomainName    = 2
	avDNSComputerName = 3
	avDNSDomainName   = 4
	avFlags           = 6
	avTimestamp       = 7
	avChannelBindings = 10

	// avFlagMIC in MsvAvFlags: the AUTHENTICATE_MESSAGE carries a MIC.
	avFlagMIC = 0x2
)

// NetBIOSName is the stand-in machine's computer name, which its NTLM
// challenge gives as the target (a workgroup server's domain is its own
// name). A local account may be given as NAME\user, .\user or user.
const NetBIOSName = "WSMANTEST"

// ntlmChallenge is a challenge sent on a connection, awaiting the client's
// AUTHENTICATE_MESSAGE.
type ntlmChallenge struct {
	negotiate, challenge []byte
	serverChallenge      [8]byte
}

// newChallenge answers a NEGOTIATE_MESSAGE with a CHALLENGE_MESSAGE
// (MS-NLMP 2.2.1.2): the flags the server agrees to (those of the client's
// it supports), a random server challenge, and the target information,
// with a timestamp, as Windows since Vista sends it (which makes NTLMv2
// clients send a MIC).
func newChallenge(negotiate []byte) (*ntlmChallenge, error) {
	if len(negotiate) < 16 || !bytes.Equal(negotiate[:8], ntlmSignature) || binary.LittleEndian.Uint32(negotiate[8:12]) != 1 {
		return nil, errors.New("not an NTLM NEGOTIATE_MESSAGE")
	}
	asked := binary.LittleEndian.Uint32(negotiate[12:16])
	flags := ntlmRequestTarget | ntlmNTLM | ntlmAlwaysSign | ntlmTargetServer | ntlmTargetInfo | ntlmVersion
	flags |= asked & (ntlmSign | ntlmSeal | ntlmESS | ntlm128 | ntlm56 | ntlmKeyExch)
	// The character set: Unicode when the client offers it, else OEM
	// (MS-NLMP 3.2.5.1.1); ntlm-auth, pywinrm's, offers only OEM.
	target := utf16le(NetBIOSName)
	switch {
	case asked&ntlmUnicode != 0:
		flags |= ntlmUnicode
	case asked&ntlmOEM != 0:
		flags |= ntlmOEM
		target = []byte(NetBIOSName)
	default:
		return nil, errors.New("the NEGOTIATE_MESSAGE offers neither Unicode nor OEM")
	}
	c := &ntlmChallenge{negotiate: append([]byte(nil), negotiate...)}
	if _, err := rand.Read(c.serverChallenge[:]); err != nil {
		return nil, err
	}
	var info bytes.Buffer
	avPair(&info, avNbDomainName, utf16le(NetBIOSName))
	avPair(&info, avNbComputerName, utf16le(NetBIOSName))
	avPair(&info, avDNSDomainName, utf16le(strings.ToLower(NetBIOSName)))
	avPair(&info, avDNSComputerName, utf16le(strings.ToLower(NetBIOSName)))
	ts := make([]byte, 8)
	binary.LittleEndian.PutUint64(ts, fileTime(time.Now()))
	avPair(&info, avTimestamp, ts)
	avPair(&info, avEOL, nil)

	const header = 56 // up to and with the version
	msg := make([]byte, header, header+len(target)+info.Len())
	copy(msg, ntlmSignature)
	binary.LittleEndian.PutUint32(msg[8:], 2)
	putField(msg[12:], len(target), header)
	binary.LittleEndian.PutUint32(msg[20:], flags)
	copy(msg[24:32], c.serverChallenge[:])
	putField(msg[40:], info.Len(), header+len(target))
	// Version: Windows 10.0 build 20348, NTLM revision 15.
	copy(msg[48:56], []byte{10, 0, 0x7c, 0x4f, 0, 0, 0, 15})
	msg = append(msg, target...)
	msg = append(msg, info.Bytes()...)
	c.challenge = msg
	return c, nil
}

// ntlmAccount is the account the server accepts.
type ntlmAccount struct {
	user, password string
	// channelBinding is the MD5 of the gss_channel_bindings_struct of the
	// listener's certificate (RFC 5929 tls-server-end-point) over HTTPS,
	// nil over HTTP.
	channelBinding []byte
}

// ntlmAuthError is why an AUTHENTICATE_MESSAGE was refused; the client
// only sees a 401.
type ntlmAuthError struct{ reason string }

func (e *ntlmAuthError) Error() string { return "NTLM authentication refused: " + e.reason }

func refuse(format string, args ...any) error {
	return &ntlmAuthError{reason: fmt.Sprintf(format, args...)}
}

// authenticate checks an AUTHENTICATE_MESSAGE (MS-NLMP 2.2.1.3, 3.2.5.1.2)
// against the challenge and the account, and returns the session that
// seals the connection's messages from now on, and the user name as sent
// (DOMAIN\user when a domain was given).
func (c *ntlmChallenge) authenticate(auth []byte, acct ntlmAccount) (*ntlmSession, string, error) {
	if len(auth) < 72 || !bytes.Equal(auth[:8], ntlmSignature) || binary.LittleEndian.Uint32(auth[8:12]) != 3 {
		return nil, "", refuse("not an NTLM AUTHENTICATE_MESSAGE")
	}
	field := func(at int) ([]byte, error) {
		n := int(binary.LittleEndian.Uint16(auth[at:]))
		off := int(binary.LittleEndian.Uint32(auth[at+4:]))
		if off < 0 || off+n > len(auth) {
			return nil, refuse("a field of the AUTHENTICATE_MESSAGE lies outside it")
		}
		return auth[off : off+n], nil
	}
	ntResp, err := field(20)
	if err != nil {
		return nil, "", err
	}
	domainRaw, err := field(28)
	if err != nil {
		return nil, "", err
	}
	userRaw, err := field(36)
	if err != nil {
		return nil, "", err
	}
	encKey, err := field(52)
	if err != nil {
		return nil, "", err
	}
	flags := binary.LittleEndian.Uint32(auth[60:64])
	domain, user := string(domainRaw), string(userRaw) // OEM: ASCII here
	if flags&ntlmUnicode != 0 {
		domain, user = fromUTF16le(domainRaw), fromUTF16le(userRaw)
	}
	sent := user
	if domain != "" {
		sent = domain + `\` + user
	}
	if !acct.matches(domain, user) {
		return nil, sent, refuse("unknown user %q", sent)
	}
	if len(ntResp) < 16+28 {
		// 24 bytes is an NTLMv1 response: a server at the default
		// LmCompatibilityLevel of 3 and later refuses to derive session
		// security from it.
		return nil, sent, refuse("the NT response is not NTLMv2 (%d bytes)", len(ntResp))
	}
	ntProof, blob := ntResp[:16], ntResp[16:]
	key := ntowfv2(user, domain, acct.password)
	if !hmac.Equal(ntProof, hmacMD5(key, c.serverChallenge[:], blob)) {
		return nil, sent, refuse("wrong password for %q (the NTProofStr does not match)", sent)
	}
	avs, err := parseAVPairs(blob[28:])
	if err != nil {
		return nil, sent, refuse("the NTLMv2 client challenge's AV pairs: %v", err)
	}
	sessionBaseKey := hmacMD5(key, ntProof)
	exported := sessionBaseKey // KeyExchangeKey of NTLMv2 (MS-NLMP 3.4.5.1)
	if flags&ntlmKeyExch != 0 {
		if len(encKey) != 16 {
			return nil, sent, refuse("KEY_EXCH without a 16-byte EncryptedRandomSessionKey")
		}
		exported = rc4Once(sessionBaseKey, encKey)
	}
	if f, ok := avs[avFlags]; ok && len(f) == 4 && binary.LittleEndian.Uint32(f)&avFlagMIC != 0 {
		if len(auth) < 88 {
			return nil, sent, refuse("MsvAvFlags announces a MIC the message does not hold")
		}
		zeroed := append([]byte(nil), auth...)
		copy(zeroed[72:88], make([]byte, 16))
		if !hmac.Equal(auth[72:88], hmacMD5(exported, c.negotiate, c.challenge, zeroed)) {
			return nil, sent, refuse("the MIC does not match")
		}
	}
	if cbt, ok := avs[avChannelBindings]; ok && acct.channelBinding != nil && !bytes.Equal(cbt, make([]byte, 16)) {
		// CbtHardeningLevel=Relaxed, the default: bindings may be absent,
		// but wrong ones are refused.
		if !bytes.Equal(cbt, acct.channelBinding) {
			return nil, sent, refuse("the channel bindings do not match the listener's certificate")
		}
	}
	if flags&ntlmSeal == 0 || flags&ntlmESS == 0 {
		// Authenticated, but the connection cannot carry encrypted
		// messages (go-ntlmssp negotiates neither sign nor seal).
		return &ntlmSession{}, sent, nil
	}
	s, err := newNTLMSession(flags, exported)
	if err != nil {
		return nil, sent, err
	}
	return s, sent, nil
}

// matches reports whether domain\user names the account: a local account
// given bare, as .\user, as NAME\user, or with the domain the configured
// user names.
func (a ntlmAccount) matches(domain, user string) bool {
	wantDomain, wantUser, qualified := strings.Cut(a.user, `\`)
	if !qualified {
		wantDomain, wantUser = "", a.user
	}
	if !strings.EqualFold(user, wantUser) {
		return false
	}
	switch {
	case wantDomain != "":
		return strings.EqualFold(domain, wantDomain)
	default:
		return domain == "" || domain == "." || strings.EqualFold(domain, NetBIOSName)
	}
}

// ntlmSession seals and unseals the messages of one authenticated
// connection (MS-NLMP 3.4.3, 3.4.4.2, with extended session security):
// each direction has its signing key, its RC4 handle, whose state runs on
// from message to message, and its sequence number.
type ntlmSession struct {
	// sealing is false when the handshake did not negotiate sealing with
	// extended session security: no message can then be encrypted.
	sealing            bool
	keyExch            bool
	clientSign         []byte
	serverSign         []byte
	clientSeal         *rc4.Cipher
	serverSeal         *rc4.Cipher
	inSeq, outSeq      uint32
	exportedSessionKey []byte
}

var (
	clientSignMagic = []byte("session key to client-to-server signing key magic constant\x00")
	serverSignMagic = []byte("session key to server-to-client signing key magic constant\x00")
	clientSealMagic = []byte("session key to client-to-server sealing key magic constant\x00")
	serverSealMagic = []byte("session key to server-to-client sealing key magic constant\x00")
)

func newNTLMSession(flags uint32, exported []byte) (*ntlmSession, error) {
	sealKey := func(magic []byte) []byte {
		switch {
		case flags&ntlm128 != 0:
			return md5Sum(exported, magic)
		case flags&ntlm56 != 0:
			return md5Sum(exported[:7], magic)
		default:
			return md5Sum(exported[:5], magic)
		}
	}
	cs, err := rc4.NewCipher(sealKey(clientSealMagic))
	if err != nil {
		return nil, err
	}
	ss, err := rc4.NewCipher(sealKey(serverSealMagic))
	if err != nil {
		return nil, err
	}
	return &ntlmSession{
		sealing:            true,
		keyExch:            flags&ntlmKeyExch != 0,
		clientSign:         md5Sum(exported, clientSignMagic),
		serverSign:         md5Sum(exported, serverSignMagic),
		clientSeal:         cs,
		serverSeal:         ss,
		exportedSessionKey: exported,
	}, nil
}

// unseal decrypts a message from the client and checks its signature: the
// checksum and the sequence number, which must be the next one.
func (s *ntlmSession) unseal(sealed, signature []byte) ([]byte, error) {
	if !s.sealing {
		return nil, errors.New("the connection's NTLM context did not negotiate sealing (NTLMSSP_NEGOTIATE_SEAL with extended session security)")
	}
	if len(signature) != 16 || binary.LittleEndian.Uint32(signature[:4]) != 1 {
		return nil, errors.New("the message signature is not a 16-byte NTLMSSP_MESSAGE_SIGNATURE")
	}
	msg := make([]byte, len(sealed))
	s.clientSeal.XORKeyStream(msg, sealed)
	sum := s.checksum(s.clientSign, s.clientSeal, s.inSeq, msg)
	if subtle.ConstantTimeCompare(sum, signature[4:12]) != 1 {
		return nil, errors.New("the message signature's checksum does not match")
	}
	if seq := binary.LittleEndian.Uint32(signature[12:16]); seq != s.inSeq {
		return nil, fmt.Errorf("the message's sequence number is %d, want %d", seq, s.inSeq)
	}
	s.inSeq++
	return msg, nil
}

// seal encrypts a message to the client and returns it with its signature.
func (s *ntlmSession) seal(msg []byte) (sealed, signature []byte) {
	sealed = make([]byte, len(msg))
	s.serverSeal.XORKeyStream(sealed, msg)
	signature = make([]byte, 16)
	binary.LittleEndian.PutUint32(signature, 1)
	copy(signature[4:12], s.checksum(s.serverSign, s.serverSeal, s.outSeq, msg))
	binary.LittleEndian.PutUint32(signature[12:], s.outSeq)
	s.outSeq++
	return sealed, signature
}

// checksum is the first 8 bytes of HMAC_MD5(key, seq || msg), encrypted
// with the direction's RC4 handle when the key was exchanged.
func (s *ntlmSession) checksum(key []byte, handle *rc4.Cipher, seq uint32, msg []byte) []byte {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], seq)
	sum := hmacMD5(key, n[:], msg)[:8]
	if s.keyExch {
		handle.XORKeyStream(sum, sum)
	}
	return sum
}

// ntowfv2 is NTOWFv2 (MS-NLMP 3.3.2): HMAC_MD5(MD4(UNICODE(password)),
// UNICODE(UPPERCASE(user) + domain)).
func ntowfv2(user, domain, password string) []byte {
	h := md4.New()
	h.Write(utf16le(password))
	return hmacMD5(h.Sum(nil), utf16le(strings.ToUpper(user)+domain))
}

// channelBindingHash is the MsvAvChannelBindings value a client sends for
// a TLS server certificate: MD5 of the gss_channel_bindings_struct (RFC
// 2744) whose application data is "tls-server-end-point:" and the
// certificate's hash (RFC 5929 4.1: SHA-256 for MD5 or SHA-1 signatures,
// else the signature's hash).
func channelBindingHash(certHash []byte) []byte {
	app := append([]byte("tls-server-end-point:"), certHash...)
	// initiator addrtype, length; acceptor addrtype, length; application
	// data length, then the data: all zero but the last.
	b := make([]byte, 20, 20+len(app))
	binary.LittleEndian.PutUint32(b[16:], uint32(len(app)))
	b = append(b, app...)
	return md5Sum(b)
}

func parseAVPairs(b []byte) (map[uint16][]byte, error) {
	m := map[uint16][]byte{}
	for {
		if len(b) < 4 {
			return nil, errors.New("truncated")
		}
		id, n := binary.LittleEndian.Uint16(b), int(binary.LittleEndian.Uint16(b[2:]))
		if len(b) < 4+n {
			return nil, errors.New("truncated")
		}
		if id == avEOL {
			return m, nil
		}
		m[id] = b[4 : 4+n]
		b = b[4+n:]
	}
}

func avPair(b *bytes.Buffer, id uint16, value []byte) {
	var h [4]byte
	binary.LittleEndian.PutUint16(h[:], id)
	binary.LittleEndian.PutUint16(h[2:], uint16(len(value)))
	b.Write(h[:])
	b.Write(value)
}

// putField writes a message field's length, maximum length and offset.
func putField(b []byte, n, offset int) {
	binary.LittleEndian.PutUint16(b, uint16(n))
	binary.LittleEndian.PutUint16(b[2:], uint16(n))
	binary.LittleEndian.PutUint32(b[4:], uint32(offset))
}

// fileTime is t as a Windows FILETIME: 100 ns since 1601.
func fileTime(t time.Time) uint64 {
	return uint64(t.UnixNano()/100) + 116444736000000000
}

func utf16le(s string) []byte {
	units := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(units))
	for i, u := range units {
		binary.LittleEndian.PutUint16(b[2*i:], u)
	}
	return b
}

func fromUTF16le(b []byte) string {
	units := make([]uint16, len(b)/2)
	for i := range units {
		units[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(units))
}

func hmacMD5(key []byte, data ...[]byte) []byte {
	h := hmac.New(md5.New, key)
	for _, d := range data {
		h.Write(d)
	}
	return h.Sum(nil)
}

func md5Sum(data ...[]byte) []byte {
	h := md5.New()
	for _, d := range data {
		h.Write(d)
	}
	return h.Sum(nil)
}

func rc4Once(key, data []byte) []byte {
	c, _ := rc4.NewCipher(key) // a 16-byte key is always valid
	out := make([]byte, len(data))
	c.XORKeyStream(out, data)
	return out
}
