package wsmantest

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// envelope is a WS-Management request as the server reads it. Struct tags
// cannot use constants, so the namespaces are spelled out: env is the SOAP
// 1.2 envelope, a WS-Addressing, w WS-Management (DMTF) and rsp the Windows
// Remote Shell.
type envelope struct {
	XMLName xml.Name      `xml:"http://www.w3.org/2003/05/soap-envelope Envelope"`
	Header  requestHeader `xml:"http://www.w3.org/2003/05/soap-envelope Header"`
	Body    requestBody   `xml:"http://www.w3.org/2003/05/soap-envelope Body"`
}

type requestHeader struct {
	To               string      `xml:"http://schemas.xmlsoap.org/ws/2004/08/addressing To"`
	Action           string      `xml:"http://schemas.xmlsoap.org/ws/2004/08/addressing Action"`
	MessageID        string      `xml:"http://schemas.xmlsoap.org/ws/2004/08/addressing MessageID"`
	ResourceURI      string      `xml:"http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd ResourceURI"`
	MaxEnvelopeSize  string      `xml:"http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd MaxEnvelopeSize"`
	OperationTimeout string      `xml:"http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd OperationTimeout"`
	SelectorSet      selectorSet `xml:"http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd SelectorSet"`
	OptionSet        optionSet   `xml:"http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd OptionSet"`
}

type selectorSet struct {
	Selectors []namedValue `xml:"http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd Selector"`
}

type optionSet struct {
	Options []namedValue `xml:"http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd Option"`
}

// namedValue is a w:Selector or a w:Option.
type namedValue struct {
	Name  string `xml:"Name,attr"`
	Value string `xml:",chardata"`
}

type requestBody struct {
	Shell       *shellBody   `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Shell"`
	CommandLine *commandLine `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell CommandLine"`
	Send        *sendBody    `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Send"`
	Receive     *receiveBody `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Receive"`
	Signal      *signalBody  `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Signal"`
	Identify    *struct{}    `xml:"http://schemas.dmtf.org/wbem/wsman/identity/1/wsmanidentity.xsd Identify"`
}

type shellBody struct {
	InputStreams  string `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell InputStreams"`
	OutputStreams string `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell OutputStreams"`
}

type commandLine struct {
	// CommandID is set by clients that choose the command's ID.
	CommandID string   `xml:"CommandId,attr"`
	Command   string   `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Command"`
	Arguments []string `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Arguments"`
}

type sendBody struct {
	Streams []streamElement `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Stream"`
}

type streamElement struct {
	Name      string `xml:"Name,attr"`
	CommandID string `xml:"CommandId,attr"`
	End       string `xml:"End,attr"`
	Data      string `xml:",chardata"`
}

type receiveBody struct {
	DesiredStream struct {
		CommandID string `xml:"CommandId,attr"`
		Streams   string `xml:",chardata"`
	} `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell DesiredStream"`
}

type signalBody struct {
	CommandID string `xml:"CommandId,attr"`
	Code      string `xml:"http://schemas.microsoft.com/wbem/wsman/1/windows/shell Code"`
}

// parseEnvelope decodes a request body.
func parseEnvelope(data []byte) (*envelope, error) {
	var env envelope
	if err := xml.Unmarshal(data, &env); err != nil {
		return nil, err
	}
	if env.Header.Action == "" {
		return nil, fmt.Errorf("the request has no wsa:Action header")
	}
	return &env, nil
}

// selector returns the value of the named selector.
func (h *requestHeader) selector(name string) string {
	for _, s := range h.SelectorSet.Selectors {
		if s.Name == name {
			return strings.TrimSpace(s.Value)
		}
	}
	return ""
}

// options returns the option set as a map.
func (h *requestHeader) options() map[string]string {
	if len(h.OptionSet.Options) == 0 {
		return nil
	}
	m := make(map[string]string, len(h.OptionSet.Options))
	for _, o := range h.OptionSet.Options {
		m[o.Name] = strings.TrimSpace(o.Value)
	}
	return m
}

// maxEnvelopeSize is the largest response the client accepts.
func (h *requestHeader) maxEnvelopeSize() int {
	n, err := strconv.Atoi(strings.TrimSpace(h.MaxEnvelopeSize))
	if err != nil || n <= 0 {
		return defaultMaxEnvelopeSize
	}
	return n
}

// operationTimeout is how long the client lets the server take, 0 if unset
// or unreadable.
func (h *requestHeader) operationTimeout() time.Duration {
	d, err := parseDuration(strings.TrimSpace(h.OperationTimeout))
	if err != nil {
		return 0
	}
	return d
}

var durationRE = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d*)?)S)?)?$`)

// parseDuration reads an xs:duration of days, hours, minutes and seconds,
// such as PT60S, PT0.500S or P0DT0H1M30S.
func parseDuration(s string) (time.Duration, error) {
	m := durationRE.FindStringSubmatch(s)
	if m == nil || s == "P" || s == "PT" {
		return 0, fmt.Errorf("not an xs:duration: %q", s)
	}
	var d time.Duration
	units := []time.Duration{24 * time.Hour, time.Hour, time.Minute}
	for i, unit := range units {
		if m[i+1] != "" {
			n, err := strconv.Atoi(m[i+1])
			if err != nil {
				return 0, err
			}
			d += time.Duration(n) * unit
		}
	}
	if m[4] != "" {
		secs, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			return 0, err
		}
		d += time.Duration(secs * float64(time.Second))
	}
	return d, nil
}
