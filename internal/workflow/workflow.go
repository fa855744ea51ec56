// Package workflow takes a backup of an account and knows what became of
// it: the trigger, the identification of the backup it queued, the wait
// for a backup already in progress, the wait for completion, the follow-up
// of a backup recorded earlier, many accounts at once, and the Record a
// resource keeps of it. Every run ends in one Outcome.
//
// Calls go one way: the provider calls this package, which calls
// internal/client (endpoints, transport, retries, limits), which knows
// nothing of it.
package workflow

import (
	"context"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// Defaults of Settings.
const (
	// DefaultClockAllowance is how far the service's clock may run behind
	// this machine's for a backup to be recognised as a trigger's. Clocks
	// kept by NTP differ by well under a second; a wider allowance would let
	// a backup queued by someone else just before this trigger pass for its
	// own after an unknown outcome (see Rule.Check).
	DefaultClockAllowance = 10 * time.Second
	// DefaultIdentifyWithin is how long a backup the service accepted is
	// looked for in a listing that lags behind its POST.
	DefaultIdentifyWithin = 30 * time.Second
	// DefaultUncertainGrace is how long a POST that got no answer is given
	// to show up in the listing before it is sent again.
	DefaultUncertainGrace = 60 * time.Second
)

// Settings shape the runs; zero values take the defaults.
type Settings struct {
	Poll PollSettings
	// ClockAllowance, IdentifyWithin and UncertainGrace shape how a
	// trigger recognises its backup (see Rule.Check and trigger).
	ClockAllowance time.Duration
	IdentifyWithin time.Duration
	UncertainGrace time.Duration
}

// Logger receives the runner's diagnostics (the provider connects it to
// tflog, as it does the client's). Fields never hold the API key.
type Logger interface {
	Debug(ctx context.Context, msg string, fields map[string]any)
	Info(ctx context.Context, msg string, fields map[string]any)
	Warn(ctx context.Context, msg string, fields map[string]any)
}

// Runner takes and follows backups through one client.
type Runner struct {
	c     *client.Client
	clock clock.Clock
	log   Logger
	set   Settings
}

// New is a runner of c's backups, on clk (nil: the wall clock), logging
// to log (nil: nowhere).
func New(c *client.Client, clk clock.Clock, log Logger, s Settings) *Runner {
	if clk == nil {
		clk = clock.Wall{}
	}
	if log == nil {
		log = nopLogger{}
	}
	s.Poll = s.Poll.orDefault()
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&s.ClockAllowance, DefaultClockAllowance)
	def(&s.IdentifyWithin, DefaultIdentifyWithin)
	def(&s.UncertainGrace, DefaultUncertainGrace)
	return &Runner{c: c, clock: clk, log: log, set: s}
}

type nopLogger struct{}

func (nopLogger) Debug(context.Context, string, map[string]any) {}
func (nopLogger) Info(context.Context, string, map[string]any)  {}
func (nopLogger) Warn(context.Context, string, map[string]any)  {}

// detachedTimeout bounds a request that must complete after its caller's
// context ends: recording what the service already did.
const detachedTimeout = 15 * time.Second

// detached keeps ctx's values but not its cancellation or deadline.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), detachedTimeout)
}
