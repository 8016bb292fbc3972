// Package policy reads a release gate's policy (config.GatePolicy: which
// claims a run must show and on what evidence, what the other outcomes do,
// which known issues are accepted until when) and checks it against the
// claim catalogue (framework/claims): its claims, areas, labels and levels.
package policy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/framework/claims"
)

// Load reads, defaults and validates the policy file at path (config.Load),
// then checks it against the claim catalogue: every problem is in the one
// error, each naming the file, the line, the field and the fix.
func Load(path string) (*config.GatePolicy, error) {
	return config.Load[config.GatePolicy](path, nil, check)
}

// Parse is Load for data read from path.
func Parse(path string, data []byte) (*config.GatePolicy, error) {
	return config.Parse[config.GatePolicy](path, data, nil, check)
}

// Validate returns every problem of a policy built in Go (or by an older
// winconform), as Load would find them; a policy Load or Parse returned
// has none.
func Validate(p *config.GatePolicy) field.ErrorList { return append(p.Validate(), check(p)...) }

// check checks a policy's claims, areas, labels and levels against the
// catalogue, and gives cluster.windowsNodes, when unset, what the required
// claims need on Windows (WindowsNodes).
func check(p *config.GatePolicy) field.ErrorList {
	var errs field.ErrorList
	cp := field.NewPath("cluster", "windowsNodes")
	if need, who := WindowsNodes(p); p.Cluster.WindowsNodes == 0 {
		p.Cluster.WindowsNodes = need
	} else if p.Cluster.WindowsNodes < need {
		errs = append(errs, config.Invalid(cp, fmt.Sprintf("%s needs %d real Windows nodes to be shown on Windows", who, need),
			fmt.Sprintf("set at least %d, or leave the field out (it then takes what the required claims need), or drop %s from required: (except:)", need, who)))
	}
	for i, r := range p.Required {
		errs = append(errs, validate(r, field.NewPath("required").Index(i))...)
	}
	for i, k := range p.KnownIssues {
		if k.Claim != "" {
			errs = append(errs, checkClaim(field.NewPath("knownIssues").Index(i).Child("claim"), k.Claim)...)
		}
	}
	return errs
}

func validate(r config.Requirement, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, id := range r.Claims {
		errs = append(errs, checkClaim(path.Child("claims").Index(i), id)...)
	}
	for i, id := range r.Except {
		errs = append(errs, checkClaim(path.Child("except").Index(i), id)...)
	}
	for i, a := range r.Areas {
		if e := config.OneOf(path.Child("areas").Index(i), a, Areas()); e != nil {
			errs = append(errs, e)
		}
	}
	for i, l := range r.Labels {
		if msg, fix := checkLabel(l); msg != "" {
			errs = append(errs, config.Invalid(path.Child("labels").Index(i), msg, fix))
		}
	}
	level := claims.Level(r.Level)
	if r.Level != "" && !level.Valid() {
		levels := make([]string, len(claims.Levels))
		for i, l := range claims.Levels {
			levels[i] = string(l)
		}
		return append(errs, config.OneOf(path.Child("level"), r.Level, levels))
	}
	if len(errs) > 0 || len(r.Claims)+len(r.Areas)+len(r.Labels) == 0 {
		return errs
	}
	if len(selected(r)) == 0 {
		return field.ErrorList{config.Invalid(path, "selects no claim of the catalogue ("+describe(r)+"): its selectors contradict each other, or except: removes every claim they select",
			"fix its selectors (`winconform list` shows the claims and their labels) or drop it: a requirement that requires nothing cannot gate")}
	}
	// A claim that no evidence could show at Level makes the requirement
	// impossible to meet: say which.
	if r.Level != "" {
		var never []string
		for _, c := range claims.All() {
			if Selects(r, c) && !Reachable(c.Level, level) {
				never = append(never, c.ID)
			}
		}
		if len(never) > 0 {
			errs = append(errs, config.Invalid(path.Child("level"),
				fmt.Sprintf("%s can never be shown at %s (no evidence level shows both: their own level and %s)", strings.Join(never, ", "), r.Level, r.Level),
				"list them under except:, or lower the level"))
		}
	}
	return errs
}

func checkClaim(path *field.Path, id string) field.ErrorList {
	if _, ok := claims.Get(id); ok {
		return nil
	}
	return field.ErrorList{config.Invalid(path, config.Quote(id)+" is not a claim of the catalogue", "use an ID that `winconform list` shows (AREA-NN, such as NET-01)")}
}

// Reachable says whether some evidence level shows both a claim of level
// claim and the requirement req.
func Reachable(claim, req claims.Level) bool {
	for _, l := range claims.Levels {
		if claim.Shows(l) && req.Shows(l) {
			return true
		}
	}
	return false
}

// Areas lists the catalogue's areas.
func Areas() []string {
	var out []string
	for _, c := range claims.All() {
		if !slices.Contains(out, c.Area()) {
			out = append(out, c.Area())
		}
	}
	sort.Strings(out)
	return out
}

// Label prefixes a policy may select claims by.
var labelPrefixes = []string{"os:", "level:", "kind:", "needs:"}

// Labels are the labels of claim c, from its catalogue entry: os:<os> for
// each OS it is about, level:<its evidence level>, kind:<path|feature|limit>,
// needs:<what> for what a spec of it needs on any of its OSes.
func Labels(c claims.Claim) []string {
	var out []string
	for _, os := range c.OSes {
		out = append(out, "os:"+string(os))
	}
	out = append(out, "level:"+string(c.Level), "kind:"+string(c.Kind))
	for _, os := range c.OSes {
		for _, n := range c.Needs(os) {
			if !slices.Contains(out, "needs:"+n) {
				out = append(out, "needs:"+n)
			}
		}
	}
	return out
}

// checkLabel says what is wrong with a label of a requirement, and the fix.
func checkLabel(l string) (msg, fix string) {
	bare := strings.TrimPrefix(l, "!")
	prefix, value, ok := strings.Cut(bare, ":")
	if !ok || !slices.Contains(labelPrefixes, prefix+":") {
		return config.Quote(l) + " is an unknown label", "write os:linux|windows, level:<evidence level>, kind:path|feature|limit or needs:<what> (a leading ! for \"not\")"
	}
	var allowed []string
	switch prefix {
	case "os":
		allowed = []string{"linux", "windows"}
	case "level":
		for _, lv := range claims.Levels {
			allowed = append(allowed, string(lv))
		}
	case "kind":
		allowed = []string{string(claims.Path), string(claims.Feature), string(claims.Limit)}
	case "needs":
		allowed = claims.Needs
	}
	if !slices.Contains(allowed, value) {
		return fmt.Sprintf("%s: %s is not a value of %s", config.Quote(l), config.Quote(value), prefix+":"), config.DidYouMean(value, allowed) + "use one of " + strings.Join(allowed, ", ")
	}
	return "", ""
}

// selected lists the catalogue's claims the requirement selects.
func selected(r config.Requirement) []claims.Claim {
	var out []claims.Claim
	for _, c := range claims.All() {
		if Selects(r, c) {
			out = append(out, c)
		}
	}
	return out
}

// describe is the requirement's selectors in a line, for its problems.
func describe(r config.Requirement) string {
	var parts []string
	for _, f := range []struct {
		name string
		v    []string
	}{{"claims", r.Claims}, {"areas", r.Areas}, {"labels", r.Labels}, {"except", r.Except}} {
		if len(f.v) > 0 {
			parts = append(parts, f.name+": ["+strings.Join(f.v, ", ")+"]")
		}
	}
	return strings.Join(parts, ", ")
}

// WindowsNodes is how many real Windows nodes the policy's required claims
// need to be shown on Windows (a claim required on Windows needs one, a
// path between Windows pods on two nodes two: claims.Claim.WindowsNodes),
// and the first claim that needs that many ("" when none needs any).
func WindowsNodes(p *config.GatePolicy) (int, string) {
	need, who := 0, ""
	for _, c := range claims.All() {
		onWindows := c.Level.OnWindows()
		for _, r := range p.Required {
			if Selects(r, c) && (onWindows || claims.Level(r.Level).OnWindows()) {
				if n := c.WindowsNodes(); n > need {
					need, who = n, c.ID
				}
			}
		}
	}
	return need, who
}

// Selects says whether the requirement r selects claim c.
func Selects(r config.Requirement, c claims.Claim) bool {
	if slices.Contains(r.Except, c.ID) {
		return false
	}
	if len(r.Claims) > 0 && !slices.Contains(r.Claims, c.ID) {
		return false
	}
	if len(r.Areas) > 0 && !slices.Contains(r.Areas, c.Area()) {
		return false
	}
	have := Labels(c)
	for _, l := range r.Labels {
		if neg, ok := strings.CutPrefix(l, "!"); ok {
			if slices.Contains(have, neg) {
				return false
			}
		} else if !slices.Contains(have, l) {
			return false
		}
	}
	return true
}
