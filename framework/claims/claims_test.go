package claims

import (
	"regexp"
	"strings"
	"testing"
)

var idPattern = regexp.MustCompile(`^[A-Z]+-[0-9]{2}$`)

func TestCatalogueIsWellFormed(t *testing.T) {
	all := All()
	if len(all) != 75 {
		t.Fatalf("catalogue holds %d claims, want 75 (reports print \"of 75 claims\")", len(all))
	}
	seen := map[string]bool{}
	kinds := map[Kind]int{}
	for _, c := range all {
		if !idPattern.MatchString(c.ID) {
			t.Errorf("claim ID %q does not look like AREA-NN", c.ID)
		}
		if seen[c.ID] {
			t.Errorf("claim %s listed twice", c.ID)
		}
		seen[c.ID] = true
		switch c.Kind {
		case Path, Feature, Limit:
			kinds[c.Kind]++
		default:
			t.Errorf("claim %s has unknown kind %q", c.ID, c.Kind)
		}
		if strings.TrimSpace(c.Text) == "" {
			t.Errorf("claim %s has no text", c.ID)
		}
		if len(c.Seeds) == 0 {
			t.Errorf("claim %s names no source document", c.ID)
		}
		if got, ok := Get(c.ID); !ok || got.ID != c.ID || got.Text != c.Text || got.Kind != c.Kind {
			t.Errorf("Get(%q) = %+v, %v; want the catalogue entry", c.ID, got, ok)
		}
	}
	for _, k := range []Kind{Path, Feature, Limit} {
		if kinds[k] == 0 {
			t.Errorf("no claim of kind %s", k)
		}
	}
}

func TestGet(t *testing.T) {
	c, ok := Get("NET-03")
	if !ok {
		t.Fatal("Get(NET-03) not found")
	}
	if c.ID != "NET-03" || c.Kind != Path || !strings.Contains(c.Text, "Linux pod by its IP") {
		t.Errorf("Get(NET-03) = %+v", c)
	}
	if c.Area() != "NET" {
		t.Errorf("Area() = %q, want NET", c.Area())
	}
	lim, ok := Get("LIM-07")
	if !ok || lim.Kind != Limit || lim.Area() != "LIM" {
		t.Errorf("Get(LIM-07) = %+v, %v; want a LIM limit", lim, ok)
	}
	for _, id := range []string{"", "NET-3", "net-03", "NET-99", "NET", "NET-03 ", "XYZ-01"} {
		if c, ok := Get(id); ok {
			t.Errorf("Get(%q) = %+v, want not found (IDs are exact)", id, c)
		}
	}
}

func TestArea(t *testing.T) {
	for id, want := range map[string]string{"NET-01": "NET", "ID-02": "ID", "NOAREA": "NOAREA", "A-B-C": "A"} {
		if got := (Claim{ID: id}).Area(); got != want {
			t.Errorf("Claim{ID:%q}.Area() = %q, want %q", id, got, want)
		}
	}
}

func TestLess(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"NET-9", "NET-10", true},
		{"NET-10", "NET-9", false},
		{"NET-09", "NET-10", true},
		{"NET-2", "NET-10", true}, // lexically "NET-2" > "NET-10"
		{"NET-01", "NET-01", false},
		{"NET-27", "WEB-01", true}, // area first
		{"WEB-01", "NET-27", false},
		{"CFG-05", "NET-01", true},
		{"ID-02", "INF-01", true},
		{"INF-09", "ID-01", false},
		{"VOL-07", "VOL-06", false},
	}
	for _, c := range cases {
		if got := Less(c.a, c.b); got != c.want {
			t.Errorf("Less(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// All orders by Less, so a catalogue written out of order (and with numbers
// of different widths) comes back grouped by area and numbered numerically.
func TestAllSortsNumericallyWithinArea(t *testing.T) {
	saved := catalogue
	t.Cleanup(func() { catalogue = saved })
	catalogue = []Claim{
		{ID: "NET-10"}, {ID: "WEB-1"}, {ID: "NET-9"}, {ID: "CFG-2"}, {ID: "NET-2"}, {ID: "CFG-1"}, {ID: "NET-100"},
	}
	var got []string
	for _, c := range All() {
		got = append(got, c.ID)
	}
	want := []string{"CFG-1", "CFG-2", "NET-2", "NET-9", "NET-10", "NET-100", "WEB-1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("All() = %v, want %v", got, want)
	}
}

func TestAllOrderOfRealCatalogue(t *testing.T) {
	all := All()
	for i := 1; i < len(all); i++ {
		if !Less(all[i-1].ID, all[i].ID) {
			t.Errorf("All()[%d]=%s is not before All()[%d]=%s", i-1, all[i-1].ID, i, all[i].ID)
		}
	}
	// Areas are contiguous and in alphabetical order.
	var areas []string
	for _, c := range all {
		if len(areas) == 0 || areas[len(areas)-1] != c.Area() {
			areas = append(areas, c.Area())
		}
	}
	want := "CFG ID INF LIM NET OBS SCH VOL WEB"
	if got := strings.Join(areas, " "); got != want {
		t.Errorf("areas in All() order = %q, want %q", got, want)
	}
	// Within NET, numbers run 1..27 without gaps.
	var nets []string
	for _, c := range all {
		if c.Area() == "NET" {
			nets = append(nets, c.ID)
		}
	}
	if len(nets) != 27 || nets[0] != "NET-01" || nets[8] != "NET-09" || nets[9] != "NET-10" || nets[26] != "NET-27" {
		t.Errorf("NET claims in order: %v", nets)
	}
}

func TestAllReturnsACopy(t *testing.T) {
	a := All()
	a[0].ID = "CHANGED-01"
	a[0].Text = "changed"
	b := All()
	if b[0].ID == "CHANGED-01" || b[0].Text == "changed" {
		t.Errorf("mutating All()'s result changed the catalogue: %+v", b[0])
	}
	if _, ok := Get("CHANGED-01"); ok {
		t.Error("mutating All()'s result changed Get")
	}
}
