package main

import (
	"strings"
	"testing"
)

// go test -json events of two binaries' runs.
const runNew = `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: Terraform CLI version 1.5.7 is below minimum version 1.14.0: skipping test\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: boom\n"}
{"Action":"fail","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Output":"secrets: 3 keys, none in 10 lines of the suite's TRACE log\n"}
{"Action":"skip","Package":"p","Test":"TestNever"}
{"Action":"fail","Package":"p"}
not json
`

const runOld = `{"Action":"pass","Package":"p","Test":"TestB"}
{"Action":"skip","Package":"p","Test":"TestNever"}
`

func TestConsumeAndReport(t *testing.T) {
	a := &result{bin: "new", version: "Terraform v1.5.7", skipped: map[string]string{}, ran: map[string]bool{}}
	a.consume(strings.NewReader(runNew))
	if a.passed != 1 || a.failed != 1 || a.skips != 2 {
		t.Fatalf("passed %d failed %d skipped %d, want 1 1 2", a.passed, a.failed, a.skips)
	}
	if got := a.skipped["p.TestB"]; !strings.Contains(got, "below minimum version 1.14.0") {
		t.Errorf("skip reason %q", got)
	}
	if len(a.failures) != 1 || !strings.Contains(a.failures[0], "boom") {
		t.Errorf("failures %q", a.failures)
	}
	b := &result{bin: "old", version: "Terraform v1.15.9", skipped: map[string]string{}, ran: map[string]bool{}}
	b.consume(strings.NewReader(runOld))

	var out strings.Builder
	ok := report(&out, []*result{a, b})
	if ok {
		t.Error("a run with a failure reported success")
	}
	text := out.String()
	for _, want := range []string{"Terraform v1.5.7", "FAIL: 1 test(s) skipped on every binary", "p.TestNever", "secrets: 3 keys", "boom"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "  p.TestB\n") {
		t.Errorf("TestB ran on one binary; it must not be listed as never run:\n%s", text)
	}
}
