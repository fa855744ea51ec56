package fleet

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

func TestEachRunsEveryIndexOnceWithinTheBound(t *testing.T) {
	t.Parallel()
	const n, workers = 200, 7
	var running, peak atomic.Int64
	seen := make([]atomic.Int64, n)
	var progress []int
	Each(context.Background(), n, workers, func(_ context.Context, i int) {
		r := running.Add(1)
		for {
			p := peak.Load()
			if r <= p || peak.CompareAndSwap(p, r) {
				break
			}
		}
		seen[i].Add(1)
		running.Add(-1)
	}, func(_, finished int) { progress = append(progress, finished) })
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("index %d ran %d times", i, c)
		}
	}
	if p := peak.Load(); p > workers {
		t.Errorf("%d calls at once, bound %d", p, workers)
	}
	if len(progress) != n || progress[n-1] != n {
		t.Errorf("progress: %d reports, last %v", len(progress), progress[len(progress)-1:])
	}
}

func TestEachStartsNothingAfterTheContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	ran := 0
	Each(ctx, 1000, 2, func(context.Context, int) {
		mu.Lock()
		defer mu.Unlock()
		if ran++; ran == 10 {
			cancel()
		}
	}, nil)
	if ran < 10 || ran > 11 {
		t.Errorf("%d calls ran; after the 10th cancelled, only the other worker's call may have been running", ran)
	}
}

func TestEachWithNothingToDo(t *testing.T) {
	t.Parallel()
	Each(context.Background(), 0, 4, func(context.Context, int) { t.Error("called") }, nil)
}
