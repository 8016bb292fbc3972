package winrelease

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	for _, s := range []string{"10.0.17763", "10.0.20348", "10.0.26100", "10.0.99999"} {
		b, err := ParseBuild(s)
		if err != nil || b.String() != s {
			t.Errorf("ParseBuild(%q) = %v, %v", s, b, err)
		}
		if !b.Supported() {
			t.Errorf("%s not supported", b)
		}
	}
	for _, s := range []string{"", "10.0", "10.0.2034", "10.0.020348", "6.3.9600", "10.1.20348", "10.0.20348.1", " 10.0.20348", "ltsc2022"} {
		if b, err := ParseBuild(s); err == nil {
			t.Errorf("ParseBuild(%q) = %v, want an error", s, b)
		} else if !strings.Contains(err.Error(), "of the form 10.0.NNNNN") {
			t.Errorf("ParseBuild(%q): %v", s, err)
		}
	}
	old, _ := ParseBuild("10.0.14393")
	if old.Supported() || old.ReleaseName() != "" {
		t.Errorf("10.0.14393: supported %v, release %q", old.Supported(), old.ReleaseName())
	}
	ws2019, ws2022 := Build{10, 0, 17763}, Build{10, 0, 20348}
	if ws2019.Compare(ws2022) != -1 || ws2022.Compare(ws2019) != 1 || ws2022.Compare(ws2022) != 0 || (Build{11, 0, 1}).Compare(ws2022) != 1 {
		t.Error("Compare")
	}
	if Oldest() != ws2019 {
		t.Errorf("oldest = %v", Oldest())
	}
	names := map[string]string{}
	for _, r := range Releases() {
		names[r.Build.String()] = r.Name
		if got, ok := r.Build.Release(); !ok || !reflect.DeepEqual(got, r) {
			t.Errorf("%v.Release() = %v, %v", r.Build, got, ok)
		}
		if got, ok := Named(r.Name); !ok || !reflect.DeepEqual(got, r) {
			t.Errorf("Named(%q) = %v, %v", r.Name, got, ok)
		}
	}
	if !reflect.DeepEqual(names, map[string]string{"10.0.17763": "ltsc2019", "10.0.20348": "ltsc2022", "10.0.26100": "ltsc2025"}) {
		t.Errorf("releases = %v", names)
	}
	if _, ok := Named("ltsc2016"); ok {
		t.Error("Named(ltsc2016) found")
	}
	Releases()[0].Name = "changed"
	if Releases()[0].Name != "ltsc2019" {
		t.Error("Releases shares its table")
	}
	var b Build
	if !b.IsZero() || b.ReleaseName() != "" {
		t.Error("zero Build")
	}
	out, err := json.Marshal(struct{ B Build }{ws2022})
	if err != nil || string(out) != `{"B":"10.0.20348"}` {
		t.Errorf("json: %s, %v", out, err)
	}
	if err := json.Unmarshal([]byte(`"10.0.26100"`), &b); err != nil || b.ReleaseName() != "ltsc2025" {
		t.Errorf("unmarshal: %v, %v", b, err)
	}
	if err := json.Unmarshal([]byte(`"2025"`), &b); err == nil {
		t.Error("unmarshal of 2025: no error")
	}
}

func TestParse(t *testing.T) {
	for s, want := range map[string]Version{
		"10.0.20348":      {Build: Build{10, 0, 20348}},
		"10.0.20348.2340": {Build: Build{10, 0, 20348}, Revision: 2340, HasRevision: true},
		"10.0.14393.0":    {Build: Build{10, 0, 14393}, HasRevision: true},
		"6.3.9600":        {Build: Build{6, 3, 9600}},
	} {
		got, err := Parse(s)
		if err != nil || got != want || got.String() != s {
			t.Errorf("Parse(%q) = %+v (%s), %v; want %+v", s, got, got, err, want)
		}
	}
	for _, s := range []string{"", "10.0", "ten.0.1", "10.0.20348.1.2", "10.0.20348 ", "Windows 10", "10.0.-1", "10.0.1234567890"} {
		if v, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", s, v)
		} else if !strings.Contains(err.Error(), "10.0.20348.2340") {
			t.Errorf("Parse(%q): %v does not show the form", s, err)
		}
	}
}

func TestTable(t *testing.T) {
	if got := List(); got != "10.0.17763 (ltsc2019), 10.0.20348 (ltsc2022) or 10.0.26100 (ltsc2025)" {
		t.Errorf("List() = %q", got)
	}
	rs := Releases()
	for i, r := range rs {
		if r.Product == "" || r.NanoserverTag == "" || r.ServercoreTag == "" || r.Revision <= 0 {
			t.Errorf("%s: incomplete %+v", r.Name, r)
		}
		if !strings.HasSuffix(r.Product, strings.TrimPrefix(r.Name, "ltsc")) {
			t.Errorf("%s is not %s", r.Name, r.Product)
		}
		if !r.MainstreamEnd.Before(r.ExtendedEnd) {
			t.Errorf("%s: mainstream support ends %v, after extended support %v", r.Name, r.MainstreamEnd, r.ExtendedEnd)
		}
		if i > 0 && (r.Build.Compare(rs[i-1].Build) <= 0 || !r.ExtendedEnd.After(rs[i-1].ExtendedEnd)) {
			t.Errorf("%s is not newer than %s", r.Name, rs[i-1].Name)
		}
	}
}
