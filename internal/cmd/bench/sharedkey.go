package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// sharedKeyRuns and sharedKeyAllowances are the cases of section 7: N
// Terraform runs at once, each its own provider process, sharing one key
// whose allowance is L requests a second.
var (
	sharedKeyRuns       = []int{1, 2, 8, 16}
	sharedKeyAllowances = []int{2, 10, 20}
)

// sharedKeyCase, when set, runs only that case of section 7, as many
// times as -runs says: for telling a change of a few points from noise.
var sharedKeyCase = flag.String("shared", "", "section 7: only the case ALLOWANCExRUNS (for example 10x8), repeated -runs times")

// sharedCases numbers runShared's calls.
var sharedCases atomic.Int64

// sharedKeyPerRun is each run's workload: backup_triggers without wait
// (two requests each).
const sharedKeyPerRun = 25

// runCounter stands in front of the one mock for one run (its own loopback
// port), so that requests and refusals are told per run: a refusal in the
// run's first window, when its provider could not yet know the allowance,
// is counted apart.
type runCounter struct {
	h http.Handler

	mu          sync.Mutex
	firstWindow int64
	requests    int
	refused     int
	refusedLate int
}

func (c *runCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	second := time.Now().Unix()
	sw := &statusWriter{ResponseWriter: w}
	c.h.ServeHTTP(sw, r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.firstWindow == 0 {
		c.firstWindow = second
	}
	c.requests++
	// An allowance 429 carries the rate-limit headers; another does not.
	if sw.status == http.StatusTooManyRequests && w.Header().Get("X-RateLimit-Limit") != "" {
		c.refused++
		if second != c.firstWindow {
			c.refusedLate++
		}
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// sharedKeyResult is one case's outcome, summed over its runs.
type sharedKeyResult struct {
	requests, refused, refusedLate, failed int
	slowest                                time.Duration
}

// runShared applies n configurations of sharedKeyPerRun triggers at once
// against one mock with the given allowance, each through its own counter.
func runShared(ctx context.Context, h *harness, n, allowance int) (sharedKeyResult, error) {
	var out sharedKeyResult
	m, err := startMock(ctx, mockservice.Options{Seed: uint64(700 + n), Accounts: n * sharedKeyPerRun, RateLimit: allowance, PendingFor: time.Hour})
	if err != nil {
		return out, err
	}
	defer m.close()
	ids := m.srv.AccountIDs()
	round := sharedCases.Add(1) // workdirs of their own: a repeat starts with no state
	counters := make([]*runCounter, n)
	works := make([]*workdir, n)
	for i := range n {
		c := &runCounter{h: m.srv}
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return out, err
		}
		hs := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		defer func() { _ = hs.Close() }()
		w, err := h.workdir(fmt.Sprintf("shared-%d-%d-%d-%d", allowance, n, round, i), triggers(ids[i*sharedKeyPerRun:(i+1)*sharedKeyPerRun], ""), nil)
		if err != nil {
			return out, err
		}
		w.env = append(w.env, "BACKUP_BASE_URL=http://"+ln.Addr().String(), "BACKUP_API_KEY="+m.srv.DemoKey())
		counters[i], works[i] = c, w
	}
	// Start in a fresh window, as a fleet of pipelines would not all
	// start in the one the previous case filled.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	type result struct {
		d   time.Duration
		err error
	}
	results := make(chan result, n)
	for _, w := range works {
		go func() {
			d, err := w.run(ctx, "apply", "-auto-approve", "-input=false")
			results <- result{d, err}
		}()
	}
	for range n {
		res := <-results
		if res.err != nil {
			out.failed++
			progress("a run failed: %s", tail(res.err.Error(), 3))
		}
		out.slowest = max(out.slowest, res.d)
	}
	for _, c := range counters {
		out.requests += c.requests
		out.refused += c.refused
		out.refusedLate += c.refusedLate
	}
	return out, nil
}

// 7. Many runs, one key: N Terraform runs apply at once with one key, for
// N = 1, 2, 8, 16 and allowances of 2, 10 and 20 requests a second.
func benchSharedKey(ctx context.Context, h *harness, r *report, reps int) error {
	r.line("## 7. Many runs, one key")
	r.line("")
	r.line("N `terraform apply` runs at once, each of %d `backup_trigger` resources (no wait) on its own accounts, one key: separate provider processes "+
		"that see each other only in the rate-limit headers (each run reaches the one mock through its own loopback port, so that its requests are counted apart). "+
		"Refusals are allowance 429s; \"late\" ones leave out each run's first window, when its provider could not yet know the allowance. "+
		"T₀ is the same N runs at an allowance of %d requests/s (Terraform's start-up and CPU on this machine); bound = 1.2 × accepted requests / allowance + T₀.",
		sharedKeyPerRun, highRateLimit)
	r.line("")
	runs, allowances, repeat := sharedKeyRuns, sharedKeyAllowances, 1
	if *sharedKeyCase != "" {
		var a, n int
		if _, err := fmt.Sscanf(*sharedKeyCase, "%dx%d", &a, &n); err != nil || a < 1 || n < 1 {
			return fmt.Errorf("-shared %q: want ALLOWANCExRUNS, for example 10x8", *sharedKeyCase)
		}
		runs, allowances, repeat = []int{n}, []int{a}, max(reps, 1)
	}
	t0 := map[int]time.Duration{}
	for _, n := range runs {
		progress("7/12 many runs, one key: T₀ for %d runs", n)
		res, err := runShared(ctx, h, n, highRateLimit)
		if err != nil {
			return err
		}
		if res.failed > 0 {
			return fmt.Errorf("%d of %d runs failed with no rate limit to speak of", res.failed, n)
		}
		t0[n] = res.slowest
	}
	r.line("| allowance | runs | requests | refused | refused share | late refused | late share | slowest run | T₀ | bound | runs failed | goals |")
	r.line("|---|---|---|---|---|---|---|---|---|---|---|---|")
	met := true
	for _, allowance := range allowances {
		for i := range len(runs) * repeat {
			n := runs[i/repeat]
			progress("7/12 many runs, one key: %d runs at %d requests/s", n, allowance)
			res, err := runShared(ctx, h, n, allowance)
			if err != nil {
				return err
			}
			accepted := res.requests - res.refused
			bound := time.Duration(1.2*float64(accepted)/float64(allowance)*float64(time.Second)) + t0[n]
			share := float64(res.refusedLate) / float64(max(res.requests, 1))
			ok := res.failed == 0 && share <= 0.02 && res.slowest <= bound
			met = met && ok
			r.line("| %d/s | %d | %d | %d | %.1f%% | %d | %.1f%% | %s | %s | %s | %d | %s |", allowance, n, res.requests, res.refused,
				100*float64(res.refused)/float64(max(res.requests, 1)), res.refusedLate, 100*share, secs(res.slowest), secs(t0[n]), secs(bound), res.failed, verdict(ok))
		}
	}
	r.line("")
	r.line("Goals: no run fails; late refusals at most 2%% of requests; the slowest run within the bound. All met: %s.", verdict(met))
	r.line("")
	return nil
}
