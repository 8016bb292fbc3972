package claims

import (
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

var idPattern = regexp.MustCompile(`^[A-Z]+-[0-9]{2}$`)

func TestCatalogueIsWellFormed(t *testing.T) {
	all := All()
	if len(all) != 93 {
		t.Fatalf("catalogue holds %d claims, want 93 (77 from the seeds, 16 from the upstream Windows specs)", len(all))
	}
	if problems := Check(all); len(problems) > 0 {
		t.Fatalf("the catalogue is malformed:\n%s", strings.Join(problems, "\n"))
	}
	kinds := map[Kind]int{}
	levels := map[Level]int{}
	for _, c := range all {
		if !idPattern.MatchString(c.ID) {
			t.Errorf("claim ID %q does not look like AREA-NN", c.ID)
		}
		kinds[c.Kind]++
		levels[c.Level]++
		if got, ok := Get(c.ID); !ok || got.ID != c.ID || got.Title != c.Title || got.Kind != c.Kind {
			t.Errorf("Get(%q) = %+v, %v; want the catalogue entry", c.ID, got, ok)
		}
		if len(c.Documents()) != len(c.Docs) {
			t.Errorf("claim %s: %d of its %d documents resolve", c.ID, len(c.Documents()), len(c.Docs))
		}
	}
	for _, k := range []Kind{Path, Feature, Limit} {
		if kinds[k] == 0 {
			t.Errorf("no claim of kind %s", k)
		}
	}
	// The shared catalogue's evidence column: 18 of the claims can be
	// shown without a Windows node (INF-10, the underlay, among them).
	offWindows := levels[Linux] + levels[API] + levels[Scheduler]
	if offWindows != 18 {
		t.Errorf("%d claims can be shown without Windows (linux %d, api %d, scheduler %d), the shared catalogue says 18", offWindows, levels[Linux], levels[API], levels[Scheduler])
	}
}

// The levels of a few claims, as the shared catalogue's evidence column gives them.
func TestLevelsOfTheSharedCatalogue(t *testing.T) {
	for id, want := range map[string]Level{
		"NET-07": Linux, "NET-01": WindowsNode, "WEB-01": WindowsNode, "SCH-01": Scheduler, "SCH-05": WindowsNode,
		"LIM-01": API, "LIM-07": Linux, "LIM-08": Scheduler, "LIM-09": WindowsNode, "ID-02": Domain, "INF-03": WindowsMachine,
		"SCH-11": API, "SIG-01": API, "NODE-02": WindowsMachine, "RES-02": WindowsNode, "INF-01": Linux, "INF-10": Linux,
	} {
		if got := MustGet(id).Level; got != want {
			t.Errorf("%s: level %s, want %s", id, got, want)
		}
	}
}

func TestCheckNamesTheClaimOfEachProblem(t *testing.T) {
	good := Claim{ID: "NET-99", Kind: Feature, Level: WindowsNode, OSes: win, Title: "t", Docs: []string{"002"}}
	cases := []struct {
		name string
		edit func(*Claim)
		want string
	}{
		{"unknown level", func(c *Claim) { c.Level = "windows-ish" }, `claim NET-99: unknown evidence level "windows-ish"`},
		{"no level", func(c *Claim) { c.Level = "" }, `claim NET-99: unknown evidence level ""`},
		{"unknown OS", func(c *Claim) { c.OSes = []corev1.OSName{"darwin"} }, `claim NET-99: unknown OS "darwin"`},
		{"no OS", func(c *Claim) { c.OSes = nil }, "claim NET-99: names no OS"},
		{"missing document", func(c *Claim) { c.Docs = nil }, "claim NET-99: names no document"},
		{"unknown document", func(c *Claim) { c.Docs = []string{"007"} }, `claim NET-99: unknown document "007"`},
		{"unknown kind", func(c *Claim) { c.Kind = "wish" }, `claim NET-99: unknown kind "wish"`},
		{"bad ID", func(c *Claim) { c.ID = "net-1" }, "claim net-1: the ID does not look like AREA-NN"},
		{"limit without data", func(c *Claim) { c.Kind = Limit }, "claim NET-99: is a limitation without"},
		{"bad version", func(c *Claim) {
			c.Kind = Limit
			c.Limitation = &Limitation{Statement: "s", Era: "e", Why: "w", Holds: Versions{Until: "fourteen"}}
		}, `limitation version "fourteen"`},
		{"path without parts", func(c *Claim) { c.Kind = Path }, "claim NET-99: is a path with no parts"},
		{"Windows level, Linux claim", func(c *Claim) { c.OSes = lin }, "its evidence level windows-node is on Windows"},
		{"unknown need", func(c *Claim) { c.Also = []string{"luck"} }, `claim NET-99: unknown need "luck"`},
		{"no title", func(c *Claim) { c.Title = " " }, "claim NET-99: has no title"},
	}
	if p := Check([]Claim{good}); len(p) > 0 {
		t.Fatalf("the good entry is refused: %v", p)
	}
	for _, tc := range cases {
		c := good
		c.OSes = append([]corev1.OSName(nil), good.OSes...)
		tc.edit(&c)
		problems := strings.Join(Check([]Claim{c}), "\n")
		if !strings.Contains(problems, tc.want) {
			t.Errorf("%s: problems %q, want one containing %q", tc.name, problems, tc.want)
		}
	}
	if p := strings.Join(Check([]Claim{good, good}), "\n"); !strings.Contains(p, "claim NET-99: listed twice") {
		t.Errorf("a repeated ID: %q", p)
	}
}

func TestShows(t *testing.T) {
	cases := []struct {
		claim, got Level
		want       bool
		below      string
	}{
		{Linux, Linux, true, ""},
		{Linux, API, false, "API only"},
		{API, API, true, ""},
		{API, Linux, true, ""},
		{API, Scheduler, true, ""},
		{Scheduler, Scheduler, true, ""},
		{Scheduler, WindowsNode, true, ""},
		{Scheduler, Linux, false, "linux twin"},
		{Scheduler, API, false, "API only"},
		{WindowsNode, WindowsNode, true, ""},
		{WindowsNode, WindowsMachine, true, ""},
		{WindowsNode, Linux, false, "linux twin"},
		{WindowsNode, Scheduler, false, "simulated nodes"},
		{WindowsNode, API, false, "API only"},
		{WindowsMachine, WindowsNode, false, "Windows node, not the machine"},
		{WindowsMachine, WindowsMachine, true, ""},
		{Domain, WindowsNode, false, "Windows node without a domain"},
		{Domain, Domain, true, ""},
		{WindowsNode, "", false, ""},
	}
	for _, c := range cases {
		if got := c.claim.Shows(c.got); got != c.want {
			t.Errorf("%s.Shows(%s) = %v, want %v", c.claim, c.got, got, c.want)
		}
		if c.got != "" {
			if got := c.claim.Below(c.got); got != c.below {
				t.Errorf("%s.Below(%s) = %q, want %q", c.claim, c.got, got, c.below)
			}
		}
	}
}

func TestNeeds(t *testing.T) {
	cases := map[string]map[corev1.OSName]string{
		"NET-01": {corev1.Windows: "windows-node", corev1.Linux: ""},
		"SCH-01": {corev1.Windows: "kwok"},
		"ID-02":  {corev1.Windows: "windows-node active-directory"},
		"INF-05": {corev1.Windows: "inventory disruptive"},
		"NET-26": {corev1.Windows: "windows-node load-balancer", corev1.Linux: "load-balancer"},
		"LIM-01": {corev1.Windows: ""},
		"NET-07": {corev1.Linux: ""},
	}
	for id, byOS := range cases {
		for os, want := range byOS {
			if got := strings.Join(MustGet(id).Needs(os), " "); got != want {
				t.Errorf("%s.Needs(%s) = %q, want %q", id, os, got, want)
			}
		}
	}
}

func TestGet(t *testing.T) {
	c, ok := Get("NET-03")
	if !ok {
		t.Fatal("Get(NET-03) not found")
	}
	if c.ID != "NET-03" || c.Kind != Path || !strings.Contains(c.Title, "Linux pod by its IP") {
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
	want := "CFG HPC ID INF LIM NET NODE OBS RES SCH SIG VOL WEB"
	if got := strings.Join(areas, " "); got != want {
		t.Errorf("areas in All() order = %q, want %q", got, want)
	}
	// Within NET, numbers run 1..28 without gaps.
	var nets []string
	for _, c := range all {
		if c.Area() == "NET" {
			nets = append(nets, c.ID)
		}
	}
	if len(nets) != 28 || nets[0] != "NET-01" || nets[8] != "NET-09" || nets[9] != "NET-10" || nets[27] != "NET-28" {
		t.Errorf("NET claims in order: %v", nets)
	}
}

func TestAllReturnsACopy(t *testing.T) {
	a := All()
	a[0].ID = "CHANGED-01"
	a[0].Title = "changed"
	b := All()
	if b[0].ID == "CHANGED-01" || b[0].Title == "changed" {
		t.Errorf("mutating All()'s result changed the catalogue: %+v", b[0])
	}
	if _, ok := Get("CHANGED-01"); ok {
		t.Error("mutating All()'s result changed Get")
	}
}
