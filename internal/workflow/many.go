package workflow

import (
	"cmp"
	"context"
	"errors"

	"github.com/backup-service/terraform-provider-backup/internal/fleet"
)

// maxBackupsInFlight bounds the accounts RunMany follows at once; the
// client's limiter keeps their requests within the key's allowance.
const maxBackupsInFlight = 1000

// RunMany takes a backup (backUp) of every account at once. progress calls may overlap; ended calls never do.
func (w *Runner) RunMany(ctx context.Context, accountIDs []string, opts RunOptions,
	progress func(accountID string, ev Event), ended func(o Outcome, finished int),
) []Outcome {
	outcomes := make([]Outcome, len(accountIDs))
	fleet.Each(ctx, len(accountIDs), maxBackupsInFlight, func(ctx context.Context, i int) {
		id := accountIDs[i]
		o := opts
		if progress != nil {
			o.Progress = func(ev Event) { progress(id, ev) }
		}
		outcomes[i] = w.backUp(ctx, id, o)
	}, func(i, finished int) {
		if ended != nil {
			ended(outcomes[i], finished)
		}
	})
	for i := range outcomes {
		if outcomes[i].AccountID == "" { // the context ended before it started
			outcomes[i] = Outcome{Kind: Refused, AccountID: accountIDs[i], Err: cmp.Or(context.Cause(ctx), errNoBackup)}
		}
	}
	return outcomes
}

// errNoBackup: an account RunMany never started.
var errNoBackup = errors.New("no backup was queued")
