package wsmantest

// XML namespaces and URIs of WS-Management and the Windows Remote Shell.
const (
	nsSOAP       = "http://www.w3.org/2003/05/soap-envelope"
	nsAddressing = "http://schemas.xmlsoap.org/ws/2004/08/addressing"
	nsTransfer   = "http://schemas.xmlsoap.org/ws/2004/09/transfer"
	nsWSMan      = "http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd"
	nsWSManMS    = "http://schemas.microsoft.com/wbem/wsman/1/wsman.xsd"
	nsShell      = "http://schemas.microsoft.com/wbem/wsman/1/windows/shell"
	nsWSManFault = "http://schemas.microsoft.com/wbem/wsman/1/wsmanfault"

	// resourceCmd is the resource URI of a cmd shell, the only one served.
	resourceCmd = nsShell + "/cmd"
	// anonymous is the WS-Addressing address a reply goes to.
	anonymous = nsAddressing + "/role/anonymous"
	// faultAction is the action of a WS-Management fault message.
	faultAction = "http://schemas.dmtf.org/wbem/wsman/1/wsman/fault"

	stateDone    = nsShell + "/CommandState/Done"
	stateRunning = nsShell + "/CommandState/Running"

	// SignalTerminate is the Signal code that ends a command.
	SignalTerminate = nsShell + "/signal/terminate"
	// SignalCtrlC is the Signal code that sends a command CTRL+C.
	SignalCtrlC = nsShell + "/signal/ctrl_c"

	// defaultMaxEnvelopeSize is what a request that names no MaxEnvelopeSize
	// gets: WinRM's default of 150 KiB.
	defaultMaxEnvelopeSize = 153600
)

// Action names a WS-Management request by the last element of its action URI.
type Action string

// The actions of the Windows Remote Shell protocol.
const (
	ActionCreate  Action = "Create"
	ActionDelete  Action = "Delete"
	ActionCommand Action = "Command"
	ActionSend    Action = "Send"
	ActionReceive Action = "Receive"
	ActionSignal  Action = "Signal"
)

// actionURIs maps each action to its URI.
var actionURIs = map[Action]string{
	ActionCreate:  nsTransfer + "/Create",
	ActionDelete:  nsTransfer + "/Delete",
	ActionCommand: nsShell + "/Command",
	ActionSend:    nsShell + "/Send",
	ActionReceive: nsShell + "/Receive",
	ActionSignal:  nsShell + "/Signal",
}

// URI is the action's WS-Addressing action URI.
func (a Action) URI() string {
	if uri, ok := actionURIs[a]; ok {
		return uri
	}
	return string(a)
}

// responseURI is the action URI of the answer to a.
func (a Action) responseURI() string { return a.URI() + "Response" }

// actionOf returns the Action for an action URI; an unknown URI is its own
// Action.
func actionOf(uri string) Action {
	for a, u := range actionURIs {
		if u == uri {
			return a
		}
	}
	return Action(uri)
}
