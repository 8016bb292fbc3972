package wsmantest

import (
	"crypto/rand"
	"encoding/xml"
	"fmt"
	"strings"
)

// newGUID returns a random GUID in the upper-case form WinRM uses for shell
// and command IDs.
func newGUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%X-%X-%X-%X-%X", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// escape escapes s for XML text and attribute values.
func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// soapEnvelope wraps body in a response envelope with WinRM's header: the
// action, a new message ID, the anonymous reply address and the ID of the
// request it answers.
func soapEnvelope(action, relatesTo, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<s:Envelope xml:lang="en-US" xmlns:s="%s" xmlns:a="%s" xmlns:x="%s" xmlns:w="%s" xmlns:rsp="%s" xmlns:p="%s">`,
		nsSOAP, nsAddressing, nsTransfer, nsWSMan, nsShell, nsWSManMS)
	b.WriteString(`<s:Header><a:Action>`)
	b.WriteString(escape(action))
	b.WriteString(`</a:Action><a:MessageID>uuid:`)
	b.WriteString(newGUID())
	b.WriteString(`</a:MessageID><a:To>`)
	b.WriteString(anonymous)
	b.WriteString(`</a:To>`)
	if relatesTo != "" {
		b.WriteString(`<a:RelatesTo>`)
		b.WriteString(escape(relatesTo))
		b.WriteString(`</a:RelatesTo>`)
	}
	b.WriteString(`</s:Header><s:Body>`)
	b.WriteString(body)
	b.WriteString(`</s:Body></s:Envelope>`)
	return b.String()
}

// createdBody answers a Create: the new shell's endpoint reference and its
// properties.
func createdBody(address, shellID, owner, clientIP string) string {
	var b strings.Builder
	b.WriteString(`<x:ResourceCreated><a:Address>`)
	b.WriteString(escape(address))
	b.WriteString(`</a:Address><a:ReferenceParameters><w:ResourceURI>`)
	b.WriteString(resourceCmd)
	b.WriteString(`</w:ResourceURI><w:SelectorSet><w:Selector Name="ShellId">`)
	b.WriteString(shellID)
	b.WriteString(`</w:Selector></w:SelectorSet></a:ReferenceParameters></x:ResourceCreated>`)
	b.WriteString(`<rsp:Shell><rsp:ShellId>`)
	b.WriteString(shellID)
	b.WriteString(`</rsp:ShellId><rsp:ResourceUri>`)
	b.WriteString(resourceCmd)
	b.WriteString(`</rsp:ResourceUri><rsp:Owner>`)
	b.WriteString(escape(owner))
	b.WriteString(`</rsp:Owner><rsp:ClientIP>`)
	b.WriteString(escape(clientIP))
	b.WriteString(`</rsp:ClientIP><rsp:IdleTimeOut>PT7200.000S</rsp:IdleTimeOut>`)
	b.WriteString(`<rsp:InputStreams>stdin</rsp:InputStreams><rsp:OutputStreams>stdout stderr</rsp:OutputStreams>`)
	b.WriteString(`<rsp:ShellRunTime>P0DT0H0M0S</rsp:ShellRunTime><rsp:ShellInactivity>P0DT0H0M0S</rsp:ShellInactivity></rsp:Shell>`)
	return b.String()
}

// commandBody answers a Command with the new command's ID.
func commandBody(commandID string) string {
	return `<rsp:CommandResponse><rsp:CommandId>` + commandID + `</rsp:CommandId></rsp:CommandResponse>`
}

// streamXML renders one rsp:Stream of a Receive response.
func streamXML(name, commandID, b64 string, end bool) string {
	endAttr := ""
	if end {
		endAttr = ` End="true"`
	}
	return `<rsp:Stream Name="` + name + `" CommandId="` + commandID + `"` + endAttr + `>` + b64 + `</rsp:Stream>`
}

// commandStateXML renders the rsp:CommandState of a Receive response; a done
// command carries its exit code.
func commandStateXML(commandID string, done bool, exitCode int) string {
	if !done {
		return `<rsp:CommandState CommandId="` + commandID + `" State="` + stateRunning + `"/>`
	}
	return fmt.Sprintf(`<rsp:CommandState CommandId="%s" State="%s"><rsp:ExitCode>%d</rsp:ExitCode></rsp:CommandState>`, commandID, stateDone, exitCode)
}
