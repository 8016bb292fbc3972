package skips_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/winconform/winconform/framework/skips"
)

// A tiny Ginkgo suite: each spec calls skips.Skip; the report Ginkgo hands
// to ReportAfterSuite is checked in TestSkip.
var report types.Report

var _ = ginkgo.Describe("skips", func() {
	ginkgo.It("without detail", func() {
		skips.Skip(skips.NoWindowsNode)
		panic("skips.Skip returned")
	})
	ginkgo.It("with detail", func() {
		skips.Skip(skips.TooFewNodes, "needs 2 Ready windows nodes with a kubelet, found 1")
		panic("skips.Skip returned")
	})
	ginkgo.It("runs normally", func() {})
})

var _ = ginkgo.ReportAfterSuite("capture", func(r ginkgo.Report) { report = r })

func TestSkip(t *testing.T) {
	if f := flag.Lookup("test.count"); f != nil && f.Value.String() != "1" {
		t.Skip("Ginkgo refuses to run a suite under go test -count > 1; run with -count=1")
	}
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	reporterConfig.Succinct = true
	if !ginkgo.RunSpecs(t, "skips", suiteConfig, reporterConfig) {
		t.Fatal("the suite failed: a skip must not fail a spec")
	}
	byText := map[string]types.SpecReport{}
	for _, sr := range report.SpecReports {
		if sr.LeafNodeType == types.NodeTypeIt {
			byText[sr.LeafNodeText] = sr
		}
	}
	cases := []struct {
		text, msg, key string
	}{
		{"without detail", "no Windows node in this cluster", "no-windows-node"},
		{"with detail", "the cluster has too few schedulable nodes of that OS: needs 2 Ready windows nodes with a kubelet, found 1", "too-few-nodes"},
	}
	for _, c := range cases {
		sr, ok := byText[c.text]
		if !ok {
			t.Fatalf("no report for spec %q", c.text)
		}
		if sr.State != types.SpecStateSkipped {
			t.Errorf("%s: state %v, want skipped", c.text, sr.State)
		}
		if sr.Failure.Message != c.msg {
			t.Errorf("%s: message %q, want %q", c.text, sr.Failure.Message, c.msg)
		}
		// The skip is attributed to the spec that called skips.Skip, not to skips.go.
		if strings.HasSuffix(sr.Failure.Location.FileName, "skips.go") || !strings.HasSuffix(sr.Failure.Location.FileName, "skips_test.go") {
			t.Errorf("%s: skip located at %s, want the caller in skips_test.go", c.text, sr.Failure.Location)
		}
		var entries []types.ReportEntry
		for _, e := range sr.ReportEntries {
			if e.Name == skips.EntryName {
				entries = append(entries, e)
			}
		}
		if len(entries) != 1 {
			t.Fatalf("%s: %d %s entries, want 1", c.text, len(entries), skips.EntryName)
		}
		if got := entries[0].StringRepresentation(); got != c.key {
			t.Errorf("%s: entry value %q, want %q", c.text, got, c.key)
		}
		if entries[0].Visibility != types.ReportEntryVisibilityNever {
			t.Errorf("%s: entry visibility %v, want never (kept out of the console)", c.text, entries[0].Visibility)
		}
	}
	if sr := byText["runs normally"]; sr.State != types.SpecStatePassed || len(sr.ReportEntries) != 0 {
		t.Errorf("a spec that does not skip: state %v entries %v", sr.State, sr.ReportEntries)
	}
}

func TestReasonKeysAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range []skips.Reason{
		skips.NoWindowsNode, skips.SimulatedOnly, skips.TooFewNodes, skips.NoLoadBalancer,
		skips.NoActiveDirectory, skips.NoInventory, skips.ManagedControlPlane, skips.NoVMs,
	} {
		if r.Key == "" || r.Text == "" || strings.ContainsAny(r.Key, " \t|") {
			t.Errorf("reason %+v: keys must be non-empty single words and have a text", r)
		}
		if seen[r.Key] {
			t.Errorf("reason key %q used twice", r.Key)
		}
		seen[r.Key] = true
	}
}
