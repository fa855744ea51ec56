package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// A page of 50 accounts as the service sends it.
func accountsPage() []byte {
	var b []byte
	b = append(b, `{"data":[`...)
	for i := range pageSize {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, fmt.Sprintf(`{"id":"acc_%016d","name":"google_workspace account %d","backup_status":"success","platform":"google_workspace","service_type":"backup","created_at":"2025-01-01T00:00:00Z"}`, i, i)...)
	}
	b = append(b, `],"pagination":{"limit":50,"next_cursor":"eyJzIjoiYWNjb3VudHMiLCJkIjp0cnVlLCJ0IjoxNzM1Njg5NjAwMDAwMDAwMDAwLCJxIjo1MH0.q2VJv7aV7bA2hQ9mEKk2mA"}}`...)
	return b
}

func BenchmarkDecodeAccountsPage(b *testing.B) {
	body := accountsPage()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		d := &pageDecoder[Account]{accept: func(a *Account) bool { return AccountIDFormat.MatchString(a.ID) }, idOf: func(a *Account) string { return a.ID }}
		if err := decodeStrict(body, d, textGuard{}); err != nil || len(d.Data) != pageSize {
			b.Fatal(err)
		}
	}
}

// The limiter under contention: many goroutines asking at once, with an
// allowance high enough that only the limiter's own cost shows.
func BenchmarkLimiterContention(b *testing.B) {
	l := newLimiter(clock.Wall{})
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "1000000000")
	_ = l.wait(context.Background())
	l.done(h, http.StatusOK)
	b.ReportAllocs()
	b.SetParallelism(10)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := l.wait(context.Background()); err != nil {
				b.Error(err)
				return
			}
			l.done(h, http.StatusOK)
		}
	})
}

// The limiter's pacing at a real allowance: ten callers share an allowance
// of 201 requests a second, paced to allowanceUse of it. (The name is from
// the 1/(limit−1) spacing, which paced 201 to 200 a second.)
func BenchmarkLimiterPacing200PerSecond(b *testing.B) {
	l := newLimiter(clock.Wall{})
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "201")
	_ = l.wait(context.Background())
	l.done(h, http.StatusOK)
	b.SetParallelism(10)
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = l.wait(context.Background())
			l.done(nil, 0)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// Peak heap while a listing meets each faulty service that once grew
// memory without bound: endless new cursors (50 records a page), a page of
// 20,000 records, and pages of records of 14 KB each. Reported as peak-MB
// (sampled every millisecond); the goal is under 200 MB for a whole plan.
func BenchmarkHostileListingPeakHeap(b *testing.B) {
	for label, body := range hostileListings {
		b.Run(label, func(b *testing.B) {
			var requests atomic.Int64
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte(body(requests.Add(1))))
			}))
			defer ts.Close()
			c, err := New(Options{BaseURL: ts.URL, APIKey: "k", Clock: newFakeClock()})
			if err != nil {
				b.Fatal(err)
			}
			peak := int64(0)
			for b.Loop() {
				runtime.GC()
				stop := make(chan struct{})
				sampled := make(chan int64)
				go func() {
					sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
					top := int64(0)
					tick := time.NewTicker(time.Millisecond)
					defer tick.Stop()
					for {
						metrics.Read(sample)
						top = max(top, int64(sample[0].Value.Uint64()))
						select {
						case <-stop:
							sampled <- top
							return
						case <-tick.C:
						}
					}
				}()
				if _, err := Collect(c.Accounts(context.Background(), ListOptions{})); err == nil {
					b.Fatal("the listing ended without an error")
				}
				close(stop)
				peak = max(peak, <-sampled)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
		})
	}
}
