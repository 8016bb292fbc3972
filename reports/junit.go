package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/labels"
)

// JUnit test case properties the harness adds.
const (
	PropClaim    = "claim"    // one per claim the spec exercises
	PropEvidence = "evidence" // the level the spec's result was obtained at, or "none"
	PropShows    = "shows"    // the claims its result shows (comma-separated)
	PropResult   = "result"   // the harness's reading of the result
)

// AmendJUnit adds, to each test case of the JUnit file at path (as Ginkgo
// and the e2e framework write it), the properties of its spec: its claims,
// its evidence level, the claims it shows, and its result. Everything else
// in the file is copied as it is. Test cases are matched by their name,
// "[It] <full text>" with or without " [<labels>]".
func AmendJUnit(path string, r types.Report, s Summary) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	props := map[string][][2]string{}
	bySpec := map[string]Spec{}
	for _, sp := range s.Specs {
		bySpec[sp.Name] = sp
	}
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		sp, ok := bySpec[sr.FullText()]
		if !ok {
			continue
		}
		p := specProperties(sp)
		name := "[It] " + sr.FullText()
		props[name] = p
		if l := sr.Labels(); len(l) > 0 {
			props[name+" ["+strings.Join(l, ", ")+"]"] = p
		}
	}
	var out bytes.Buffer
	dec := xml.NewDecoder(bytes.NewReader(data))
	enc := xml.NewEncoder(&out)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		tok = xml.CopyToken(tok)
		if err := enc.EncodeToken(tok); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "testcase" {
			continue
		}
		name := ""
		for _, a := range se.Attr {
			if a.Name.Local == "name" {
				name = a.Value
			}
		}
		p, ok := props[name]
		if !ok {
			continue
		}
		if err := encodeProperties(enc, p); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}

func specProperties(sp Spec) [][2]string {
	var p [][2]string
	ids := labels.Claims(sp.Labels)
	for _, id := range ids {
		p = append(p, [2]string{PropClaim, id})
	}
	var level claims.Level
	var shows []string
	for _, id := range ids {
		c, ok := claims.Get(id)
		if !ok {
			continue
		}
		l, ok := sp.Level(c)
		if rank(l) > rank(level) {
			level = l
		}
		if ok && sp.Result == SpecPassed {
			shows = append(shows, id)
		}
	}
	ev := string(level)
	if ev == "" {
		ev = "none"
	}
	for _, r := range sp.Evidence {
		if r.Partial != "" {
			ev += " (partial: " + r.Partial + ")"
		}
	}
	p = append(p, [2]string{PropEvidence, ev}, [2]string{PropShows, strings.Join(shows, ",")}, [2]string{PropResult, sp.Result})
	return p
}

func encodeProperties(enc *xml.Encoder, props [][2]string) error {
	start := xml.StartElement{Name: xml.Name{Local: "properties"}}
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	for _, kv := range props {
		el := xml.StartElement{Name: xml.Name{Local: "property"}, Attr: []xml.Attr{
			{Name: xml.Name{Local: "name"}, Value: kv[0]}, {Name: xml.Name{Local: "value"}, Value: kv[1]}}}
		if err := enc.EncodeToken(el); err != nil {
			return err
		}
		if err := enc.EncodeToken(el.End()); err != nil {
			return err
		}
	}
	return enc.EncodeToken(start.End())
}
