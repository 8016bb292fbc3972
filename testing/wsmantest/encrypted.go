package wsmantest

import "github.com/winconform/winconform/infra/windows/remote/framing"

// The encrypted message of MS-WSMV 2.2.9.1.1, in which a listener that
// refuses unencrypted messages over HTTP (AllowUnencrypted=false, the
// default) wants every SOAP message: the client's own framing
// (remote/framing), which reads strictly what Windows writes and the
// stand-in checks a client writes (tabs, boundaries, Length, a 16-byte
// NTLM signature).
const (
	// EncryptedContentType is the Content-Type of an encrypted message.
	EncryptedContentType = framing.ContentType
	soapContentType      = framing.SOAPType
)
