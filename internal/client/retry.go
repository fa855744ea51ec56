package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// announceWaitsOver: longer waits are logged at WARN, so that "Still
// creating..." never hides why.
const announceWaitsOver = 5 * time.Second

// do performs cl with retries and decodes a 2xx body into out (when non-nil).
// max_retries does not count 429s: they are waited out to the deadline.
func (c *Client) do(ctx context.Context, cl call, out any) error {
	var waited time.Duration
	failures := 0 // retries that max_retries bounds
	for attempt := 0; ; attempt++ {
		err := c.attempt(ctx, cl, out)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		delay, retriable := c.retryDelay(cl, attempt, err)
		if !retriable {
			return err
		}
		limited := errors.Is(err, ErrRateLimited)
		if err := c.mayRetry(ctx, attempt, failures, limited, delay, waited, err); err != nil {
			return err // others are not paused for a wait not taken
		}
		if limited {
			c.limiter.pause(delay) // every caller backs off
		} else {
			failures++
		}
		if err := c.retryAfter(ctx, cl, attempt, delay, &waited, err); err != nil {
			return err
		}
	}
}

// mayRetry returns a *RetryError when waiting delay would outlive the
// deadline, or pass max_retries or the budget (a 429's, only without one).
func (c *Client) mayRetry(ctx context.Context, attempt, failures int, limited bool, delay, waited time.Duration, last error) error {
	fail := func(cause RetryCause, reason string) error {
		return &RetryError{Attempts: attempt + 1, Cause: cause, Reason: reason, Err: last}
	}
	deadline, hasDeadline := clock.Deadline(ctx)
	// A wait that ends at the deadline leaves no time for the attempt.
	if hasDeadline && !c.clock.Now().Add(delay).Before(deadline) {
		return fail(RetryPastDeadline, fmt.Sprintf("waiting %s would outlive the operation's deadline", delay.Round(time.Millisecond)))
	}
	if !limited && failures >= c.opts.MaxRetries {
		return fail(RetriesExhausted, "retries exhausted")
	}
	if (!limited || !hasDeadline) && waited+delay > c.opts.RetryBudget {
		return fail(RetryBudgetSpent, fmt.Sprintf("waiting %s more would exceed the retry budget of %s",
			delay.Round(time.Millisecond), c.opts.RetryBudget))
	}
	return nil
}

// retryAfter logs and sleeps delay before retry attempt+1, adding it to waited.
func (c *Client) retryAfter(ctx context.Context, cl call, attempt int, delay time.Duration, waited *time.Duration, last error) error {
	if delay >= announceWaitsOver {
		c.log.Warn(ctx, "waiting before retrying a Backup Service request", map[string]any{
			"method": cl.method, "path": c.base.EscapedPath() + cl.path, "delay": delay.Round(time.Second).String(), "error": last.Error(),
		})
	}
	c.log.Debug(ctx, "retrying Backup Service request", map[string]any{
		"method": cl.method, "path": c.base.EscapedPath() + cl.path, "attempt": attempt + 1, "delay": delay.String(), "error": last.Error(),
	})
	*waited += delay
	return clock.Sleep(ctx, c.clock, delay)
}

// retryDelay says whether err may be retried, and after how long.
func (c *Client) retryDelay(cl call, attempt int, err error) (time.Duration, bool) {
	var apiErr *APIError
	var tErr *TransportError
	var connErr *ConnectionError
	switch {
	case errors.As(err, &connErr):
		return 0, false // no retry can fix it
	case errors.As(err, &apiErr):
		// A 429 was refused before processing: safe to retry even a POST.
		if apiErr.StatusCode != http.StatusTooManyRequests && (apiErr.StatusCode < 500 || !cl.idempotent) {
			return 0, false
		}
		if apiErr.RateLimit != nil && apiErr.RateLimit.RetryAfter > 0 {
			return min(apiErr.RateLimit.RetryAfter, c.opts.RetryAfterCap), true
		}
		return c.backoff(attempt), true
	case errors.As(err, &tErr):
		if cl.idempotent || !tErr.Sent {
			return c.backoff(attempt), true
		}
	}
	return 0, false
}

// backoff is BackoffBase * 2^attempt, capped, plus up to 20% of jitter.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.opts.BackoffBase
	for i := 0; i < attempt && d < c.opts.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.opts.MaxBackoff)
	return d + time.Duration(c.jitter()*0.2*float64(d))
}
