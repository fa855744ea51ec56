// Command bench measures the provider against its physical bounds: the cost
// of refreshing backup_trigger resources, applies under a per-key rate
// limit, paging through many accounts, the requests each operation makes,
// and the client's hot paths. It builds the provider, runs the mock service
// in-process on loopback, drives Terraform, prints a table and writes it to
// BENCHMARKS.md. Run it with `make bench`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", "BENCHMARKS.md", "where to write the report")
	runs := flag.Int("runs", 9, "timed runs per plan measurement (the median is reported); the rate-limit apply runs a third as often")
	only := flag.Int("only", 0, "run only this section (1-12), for investigating one figure")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *out, *runs, *only); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// report collects the markdown report, echoing progress to stderr.
type report struct{ b strings.Builder }

func (r *report) line(format string, a ...any) { fmt.Fprintf(&r.b, format+"\n", a...) }

func progress(format string, a ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...) }

func run(ctx context.Context, out string, runs, only int) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	progress("building the provider")
	h, err := newHarness(ctx, root)
	if err != nil {
		return err
	}
	defer h.close()

	r := &report{}
	r.line("# Benchmarks")
	r.line("")
	r.line("Measured by `make bench` (`go run ./internal/cmd/bench`) on %s.", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	r.line("")
	r.line("Machine: %s", machine(ctx))
	r.line("")
	for i, section := range []func(context.Context, *harness, *report, int) error{
		benchRefresh, benchRateLimit, benchPaging, benchRequests, benchGo, benchRefreshAtScale, benchSharedKey, benchAllowance, benchFleet, benchFreshness, benchReuse, benchPlanStep,
	} {
		if only != 0 && only != i+1 {
			continue
		}
		if err := section(ctx, h, r, runs); err != nil {
			return err
		}
	}
	fmt.Print(r.b.String())
	if only != 0 {
		return nil // a partial report does not replace the full one
	}
	return os.WriteFile(out, []byte(r.b.String()+keptNotes(out)), 0o644)
}

// notesHeading starts the hand-written part of the report (what the
// measurements showed and what was changed), which a new run keeps.
const notesHeading = "## Investigations"

func keptNotes(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if i := strings.Index(string(b), notesHeading); i >= 0 {
		return string(b[i:])
	}
	return ""
}

func machine(ctx context.Context) string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				var kb int64
				_, _ = fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
				mem = fmt.Sprintf(", %.0f GiB", float64(kb)/(1<<20))
			}
		}
	}
	tf := "terraform not found"
	if b, err := exec.CommandContext(ctx, "terraform", "version").Output(); err == nil {
		tf = strings.SplitN(string(b), "\n", 2)[0]
	}
	return fmt.Sprintf("%s/%s, %d cores (%s)%s; %s; %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpu, mem, runtime.Version(), tf)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

// triggers is a configuration of one backup_trigger per account id.
func triggers(ids []string, extra string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return fmt.Sprintf(`
locals {
  ids = [%s]
}

resource "backup_trigger" "t" {
  count      = length(local.ids)
  account_id = local.ids[count.index]
%s}
`, strings.Join(q, ", "), extra)
}
