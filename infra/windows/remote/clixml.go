package remote

import (
	"encoding/xml"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
)

// clixmlMarker starts a CLIXML block: how powershell.exe writes error (and
// progress) records to stderr when it runs without a console, as under WinRM.
const clixmlMarker = "#< CLIXML"

// decodeCLIXML returns stderr with every CLIXML block replaced by the text
// of its string records (<S S="Error">...</S>); progress records and the
// like are dropped. Text outside CLIXML blocks is kept.
func decodeCLIXML(stderr string) string {
	if !strings.Contains(stderr, clixmlMarker) {
		return stderr
	}
	var b strings.Builder
	rest := stderr
	for {
		i := strings.Index(rest, clixmlMarker)
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = strings.TrimLeft(rest[i+len(clixmlMarker):], "\r\n")
		end := strings.Index(rest, "</Objs>")
		if end < 0 {
			b.WriteString(clixmlStrings(rest))
			break
		}
		b.WriteString(clixmlStrings(rest[:end+len("</Objs>")]))
		rest = strings.TrimLeft(rest[end+len("</Objs>"):], "\r\n")
	}
	return b.String()
}

// clixmlStrings returns the decoded text of the <S> records of a CLIXML
// document.
func clixmlStrings(doc string) string {
	dec := xml.NewDecoder(strings.NewReader(doc))
	dec.Strict = false
	var b strings.Builder
	depth := 0 // inside an <S> record
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == "S" {
				depth++
			}
		case xml.EndElement:
			if t.Name.Local == "S" && depth > 0 {
				depth--
			}
		case xml.CharData:
			if depth > 0 {
				b.WriteString(unescapeCLIXML(string(t)))
			}
		}
	}
	return b.String()
}

var clixmlEscape = regexp.MustCompile(`(?:_x[0-9A-Fa-f]{4}_)+`)

// unescapeCLIXML decodes CLIXML's _xHHHH_ escapes (UTF-16 code units, so
// surrogate pairs come as two).
func unescapeCLIXML(s string) string {
	return clixmlEscape.ReplaceAllStringFunc(s, func(run string) string {
		var units []uint16
		for i := 0; i+7 <= len(run); i += 7 {
			n, err := strconv.ParseUint(run[i+2:i+6], 16, 16)
			if err != nil {
				return run
			}
			units = append(units, uint16(n))
		}
		return string(utf16.Decode(units))
	})
}
