// Package fleet runs one operation over many accounts: a bounded number at a time, each with the caller's context, and
// reports progress as they end. The client's limiter, not this package, keeps the requests within the key's allowance;
// the bound only keeps memory and open connections small.
package fleet

import (
	"context"
	"sync"
)

// Each calls fn(ctx, i) for every i below n, with at most workers calls running at once, and returns when every started
// call has returned. Once ctx ends, no further call starts. done, when set, is called after each call returns, with its
// index and how many have returned; calls to done do not overlap.
func Each(ctx context.Context, n, workers int, fn func(ctx context.Context, i int), done func(i, finished int)) {
	slots := make(chan struct{}, max(workers, 1)) // a running call holds one
	var wg sync.WaitGroup
	var mu sync.Mutex
	finished := 0
	for i := range n {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break // ended while waiting for a slot, or as one freed: not started
		}
		wg.Go(func() {
			defer func() { <-slots }()
			fn(ctx, i)
			if done != nil {
				mu.Lock()
				finished++
				done(i, finished)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
