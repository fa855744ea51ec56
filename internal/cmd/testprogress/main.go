// Command testprogress prints `go test -json` as `go test` would, with each
// package's line as soon as the package finishes, and, while a package
// runs long without a word, a line of its progress:
//
//	go test -json ./... | go run ./internal/cmd/testprogress [-v] [-every 20s]
//
// Without -v it prints what `go test` prints without it: a failed test's
// output once it fails, a package's line ("ok", "FAIL", "?") once it ends,
// and build errors; with -v, every line of output as it comes. `make test`
// uses it. It exits 1 when a package failed or did not build.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	verbose := flag.Bool("v", false, "print every line of output (go test -v)")
	every := flag.Duration("every", 20*time.Second, "print a running package's progress after this long without output (0: never)")
	flag.Parse()

	p := newPrinter(os.Stdout, *verbose)
	if *every > 0 {
		stop := p.tick(*every)
		defer stop()
	}
	if err := p.consume(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(1)
	}
	if p.failed {
		os.Exit(1)
	}
}

// event is one line of go test -json (cmd/test2json), and a build event.
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

// pkg is what a running package did so far.
type pkg struct {
	started                 time.Time
	passed, failed, skipped int
	running                 map[string]time.Time // top-level tests running, since when
	waiting                 map[string]bool      // top-level tests paused by t.Parallel
	output                  map[string][]string  // each test's lines, until it passes
	own                     []string             // the package's own lines
	summary                 string               // its "ok"/"FAIL"/"?" line
}

// printer turns events into go test's output. Its methods may run at once
// from the reading loop and the progress ticker.
type printer struct {
	mu        sync.Mutex
	w         io.Writer
	verbose   bool
	pkgs      map[string]*pkg
	lastWrite time.Time
	now       func() time.Time
	failed    bool
}

func newPrinter(w io.Writer, verbose bool) *printer {
	return &printer{w: w, verbose: verbose, pkgs: map[string]*pkg{}, now: time.Now, lastWrite: time.Now()}
}

// consume reads events until the end of in; a line that is not an event
// is printed as it is.
func (p *printer) consume(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Action == "" {
			p.write(sc.Text() + "\n")
			continue
		}
		p.handle(ev)
	}
	return sc.Err()
}

// topLevel is the top-level test a test or subtest belongs to.
func topLevel(test string) string {
	top, _, _ := strings.Cut(test, "/")
	return top
}

// isSummary says whether a package's line is the one go test ends it with.
func isSummary(line string) bool {
	return strings.HasPrefix(line, "ok  \t") || strings.HasPrefix(line, "FAIL\t") || strings.HasPrefix(line, "?   \t")
}

func (p *printer) handle(ev event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Action {
	case "build-output":
		p.writeLocked(ev.Output)
		return
	case "build-fail":
		p.failed = true
		return
	}
	if p.verbose && ev.Action == "output" {
		p.writeLocked(ev.Output)
	}
	st := p.pkgs[ev.Package]
	if st == nil {
		st = &pkg{started: p.now(), running: map[string]time.Time{}, waiting: map[string]bool{}, output: map[string][]string{}}
		p.pkgs[ev.Package] = st
	}
	top := topLevel(ev.Test)
	switch {
	case (ev.Action == "run" || ev.Action == "cont") && ev.Test == top:
		st.running[top] = p.now()
		delete(st.waiting, top)
	case ev.Action == "pause" && ev.Test == top:
		st.waiting[top] = true
		delete(st.running, top)
	case ev.Action == "output" && ev.Test != "":
		st.output[ev.Test] = append(st.output[ev.Test], ev.Output)
	case ev.Action == "output" && isSummary(ev.Output):
		st.summary = ev.Output
	case ev.Action == "output":
		st.own = append(st.own, ev.Output)
	case ev.Test != "" && ev.Test != top && (ev.Action == "pass" || ev.Action == "skip" || ev.Action == "fail"):
		endSubtest(st, ev.Test, ev.Action)
	case ev.Test != "" && (ev.Action == "pass" || ev.Action == "skip" || ev.Action == "fail"):
		p.endTest(st, top, ev.Action)
	case ev.Test == "" && (ev.Action == "pass" || ev.Action == "skip" || ev.Action == "fail"):
		p.endPackage(ev.Package, st, ev.Action)
	}
}

// endSubtest keeps a failed subtest's lines with its parent's, printed if
// the top-level test fails, and forgets a passed or skipped one's, as go
// test without -v does.
func endSubtest(st *pkg, test, action string) {
	if action == "fail" {
		parent := test[:strings.LastIndex(test, "/")]
		st.output[parent] = append(st.output[parent], st.output[test]...)
	}
	delete(st.output, test)
}

// endTest counts a top-level test that ended; without -v, a failed one's
// output (its failed subtests' with it) is printed now, less the framing of
// runs.
func (p *printer) endTest(st *pkg, top, action string) {
	delete(st.running, top)
	delete(st.waiting, top)
	switch action {
	case "pass":
		st.passed++
	case "skip":
		st.skipped++
	case "fail":
		st.failed++
		if !p.verbose {
			p.writeLocked(unframed(st.output[top]))
		}
	}
	delete(st.output, top)
}

// endPackage prints a package's line; without -v, a failed package's own
// output (a panic outside any test, a TestMain's error) comes first.
func (p *printer) endPackage(name string, st *pkg, action string) {
	delete(p.pkgs, name)
	if action == "fail" {
		p.failed = true
	}
	if p.verbose {
		return
	}
	if action == "fail" {
		p.writeLocked(unframed(st.own))
	}
	p.writeLocked(st.summary)
}

// unframed joins lines without go test -v's framing of runs ("=== RUN",
// "=== PAUSE", "=== CONT", "=== NAME") and its bare "PASS".
func unframed(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		if strings.HasPrefix(l, "=== ") || l == "PASS\n" {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

func (p *printer) write(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writeLocked(s)
}

func (p *printer) writeLocked(s string) {
	if s == "" {
		return
	}
	_, _ = io.WriteString(p.w, s)
	p.lastWrite = p.now()
}

// tick prints the progress of running packages every time the output has
// been quiet for every; stop ends it.
func (p *printer) tick(every time.Duration) (stop func()) {
	t := time.NewTicker(every / 4)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.progress(every)
			}
		}
	}()
	return func() { t.Stop(); close(done) }
}

// progress prints a line for each package running longer than quiet, once
// the output has been quiet that long: its tests passed, skipped and
// failed so far, and the tests under way.
func (p *printer) progress(quiet time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if now.Sub(p.lastWrite) < quiet {
		return
	}
	names := make([]string, 0, len(p.pkgs))
	for name, st := range p.pkgs {
		if now.Sub(st.started) >= quiet {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		p.writeLocked(progressLine(name, p.pkgs[name], now))
	}
}

// progressLine says how far a package got: its tests passed, skipped and
// failed so far, those running (the longest first, with how long) and those
// waiting for their turn (t.Parallel).
func progressLine(name string, st *pkg, now time.Time) string {
	running := make([]string, 0, len(st.running))
	for t := range st.running {
		running = append(running, t)
	}
	slices.SortFunc(running, func(a, b string) int {
		if c := st.running[a].Compare(st.running[b]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var shown []string
	for _, t := range running[:min(len(running), 3)] {
		shown = append(shown, fmt.Sprintf("%s (%s)", t, now.Sub(st.running[t]).Round(time.Second)))
	}
	if len(running) > 3 {
		shown = append(shown, fmt.Sprintf("%d more", len(running)-3))
	}
	under := "none running"
	if len(shown) > 0 {
		under = "running " + strings.Join(shown, ", ")
	}
	return fmt.Sprintf("... %s: %d passed, %d skipped, %d failed; %s; %d waiting (%s)\n",
		name, st.passed, st.skipped, st.failed, under, len(st.waiting), now.Sub(st.started).Round(time.Second))
}
