package html_test

import (
	"regexp"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"

	"github.com/winconform/winconform/reports/html"
	"github.com/winconform/winconform/testing/flakerun"
)

func TestFlakeChild(t *testing.T) { flakerun.Child(t) }

// report.html of a real Ginkgo run with a flake: the flake's box and its
// claim's row (beside the claim's pass) show its first failure.
func TestReportShowsARealFlakesFirstFailure(t *testing.T) {
	dir := flakerun.Run(t, "TestFlakeChild")
	if err := html.WriteHTML(dir); err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile(`passed on attempt 2.*attempt 1 failed at \S*testing/flakerun/flakerun\.go:\d+.*dial tcp 10\.0\.0\.7:80: i/o timeout`)
	var flaky []string
	var row string
	walk(parse(t, dir), func(n *xhtml.Node) {
		if n.Type != xhtml.ElementNode {
			return
		}
		if c, _ := attr(n, "class"); n.Data == "div" && c == "failure flaky" {
			flaky = append(flaky, strings.Join(strings.Fields(text(n)), " "))
		}
		if id, _ := attr(n, "id"); n.Data == "tr" && id == "claim-NET-07" {
			row = strings.Join(strings.Fields(text(n)), " ")
		}
	})
	if len(flaky) != 1 || !strings.Contains(flaky[0], flakerun.Flaky) || !first.MatchString(flaky[0]) {
		t.Errorf("the flaky specs' boxes: %q", flaky)
	}
	if !strings.Contains(row, "shown") || !strings.Contains(row, "passed only on a retry: "+flakerun.Flaky) || !first.MatchString(row) {
		t.Errorf("NET-07's row lacks its flake's first failure: %q", row)
	}
}
