package client

import (
	"net/http"
	"sync"
	"time"
)

// serviceClock is the service's clock as its answers' Date headers tell it.
type serviceClock struct {
	mu     sync.Mutex
	offset time.Duration
	known  bool
}

// observe notes the Date of an answer received at now; half a second
// centres Date's one-second resolution.
func (s *serviceClock) observe(date string, now time.Time) {
	t, err := http.ParseTime(date)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.offset, s.known = t.Add(500*time.Millisecond).Sub(now), true
	s.mu.Unlock()
}

// ClockOffset is how far the service's clock runs ahead of this client's,
// from the latest readable Date; false before any.
func (c *Client) ClockOffset() (time.Duration, bool) {
	c.serviceClock.mu.Lock()
	defer c.serviceClock.mu.Unlock()
	return c.serviceClock.offset, c.serviceClock.known
}
