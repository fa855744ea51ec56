package mockservice

import "time"

// Clock drives the backup state machine (Options.Clock) or the rate-limit
// windows (Options.RateClock): the wall clock, or one of internal/clock's
// fakes.
type Clock interface{ Now() time.Time }
