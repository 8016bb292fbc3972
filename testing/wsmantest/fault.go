package wsmantest

import (
	"fmt"
	"net/http"
	"strings"
)

// Fault is a SOAP fault the server answers with, shaped like WinRM's: a SOAP
// code and subcode, a reason, and a WSManFault detail with a numeric code and
// a message.
type Fault struct {
	// Code is the SOAP fault code: "s:Receiver" (the default) or "s:Sender".
	Code string
	// Subcode is the WS-Management fault subcode, such as "w:TimedOut" or
	// "w:InvalidSelectors".
	Subcode string
	// Reason is the s:Reason text.
	Reason string
	// WSManCode is the f:WSManFault Code attribute, a Windows error number.
	WSManCode uint32
	// Message is the f:Message text; Reason when empty.
	Message string
	// Status is the HTTP status of the answer; 500 (what WinRM uses) when 0.
	Status int
}

// Error makes a *Fault usable as an error in tests.
func (f *Fault) Error() string {
	return fmt.Sprintf("SOAP fault %s: %s", f.Subcode, f.message())
}

func (f *Fault) message() string {
	if f.Message != "" {
		return f.Message
	}
	return f.Reason
}

func (f *Fault) status() int {
	if f.Status != 0 {
		return f.Status
	}
	return http.StatusInternalServerError
}

// Windows error numbers WinRM puts in its faults.
const (
	codeTimedOut         = 2150858793 // ERROR_WSMAN_OPERATION_TIMEDOUT
	codeInvalidSelectors = 2150858843 // ERROR_WSMAN_SHELL_NOT_FOUND
	codeGenericFailure   = 2147500037 // E_FAIL
	codeActionNotSupp    = 2150858757 // ERROR_WSMAN_UNSUPPORTED_ACTION (approximation)
	codeEncodingLimit    = 2150858754 // ERROR_WSMAN_ENCODING_LIMIT (approximation)
	codeInvalidParameter = 87         // ERROR_INVALID_PARAMETER
)

// timedOutReason is WinRM's text for an operation that outlived its
// OperationTimeout. Clients, masterzen/winrm among them, look for the word
// "OperationTimeout" in it to tell a Receive long poll that found no output
// from a failure.
const timedOutReason = "The WS-Management service cannot complete the operation within the time specified in OperationTimeout.  "

// TimedOutFault is the w:TimedOut fault WinRM answers when an operation
// (typically a Receive with no new output) outlives the request's
// OperationTimeout.
func TimedOutFault() *Fault {
	return &Fault{Code: "s:Receiver", Subcode: "w:TimedOut", Reason: timedOutReason, WSManCode: codeTimedOut}
}

// ErrorFault is a generic fault carrying message, such as WinRM sends when
// something fails on the machine.
func ErrorFault(message string) *Fault {
	return &Fault{Code: "s:Receiver", Subcode: "w:InternalError", Reason: message, WSManCode: codeGenericFailure}
}

// ShellNotFoundFault is the fault WinRM answers a request for a shell it does
// not have (never created, or deleted).
func ShellNotFoundFault(shellID string) *Fault {
	return &Fault{
		Code:      "s:Sender",
		Subcode:   "w:InvalidSelectors",
		Reason:    "The WS-Management service cannot process the request because the request contained invalid selectors for the resource. ",
		WSManCode: codeInvalidSelectors,
		Message: "The request for the Windows Remote Shell with ShellId " + shellID +
			" failed because the shell was not found on the server. Possible causes are: the specified ShellId is incorrect or the shell no longer exists on the server. Provide the correct ShellId or create a new shell and retry the operation. ",
	}
}

// commandNotFoundFault answers a request for a command the shell does not have.
func commandNotFoundFault(shellID, commandID string) *Fault {
	return &Fault{
		Code:      "s:Sender",
		Subcode:   "w:InvalidParameter",
		Reason:    "The parameter is incorrect. ",
		WSManCode: codeInvalidParameter,
		Message:   "The request for the Windows Remote Shell with ShellId " + shellID + " failed because the command with CommandId " + commandID + " was not found. ",
	}
}

// actionNotSupportedFault answers an action the server does not serve.
func actionNotSupportedFault(action string) *Fault {
	return &Fault{
		Code:      "s:Sender",
		Subcode:   "a:ActionNotSupported",
		Reason:    "The action is not supported by the service. ",
		WSManCode: codeActionNotSupp,
		Message:   "The WS-Management service cannot process the request because the action " + action + " is not supported. ",
	}
}

// badRequestFault answers a request the server cannot read.
func badRequestFault(message string) *Fault {
	return &Fault{
		Code:      "s:Sender",
		Subcode:   "w:SchemaValidationError",
		Reason:    "The SOAP XML in the message does not match the corresponding XML schema definition. ",
		WSManCode: codeInvalidParameter,
		Message:   message,
		Status:    http.StatusBadRequest,
	}
}

// encodingLimitFault answers a Receive whose MaxEnvelopeSize is too small for
// any output.
func encodingLimitFault(size int) *Fault {
	return &Fault{
		Code:      "s:Sender",
		Subcode:   "w:EncodingLimit",
		Reason:    "The WS-Management service cannot process the request because the envelope size in the request is too small. ",
		WSManCode: codeEncodingLimit,
		Message:   fmt.Sprintf("MaxEnvelopeSize %d is too small for a response.", size),
	}
}

// body renders the fault's SOAP body content.
func (f *Fault) body(machine string) string {
	code := f.Code
	if code == "" {
		code = "s:Receiver"
	}
	var b strings.Builder
	b.WriteString(`<s:Fault><s:Code><s:Value>`)
	b.WriteString(escape(code))
	b.WriteString(`</s:Value>`)
	if f.Subcode != "" {
		b.WriteString(`<s:Subcode><s:Value>`)
		b.WriteString(escape(f.Subcode))
		b.WriteString(`</s:Value></s:Subcode>`)
	}
	b.WriteString(`</s:Code><s:Reason><s:Text xml:lang="en-US">`)
	b.WriteString(escape(f.Reason))
	b.WriteString(`</s:Text></s:Reason><s:Detail>`)
	fmt.Fprintf(&b, `<f:WSManFault xmlns:f="%s" Code="%d" Machine="%s"><f:Message>`, nsWSManFault, f.WSManCode, escape(machine))
	b.WriteString(escape(f.message()))
	b.WriteString(`</f:Message></f:WSManFault></s:Detail></s:Fault>`)
	return b.String()
}
