package probeclient

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	targets := []string{"tcp://10.0.0.1:8081", "dns://web.ns"}
	out := `{"index":0,"target":"tcp://10.0.0.1:8081","ok":true,"latencyMs":1.5,"errorClass":"","error":"","attempts":1,"detail":{"remote":"10.0.0.1:8081"}}
{"index":1,"target":"dns://web.ns","ok":false,"latencyMs":3,"errorClass":"dns","error":"no such host","attempts":2,"detail":{}}
`
	rs, err := Parse(out, targets)
	if err != nil {
		t.Fatal(err)
	}
	if !rs[0].OK || rs[0].Detail.Remote != "10.0.0.1:8081" || rs[1].OK || rs[1].ErrorClass != "dns" || rs[1].Attempts != 2 {
		t.Fatalf("unexpected results: %+v", rs)
	}
	if got := rs[1].Describe(); got != "dns://web.ns failed (dns): no such host" {
		t.Errorf("Describe = %q", got)
	}
}

func TestParseRejectsMissingOrReordered(t *testing.T) {
	one := `{"index":0,"target":"a","ok":true}`
	if _, err := Parse(one, []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "1 of 2") {
		t.Errorf("missing line: err = %v", err)
	}
	swapped := `{"index":0,"target":"b","ok":true}
{"index":1,"target":"a","ok":true}`
	if _, err := Parse(swapped, []string{"a", "b"}); err == nil {
		t.Error("reordered lines were accepted")
	}
	if _, err := Parse("not json", []string{"a"}); err == nil {
		t.Error("garbage was accepted")
	}
}
