package hyperv

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/vms"
)

func TestNotes(t *testing.T) {
	spec := vms.Spec{RunID: "nightly-42", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	notes := formatNotes(spec.Tags())
	if want := "winconform-created=2026-01-02T03:04:05Z\r\nwinconform-run=nightly-42"; notes != want {
		t.Errorf("formatNotes = %q, want %q", notes, want)
	}
	if got := parseNotes(notes); !maps.Equal(got, spec.Tags()) {
		t.Errorf("parseNotes(formatNotes) = %v, want %v", got, spec.Tags())
	}
	// A user adds lines of their own, and the keep tag, in Hyper-V
	// Manager; LF line ends, spaces, and a later line of the same name do
	// not change what the tags say.
	edited := "keep for #123: flaky DNS\n" + notes + "\r\n winconform-keep = true \nwinconform-run=other\nnot a tag\n=empty name"
	got := parseNotes(edited)
	if got[vms.TagRun] != "nightly-42" || got[vms.TagKeep] != "true" || got[vms.TagCreated] != "2026-01-02T03:04:05Z" {
		t.Errorf("parseNotes(%q) = %v", edited, got)
	}
	if _, ok := got[""]; ok {
		t.Errorf("parseNotes read an empty name: %v", got)
	}
	if got := parseNotes("copied from a winconform-run=x machine"); len(got) != 0 && got[vms.TagRun] != "" {
		t.Errorf("a line that mentions the tag is read as one: %v", got)
	}
	if strings.Contains(notes, "\n\n") {
		t.Errorf("empty lines in %q", notes)
	}
}

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		id, vm, folder string
		ok             bool
	}{
		{"0F8FAD5B-D9CB-469F-A165-70867728950E", "0f8fad5b-d9cb-469f-a165-70867728950e", "", true},
		{`folder:run-7\win-run-7-2`, "", `run-7\win-run-7-2`, true},
		{`folder:run-7\win-other-2`, "", "", false},   // not a machine of run-7
		{`folder:run-7\..\..\Windows`, "", "", false}, // not a machine folder at all
		{`folder:Run_7\win-Run_7-2`, "", "", false},   // not a run ID
		{`folder:run-7\win-run-7-x`, "", "", false},   // no machine number
		{"dc01", "", "", false},                       // a name is no ID
		{"0f8fad5b-d9cb-469f-a165-70867728950e;x", "", "", false},
	} {
		vm, folder, err := parseID(tc.id)
		if (err == nil) != tc.ok || vm != tc.vm || folder != tc.folder {
			t.Errorf("parseID(%q) = %q, %q, %v; want %q, %q, ok %v", tc.id, vm, folder, err, tc.vm, tc.folder, tc.ok)
		}
	}
}
