// Package workflow takes a backup and says what became of it (Outcome, Record); internal/client knows nothing of it.
package workflow

import (
	"cmp"
	"context"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// Defaults of Settings.
const (
	// DefaultClockAllowance: how far clocks may disagree (NTP keeps them within it); wider, another's backup passes for ours.
	DefaultClockAllowance = 10 * time.Second
	defaultIdentifyWithin = 30 * time.Second // looking for an accepted backup in a lagging listing
	DefaultUncertainGrace = 60 * time.Second // for a POST without answer to show up before it is sent again
)

// Settings shape the runs; zero values take the defaults.
type Settings struct {
	Poll           pollSettings // the intervals of a wait's polls (zero: defaultPoll)
	ClockAllowance time.Duration
	IdentifyWithin time.Duration
	UncertainGrace time.Duration
}

// emptyReadHorizon is how long after an empty read its absence can be proven (Mark.ranSince): the looks of the operation
// that made it, never a later one's.
func (s Settings) emptyReadHorizon() time.Duration { return s.UncertainGrace + s.IdentifyWithin }

// Runner takes and follows backups through one client.
type Runner struct {
	c        *client.Client
	clock    clock.Clock
	log      client.Logger
	set      Settings
	accounts accountReads  // see Runner.account
	replaced *replacements // the triggers deleted in this process, for their replacements
}

// New is a runner of c's backups on clk (nil: the wall clock), logging to log (nil: nowhere).
func New(c *client.Client, clk clock.Clock, log client.Logger, s Settings) *Runner {
	if clk == nil {
		clk = clock.Wall{}
	}
	if log == nil {
		log = client.NopLogger{}
	}
	s.Poll = s.Poll.orDefault()
	// A zero or negative duration takes the default.
	s.ClockAllowance = cmp.Or(max(s.ClockAllowance, 0), DefaultClockAllowance)
	s.IdentifyWithin = cmp.Or(max(s.IdentifyWithin, 0), defaultIdentifyWithin)
	s.UncertainGrace = cmp.Or(max(s.UncertainGrace, 0), DefaultUncertainGrace)
	return &Runner{c: c, clock: clk, log: log, set: s, accounts: accountReads{index: c.NewAccountIndex()}, replaced: newReplacements()}
}

// detached outlives ctx's end, briefly, to learn what the service already did.
const detachedTimeout = 15 * time.Second

func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), detachedTimeout)
}
