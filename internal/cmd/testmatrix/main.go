// Command testmatrix runs the acceptance suite once per Terraform or
// OpenTofu binary and prints one table of the outcomes.
//
//	TF_MATRIX="terraform /opt/tf/terraform_1.5.7 /opt/tf/tofu_1.12.6" go run ./internal/cmd/testmatrix
//
// Each binary gets its own `go test -json` run with TF_ACC_TERRAFORM_PATH
// set. The command fails when any run fails, and when a test is skipped on
// every binary: such a test never runs, so it proves nothing.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	pkgs := flag.String("pkgs", "./internal/provider/...", "packages holding the acceptance tests")
	run := flag.String("run", "", "passed to go test -run")
	logDir := flag.String("logs", "", "directory for each run's go test -json log (default: a temporary one)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	bins := strings.Fields(os.Getenv("TF_MATRIX"))
	if len(bins) == 0 {
		bins = []string{"terraform"}
	}
	if *logDir == "" {
		dir, err := os.MkdirTemp("", "testmatrix-")
		if err != nil {
			fatal(err)
		}
		*logDir = dir
	} else if err := os.MkdirAll(*logDir, 0o755); err != nil {
		fatal(err)
	}
	var results []*result
	for _, bin := range bins {
		r, err := runOne(ctx, bin, *pkgs, *run, *logDir)
		if err != nil {
			fatal(err)
		}
		results = append(results, r)
	}
	ok := report(os.Stdout, results)
	fmt.Printf("logs: %s\n", *logDir)
	if !ok {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "testmatrix:", err)
	os.Exit(2)
}

// result is one binary's run.
type result struct {
	bin, version          string
	passed, failed, skips int
	seconds               float64
	exitErr               error
	// skipped maps each skipped test to the reason it gave.
	skipped map[string]string
	// ran holds every test that reported an outcome.
	ran map[string]bool
	// failures holds the output of failed tests, to show.
	failures []string
	// notes are package-level lines worth showing (secrets scan, TestMain failures).
	notes []string
}

// event is one line of go test -json.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func runOne(ctx context.Context, bin, pkgs, run, logDir string) (*result, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("binary %q: %w", bin, err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	r := &result{bin: bin, skipped: map[string]string{}, ran: map[string]bool{}}
	r.version = versionOf(ctx, path)
	fmt.Fprintf(os.Stderr, "==> %s (%s)\n", bin, r.version)

	logName := filepath.Join(logDir, strings.NewReplacer("/", "_", " ", "_").Replace(filepath.Base(bin))+".json")
	logFile, err := os.Create(logName)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()

	// The simulation runs no CLI: make test runs it once, not per binary.
	args := []string{"test", "-json", "-count=1", "-timeout", "30m", "-skip", "^TestSim"}
	if run != "" {
		args = append(args, "-run", run)
	}
	args = append(args, pkgs)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), "TF_ACC=1", "TF_ACC_TERRAFORM_PATH="+path, "CHECKPOINT_DISABLE=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r.consume(io.TeeReader(out, logFile))
	r.exitErr = cmd.Wait()
	r.seconds = time.Since(start).Seconds()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return r, nil
}

// versionOf is the first line "bin version" prints, such as
// "Terraform v1.15.9" or "OpenTofu v1.12.6".
func versionOf(ctx context.Context, bin string) string {
	cmd := exec.CommandContext(ctx, bin, "version")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	// A CLI configuration file that does not exist makes OpenTofu warn on
	// stdout; the version is the line that starts with the product name.
	out, err := cmd.Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.HasPrefix(line, "Terraform v") || strings.HasPrefix(line, "OpenTofu v") {
			return strings.TrimSpace(line)
		}
	}
	return "unknown"
}

func (r *result) consume(in io.Reader) {
	output := map[string][]string{} // test -> its output lines
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		key := ev.Package + "." + ev.Test
		switch ev.Action {
		case "output":
			if ev.Test == "" {
				if strings.HasPrefix(ev.Output, "secrets:") || strings.HasPrefix(ev.Output, "FAIL:") || strings.HasPrefix(ev.Output, "panic:") {
					r.notes = append(r.notes, strings.TrimSpace(ev.Output))
				}
				continue
			}
			output[key] = append(output[key], ev.Output)
		case "pass":
			if ev.Test != "" {
				r.passed++
				r.ran[key] = true
				delete(output, key)
			}
		case "skip":
			if ev.Test != "" {
				r.skips++
				r.skipped[key] = skipReason(output[key])
				delete(output, key)
			}
		case "fail":
			if ev.Test == "" {
				if r.failed == 0 {
					r.notes = append(r.notes, "package "+ev.Package+" failed outside any test (see the log)")
				}
				continue
			}
			r.failed++
			r.ran[key] = true
			r.failures = append(r.failures, strings.Join(output[key], ""))
			delete(output, key)
		}
	}
}

// skipReason picks the line of a skipped test's output that says why.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		return l
	}
	return "(no reason given)"
}

// report prints the table, the skips per binary, the failures and the tests
// that never ran; it returns whether everything passed.
func report(w io.Writer, results []*result) bool {
	ok := true
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-34s %-22s %7s %7s %8s %8s\n", "binary", "version", "passed", "failed", "skipped", "seconds")
	for _, r := range results {
		status := ""
		if r.exitErr != nil || r.failed > 0 {
			ok = false
			status = "  FAIL"
		}
		fmt.Fprintf(w, "%-34s %-22s %7d %7d %8d %8.0f%s\n", shorten(r.bin, 34), r.version, r.passed, r.failed, r.skips, r.seconds, status)
	}
	for _, r := range results {
		for _, n := range r.notes {
			fmt.Fprintf(w, "%s: %s\n", filepath.Base(r.bin), n)
		}
	}
	for _, r := range results {
		if len(r.skipped) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nskipped on %s (%s):\n", filepath.Base(r.bin), r.version)
		for _, name := range sortedKeys(r.skipped) {
			fmt.Fprintf(w, "  %s: %s\n", strings.TrimPrefix(name, packagePrefix(name)), r.skipped[name])
		}
	}
	if never := neverRan(results); len(never) > 0 {
		ok = false
		fmt.Fprintf(w, "\nFAIL: %d test(s) skipped on every binary, so they never run:\n", len(never))
		for _, n := range never {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	for _, r := range results {
		for _, f := range r.failures {
			fmt.Fprintf(w, "\n---- failure on %s:\n%s", r.version, f)
		}
		var exitErr *exec.ExitError
		if r.exitErr != nil && !errors.As(r.exitErr, &exitErr) {
			fmt.Fprintf(w, "\n---- %s: go test did not run: %v\n", r.version, r.exitErr)
		}
	}
	return ok
}

// neverRan lists the tests skipped on every binary.
func neverRan(results []*result) []string {
	if len(results) == 0 {
		return nil
	}
	var out []string
	for name := range results[0].skipped {
		ran := false
		for _, r := range results {
			if r.ran[name] {
				ran = true
				break
			}
		}
		if !ran {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func packagePrefix(key string) string {
	i := strings.LastIndex(key, ".Test")
	if i < 0 {
		return ""
	}
	return key[:i+1]
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n+1:]
}
