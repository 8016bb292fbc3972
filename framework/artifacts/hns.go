package artifacts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// HNS is a Windows node's HNS state as HNSScript (hns.ps1) prints it:
// each part the objects its cmdlet returned, or why it has none.
type HNS struct {
	Networks    HNSPart `json:"networks"`
	Endpoints   HNSPart `json:"endpoints"`
	PolicyLists HNSPart `json:"policyLists"`
}

// HNSPart is one part of the HNS state: the objects of its cmdlet
// (Get-HnsNetwork, Get-HnsEndpoint, Get-HnsPolicyList), kept as they came,
// or, when the cmdlet is not on the host or failed, Unread saying so.
type HNSPart struct {
	Objects []json.RawMessage
	Unread  string
}

// UnmarshalJSON reads a part as hns.ps1 writes it: an array of objects,
// or a string.
func (p *HNSPart) UnmarshalJSON(data []byte) error {
	*p = HNSPart{}
	switch t := bytes.TrimSpace(data); {
	case len(t) > 0 && t[0] == '"':
		if err := json.Unmarshal(t, &p.Unread); err != nil {
			return err
		}
		if p.Unread == "" {
			return errors.New("an empty string: the script says why a part is missing")
		}
		return nil
	case len(t) > 0 && t[0] == '[':
		if err := json.Unmarshal(t, &p.Objects); err != nil {
			return err
		}
		for i, o := range p.Objects {
			if o := bytes.TrimSpace(o); len(o) == 0 || o[0] != '{' {
				return fmt.Errorf("item %d is not an object: %.40s", i, o)
			}
		}
		if p.Objects == nil {
			p.Objects = []json.RawMessage{}
		}
		return nil
	}
	return fmt.Errorf("neither a list of objects nor a reason: %.40s", data)
}

// ParseHNS reads what HNSScript printed, strictly: an object of the three
// parts, each a list of objects or why it has none.
func ParseHNS(data []byte) (HNS, error) {
	var h HNS
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return HNS{}, fmt.Errorf("not the HNS state hns.ps1 prints: %w", err)
	}
	if dec.More() {
		return HNS{}, errors.New("not the HNS state hns.ps1 prints: more after its object")
	}
	for _, p := range []struct {
		name string
		part HNSPart
	}{{"networks", h.Networks}, {"endpoints", h.Endpoints}, {"policyLists", h.PolicyLists}} {
		if p.part.Objects == nil && p.part.Unread == "" {
			return HNS{}, fmt.Errorf("not the HNS state hns.ps1 prints: no %s", p.name)
		}
	}
	return h, nil
}

// Unread says, one line each, which parts of the state could not be read
// and why.
func (h HNS) Unread() []string {
	var out []string
	for _, p := range []struct {
		what string
		part HNSPart
	}{{"HNS networks", h.Networks}, {"HNS endpoints", h.Endpoints}, {"HNS policy lists", h.PolicyLists}} {
		if p.part.Unread != "" {
			out = append(out, p.what+": "+p.part.Unread)
		}
	}
	return out
}
