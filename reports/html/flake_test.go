package html_test

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
	xhtml "golang.org/x/net/html"

	"github.com/winconform/winconform/reports/html"
	"github.com/winconform/winconform/testing/reporttest"
)

// A spec that passed on its retry is listed apart, "passed on attempt 2",
// with its first attempt's failure (escaped); a spec that failed on every
// attempt stays among the failures, and no other spec is called flaky.
func TestFlakyShowsItsFirstFailure(t *testing.T) {
	r := reporttest.Linux()
	r.Set("NET-07", reporttest.Spec{Name: "flaky pod to pod", Attempts: 2, FirstFailure: "dial <tcp> 10.0.0.7:80: i/o timeout",
		Evidence: []reporttest.Ev{reporttest.OnLinux()}})
	r.Set("NET-08", reporttest.Spec{Name: "failing pod to service", Attempts: 2, State: types.SpecStateFailed, Message: "no endpoints",
		Evidence: []reporttest.Ev{reporttest.OnLinux()}})
	dir := r.Write(t)
	if err := html.WriteHTML(dir); err != nil {
		t.Fatal(err)
	}
	doc := parse(t, dir)
	var flaky, failures []string
	walk(doc, func(n *xhtml.Node) {
		if n.Type != xhtml.ElementNode || n.Data != "div" {
			return
		}
		switch c, _ := attr(n, "class"); c {
		case "failure flaky":
			flaky = append(flaky, text(n))
		case "failure":
			failures = append(failures, text(n))
		}
	})
	if len(flaky) != 1 {
		t.Fatalf("%d flaky specs shown, want 1: %q", len(flaky), flaky)
	}
	for _, want := range []string{"[synthetic] flaky pod to pod", "passed on attempt 2", "attempt 1 failed at suites/networking/retry.go:42", "dial <tcp> 10.0.0.7:80: i/o timeout"} {
		if !strings.Contains(flaky[0], want) {
			t.Errorf("the flaky spec's box lacks %q: %q", want, flaky[0])
		}
	}
	if len(failures) != 1 || !strings.Contains(failures[0], "failing pod to service") {
		t.Errorf("the failures: %q, want the spec that failed on every attempt", failures)
	}
}
