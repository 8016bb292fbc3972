package remote

import (
	"encoding/xml"
	"strings"
)

// faultEnvelope is the part of a SOAP fault answer that is read.
type faultEnvelope struct {
	Body struct {
		Fault *struct {
			Code struct {
				Value   string `xml:"http://www.w3.org/2003/05/soap-envelope Value"`
				Subcode struct {
					Value string `xml:"http://www.w3.org/2003/05/soap-envelope Value"`
				} `xml:"http://www.w3.org/2003/05/soap-envelope Subcode"`
			} `xml:"http://www.w3.org/2003/05/soap-envelope Code"`
			Reason struct {
				Text []string `xml:"http://www.w3.org/2003/05/soap-envelope Text"`
			} `xml:"http://www.w3.org/2003/05/soap-envelope Reason"`
			Detail struct {
				WSManFault struct {
					Code    string   `xml:"Code,attr"`
					Message innerXML `xml:"http://schemas.microsoft.com/wbem/wsman/1/wsmanfault Message"`
				} `xml:"http://schemas.microsoft.com/wbem/wsman/1/wsmanfault WSManFault"`
			} `xml:"http://www.w3.org/2003/05/soap-envelope Detail"`
		} `xml:"http://www.w3.org/2003/05/soap-envelope Fault"`
	} `xml:"http://www.w3.org/2003/05/soap-envelope Body"`
}

// innerXML is an element's content; WinRM nests provider details in
// f:Message.
type innerXML struct {
	Inner string `xml:",innerxml"`
}

// text is the character data of the content, tags dropped.
func (x innerXML) text() string {
	dec := xml.NewDecoder(strings.NewReader("<x>" + x.Inner + "</x>"))
	dec.Strict = false
	var b strings.Builder
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if cd, ok := tok.(xml.CharData); ok {
			b.Write(cd)
			b.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// parseFault reads a SOAP fault answer; nil when data holds none.
func parseFault(data []byte) *FaultError {
	var env faultEnvelope
	if err := xml.Unmarshal(data, &env); err != nil || env.Body.Fault == nil {
		return nil
	}
	f := env.Body.Fault
	return &FaultError{
		Code:      strings.TrimSpace(f.Code.Value),
		Subcode:   strings.TrimSpace(f.Code.Subcode.Value),
		Reason:    strings.TrimSpace(strings.Join(f.Reason.Text, " ")),
		WSManCode: strings.TrimSpace(f.Detail.WSManFault.Code),
		Message:   f.Detail.WSManFault.Message.text(),
	}
}
