package main

import (
	"strings"
	"testing"
	"time"
)

// A transcript of go test -json: package b passes, a has a failed test
// (with a passing and a failed subtest) and a skipped one, c has no tests, d panics in
// its TestMain, e does not build.
const transcript = `{"Action":"start","Package":"m/a"}
{"Action":"start","Package":"m/b"}
{"Action":"run","Package":"m/a","Test":"TestSlow"}
{"Action":"output","Package":"m/a","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"run","Package":"m/b","Test":"TestB"}
{"Action":"output","Package":"m/b","Test":"TestB","Output":"=== RUN   TestB\n"}
{"Action":"output","Package":"m/b","Test":"TestB","Output":"--- PASS: TestB (0.00s)\n"}
{"Action":"pass","Package":"m/b","Test":"TestB"}
{"Action":"output","Package":"m/b","Output":"PASS\n"}
{"Action":"output","Package":"m/b","Output":"ok  \tm/b\t0.01s\n"}
{"Action":"pass","Package":"m/b"}
{"Action":"run","Package":"m/a","Test":"TestSlow/sub"}
{"Action":"output","Package":"m/a","Test":"TestSlow/sub","Output":"=== RUN   TestSlow/sub\n"}
{"Action":"output","Package":"m/a","Test":"TestSlow/sub","Output":"    --- PASS: TestSlow/sub (0.00s)\n"}
{"Action":"pass","Package":"m/a","Test":"TestSlow/sub"}
{"Action":"run","Package":"m/a","Test":"TestSlow/bad"}
{"Action":"output","Package":"m/a","Test":"TestSlow/bad","Output":"=== RUN   TestSlow/bad\n"}
{"Action":"output","Package":"m/a","Test":"TestSlow/bad","Output":"    a_test.go:7: bad\n"}
{"Action":"output","Package":"m/a","Test":"TestSlow/bad","Output":"    --- FAIL: TestSlow/bad (0.00s)\n"}
{"Action":"fail","Package":"m/a","Test":"TestSlow/bad"}
{"Action":"output","Package":"m/a","Test":"TestSlow","Output":"    a_test.go:9: boom\n"}
{"Action":"output","Package":"m/a","Test":"TestSlow","Output":"--- FAIL: TestSlow (1.00s)\n"}
{"Action":"fail","Package":"m/a","Test":"TestSlow"}
{"Action":"run","Package":"m/a","Test":"TestSkip"}
{"Action":"output","Package":"m/a","Test":"TestSkip","Output":"--- SKIP: TestSkip (0.00s)\n"}
{"Action":"skip","Package":"m/a","Test":"TestSkip"}
{"Action":"output","Package":"m/a","Output":"FAIL\n"}
{"Action":"output","Package":"m/a","Output":"FAIL\tm/a\t1.02s\n"}
{"Action":"fail","Package":"m/a"}
{"Action":"start","Package":"m/c"}
{"Action":"output","Package":"m/c","Output":"?   \tm/c\t[no test files]\n"}
{"Action":"skip","Package":"m/c"}
{"Action":"start","Package":"m/d"}
{"Action":"output","Package":"m/d","Output":"FAIL: preparing the Terraform CLI: boom\n"}
{"Action":"output","Package":"m/d","Output":"FAIL\tm/d\t0.01s\n"}
{"Action":"fail","Package":"m/d"}
{"ImportPath":"m/e [m/e.test]","Action":"build-output","Output":"# m/e [m/e.test]\n"}
{"ImportPath":"m/e [m/e.test]","Action":"build-output","Output":"e/e_test.go:3:1: syntax error\n"}
{"ImportPath":"m/e [m/e.test]","Action":"build-fail"}
{"Action":"start","Package":"m/e"}
{"Action":"output","Package":"m/e","Output":"FAIL\tm/e [build failed]\n"}
{"Action":"fail","Package":"m/e"}
go: a line that is not an event
`

func run(t *testing.T, verbose bool, in string) (string, *printer) {
	t.Helper()
	var out strings.Builder
	p := newPrinter(&out, verbose)
	if err := p.consume(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	return out.String(), p
}

// Without -v: what go test prints without it, package lines in the order
// the packages end.
func TestPrintsWhatGoTestPrints(t *testing.T) {
	t.Parallel()
	out, p := run(t, false, transcript)
	want := "ok  \tm/b\t0.01s\n" +
		"    a_test.go:7: bad\n    --- FAIL: TestSlow/bad (0.00s)\n    a_test.go:9: boom\n--- FAIL: TestSlow (1.00s)\n" +
		"FAIL\n" +
		"FAIL\tm/a\t1.02s\n" +
		"?   \tm/c\t[no test files]\n" +
		"FAIL: preparing the Terraform CLI: boom\n" +
		"FAIL\tm/d\t0.01s\n" +
		"# m/e [m/e.test]\ne/e_test.go:3:1: syntax error\n" +
		"FAIL\tm/e [build failed]\n" +
		"go: a line that is not an event\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if !p.failed {
		t.Error("a failed package did not fail the command")
	}
}

// With -v: every line as it comes, which is what make test's callers grep
// (.ci/run: ^ok, ^FAIL, --- FAIL, --- PASS).
func TestVerbosePrintsEveryLine(t *testing.T) {
	t.Parallel()
	out, _ := run(t, true, transcript)
	for _, want := range []string{"=== RUN   TestSlow\n", "--- PASS: TestB (0.00s)\n", "    --- PASS: TestSlow/sub (0.00s)\n",
		"--- FAIL: TestSlow (1.00s)\n", "    --- FAIL: TestSlow/bad (0.00s)\n", "--- SKIP: TestSkip", "ok  \tm/b\t0.01s\n", "FAIL\tm/a\t1.02s\n", "e/e_test.go:3:1: syntax error\n"} {
		if strings.Count(out, want) != 1 {
			t.Errorf("-v printed %q %d times:\n%s", want, strings.Count(out, want), out)
		}
	}
}

// A passing run exits 0.
func TestPassingRunPasses(t *testing.T) {
	t.Parallel()
	_, p := run(t, false, strings.Join(strings.Split(transcript, "\n")[:11], "\n"))
	if p.failed {
		t.Error("a passing run failed")
	}
}

// While a package runs quiet past the interval, a line says how far it
// got; a package that just started, or output that came lately, prints
// none.
func TestProgressOfALongPackage(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := newPrinter(&out, false)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	p.now = func() time.Time { return now }
	p.lastWrite = start
	lines := strings.Split(transcript, "\n")
	// m/a's first test runs; m/b passes.
	if err := p.consume(strings.NewReader(strings.Join(lines[:11], "\n"))); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	now = start.Add(10 * time.Second)
	p.progress(20 * time.Second)
	if out.Len() != 0 {
		t.Fatalf("progress after 10s: %q", out.String())
	}
	for i, test := range []string{"TestD", "TestB", "TestC", "TestA", "TestE", "TestF"} {
		now = start.Add(time.Duration(60+i) * time.Second)
		_ = p.consume(strings.NewReader(`{"Action":"run","Package":"m/a","Test":"` + test + `"}`))
	}
	_ = p.consume(strings.NewReader(`{"Action":"skip","Package":"m/a","Test":"TestC"}` + "\n" +
		`{"Action":"pause","Package":"m/a","Test":"TestE"}` + "\n" +
		`{"Action":"pause","Package":"m/a","Test":"TestF"}` + "\n" +
		`{"Action":"cont","Package":"m/a","Test":"TestF"}`))
	now = start.Add(80 * time.Second)
	_ = p.consume(strings.NewReader(`{"Action":"start","Package":"m/z"}`)) // 10s before: no line
	now = start.Add(90 * time.Second)
	p.progress(20 * time.Second)
	// TestSlow (from the transcript) runs since the start; TestE waits.
	want := "... m/a: 0 passed, 1 skipped, 0 failed; running TestSlow (1m30s), TestD (30s), TestB (29s), 2 more; 1 waiting (1m30s)\n"
	if out.String() != want {
		t.Fatalf("progress: %q, want %q", out.String(), want)
	}
	out.Reset()
	now = now.Add(5 * time.Second)
	p.progress(20 * time.Second)
	if out.Len() != 0 {
		t.Errorf("progress 5s after the last line: %q", out.String())
	}
}
