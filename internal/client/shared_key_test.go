package client

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// sharedKeyRun is what a simulation of many processes sharing one key
// measured: requests the service counted, allowance 429s (all, and those
// after each process's first window, when it could not yet know the
// allowance), and the time from the first start to the last finish.
type sharedKeyRun struct {
	requests, refused, refusedLater int
	wall                            time.Duration
	failed                          int
}

func (r sharedKeyRun) String() string {
	return fmt.Sprintf("%d requests, %d refused (%.1f%%), %d after the first window (%.1f%%), wall %s, %d failed",
		r.requests, r.refused, 100*float64(r.refused)/float64(max(r.requests, 1)),
		r.refusedLater, 100*float64(r.refusedLater)/float64(max(r.requests, 1)), r.wall.Round(10*time.Millisecond), r.failed)
}

// processTransport is one simulated process's way to the mock: in memory,
// counting what the service answered it.
type processTransport struct {
	h     http.Handler
	clock clock.Clock
	trace *simTrace // nil unless tracing

	mu          sync.Mutex
	firstWindow int64 // unix second of its first request, 0 before
	requests    int
	refused     int
	later       int
}

func (p *processTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	now := p.clock.Now().Unix()
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, r)
	res := rec.Result()
	res.Request = r
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.firstWindow == 0 {
		p.firstWindow = now
	}
	p.requests++
	if p.trace != nil && res.StatusCode < 300 {
		p.trace.mu.Lock()
		p.trace.accepted[now]++
		p.trace.mu.Unlock()
	}
	if res.StatusCode == http.StatusTooManyRequests && res.Header.Get("X-RateLimit-Limit") != "" {
		if p.trace != nil {
			p.trace.mu.Lock()
			p.trace.refusedAt[p.clock.Now().Nanosecond()/1e8]++
			p.trace.mu.Unlock()
		}
		p.refused++
		if now != p.firstWindow {
			p.later++
		}
	}
	return res, nil
}

// simTrace is what SHARED_KEY_TRACE=1 prints of a simulation: requests
// accepted in each second, and refusals by tenth of their second.
type simTrace struct {
	mu        sync.Mutex
	accepted  map[int64]int
	refusedAt [10]int
}

// simulateSharedKey runs n processes, each its own Client (its own
// limiter), each making perProcess requests with workers at once (as
// Terraform's parallelism), against one mock whose key allows limit
// requests a second, on a virtual clock. Starts are spread over the first
// second, as Terraform processes started together reach their first
// request at different moments.
func simulateSharedKey(t testing.TB, seed uint64, n, limit, perProcess, workers int) sharedKeyRun {
	t.Helper()
	vc := clocktest.NewVirtual(time.Unix(1_800_000_000, 0))
	srv := mockservice.New(mockservice.Options{Seed: seed, RateLimit: limit, Clock: vc, RateClock: vc})
	rng := rand.New(rand.NewPCG(seed, 1))
	start := vc.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var last time.Time
	var out sharedKeyRun
	var trace *simTrace
	if os.Getenv("SHARED_KEY_TRACE") != "" {
		trace = &simTrace{accepted: map[int64]int{}}
	}
	transports := make([]*processTransport, n)
	for i := range n {
		pt := &processTransport{h: srv, clock: vc, trace: trace}
		transports[i] = pt
		c, err := New(Options{BaseURL: "http://127.0.0.1:1", APIKey: srv.DemoKey(), HTTPClient: &http.Client{Transport: pt},
			Clock: vc, MaxRetries: 3})
		if err != nil {
			t.Fatal(err)
		}
		c.opts.Jitter = rand.New(rand.NewPCG(seed, uint64(i)+2)).Float64
		c.limiter.draw = rand.New(rand.NewPCG(seed, uint64(i)+1000)).Float64
		offset := time.Duration(rng.Int64N(int64(time.Second)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-vc.After(offset)
			jobs := make(chan struct{}, perProcess)
			for range perProcess {
				jobs <- struct{}{}
			}
			close(jobs)
			var pw sync.WaitGroup
			for range workers {
				pw.Add(1)
				go func() {
					defer pw.Done()
					for range jobs {
						if _, err := c.Token(context.Background()); err != nil {
							mu.Lock()
							out.failed++
							mu.Unlock()
							t.Logf("process %d: %v", i, err)
						}
					}
				}()
			}
			pw.Wait()
			mu.Lock()
			if now := vc.Now(); now.After(last) {
				last = now
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, pt := range transports {
		out.requests += pt.requests
		out.refused += pt.refused
		out.refusedLater += pt.later
	}
	out.wall = last.Sub(start)
	if trace != nil {
		var line []string
		for s := start.Unix(); s <= last.Unix(); s += 10 {
			n := 0
			for k := s; k < s+10; k++ {
				n += trace.accepted[k]
			}
			line = append(line, strconv.Itoa(n))
		}
		t.Logf("accepted per 10 s: %s; refused by tenth of a second: %v", strings.Join(line, " "), trace.refusedAt)
	}
	return out
}

// TestSharedKeySimulation prints what n processes sharing one key do, on
// a virtual clock (about 20 s of real time for the whole table): the tool
// for tuning how processes share an allowance before measuring it with
// Terraform (make bench, section 7). Its figures reproduce the issue's: at
// 10 requests/s, eight processes are refused about a fifth of their
// requests. SHARED_KEY_SIM=1 runs it; SHARED_KEY_SEEDS sets the seeds per
// row (default 3); SHARED_KEY_ROWS ("L:N,L:N") runs only those rows, so
// that a change can be tried on the slow rows first; SHARED_KEY_REQUESTS
// and SHARED_KEY_WORKERS change each process's requests (default 50) and
// parallelism (default 10), so that a tuning is not one for 50 and 10 only.
func TestSharedKeySimulation(t *testing.T) {
	if os.Getenv("SHARED_KEY_SIM") == "" {
		t.Skip("set SHARED_KEY_SIM=1 to print the simulation's table")
	}
	seeds := 3
	if v, err := strconv.Atoi(os.Getenv("SHARED_KEY_SEEDS")); err == nil {
		seeds = v
	}
	perProcess, workers := 50, 10
	if v, err := strconv.Atoi(os.Getenv("SHARED_KEY_REQUESTS")); err == nil {
		perProcess = v
	}
	if v, err := strconv.Atoi(os.Getenv("SHARED_KEY_WORKERS")); err == nil {
		workers = v
	}
	rows := os.Getenv("SHARED_KEY_ROWS") // "L:N,L:N"; empty for every row
	for _, limit := range []int{2, 10, 20} {
		for _, n := range []int{1, 2, 8, 16} {
			if rows != "" && !strings.Contains(","+rows+",", fmt.Sprintf(",%d:%d,", limit, n)) {
				continue
			}
			for s := range seeds {
				r := simulateSharedKey(t, uint64(s+1), n, limit, perProcess, workers)
				bound := time.Duration(float64(n*perProcess) / float64(limit) * float64(time.Second))
				t.Logf("L=%2d N=%2d seed %d: %s; bound %s, ratio %.2f", limit, n, s+1, r, bound.Round(10*time.Millisecond), r.wall.Seconds()/bound.Seconds())
			}
		}
	}
}

// Sixteen processes sharing an allowance of 20 requests/s (the
// simulation's row L=20 N=16, on a virtual clock): refusals after each
// process's first window stay a small part of the requests, and the work
// ends near the bound. The limiter that spent what was left of each window
// until refused had 18-20% refused here; this one 2.3-3.3% (three seeds, two runs).
// The limits leave room for the goroutines' scheduling, which the virtual
// clock does not fix.
func TestSharedKeyRefusalsStayLow(t *testing.T) {
	t.Parallel()
	const n, limit, perProcess = 16, 20, 50
	r := simulateSharedKey(t, 1, n, limit, perProcess, 10)
	bound := time.Duration(float64(n*perProcess) / limit * float64(time.Second))
	if r.failed != 0 || float64(r.refusedLater) > 0.06*float64(r.requests) || r.wall > bound*13/10 {
		t.Errorf("%s; bound %s", r, bound)
	}
}
