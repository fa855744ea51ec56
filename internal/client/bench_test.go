package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// A page of 50 accounts as the service sends it.
func accountsPage() []byte {
	var b []byte
	b = append(b, `{"data":[`...)
	for i := range PageSize {
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
		var p page[Account]
		if err := json.Unmarshal(body, &p); err != nil || len(p.Data) != PageSize {
			b.Fatal(err)
		}
	}
}

// The limiter under contention: many goroutines asking at once, with an
// allowance high enough that only the limiter's own cost shows.
func BenchmarkLimiterContention(b *testing.B) {
	l := newLimiter(realClock{})
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "1000000000")
	_ = l.wait(context.Background())
	l.done(h)
	b.ReportAllocs()
	b.SetParallelism(10)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := l.wait(context.Background()); err != nil {
				b.Error(err)
				return
			}
			l.done(h)
		}
	})
}

// The limiter's pacing at a real allowance: ten callers share 200/s.
func BenchmarkLimiterPacing200PerSecond(b *testing.B) {
	l := newLimiter(realClock{})
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "201")
	_ = l.wait(context.Background())
	l.done(h)
	b.SetParallelism(10)
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = l.wait(context.Background())
			l.done(nil)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}
