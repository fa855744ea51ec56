package workflow

import (
	"context"

	"github.com/backup-service/terraform-provider-backup/internal/fleet"
)

// MaxBackupsInFlight bounds the accounts RunMany follows at once. Each
// waits mostly asleep between polls; the limiter, shared by all, keeps
// their requests within the key's allowance.
const MaxBackupsInFlight = 1000

// RunMany runs Run for every account concurrently, so that the whole
// takes about one backup's time plus the requests over the allowance, not
// the sum of the backups. One account's failure does not stop the others.
// progress, when set, gets each account's events; ended, when set, each
// outcome as it comes, with how many have. Calls to progress may overlap;
// calls to ended do not. The outcomes are in the order of accountIDs.
func (w *Runner) RunMany(ctx context.Context, accountIDs []string, opts RunOptions,
	progress func(accountID string, ev Event), ended func(o Outcome, finished int),
) []Outcome {
	outcomes := make([]Outcome, len(accountIDs))
	fleet.Each(ctx, len(accountIDs), MaxBackupsInFlight, func(ctx context.Context, i int) {
		id := accountIDs[i]
		o := opts
		if progress != nil {
			o.Progress = func(ev Event) { progress(id, ev) }
		}
		outcomes[i] = w.Run(ctx, id, o)
	}, func(i, finished int) {
		if ended != nil {
			ended(outcomes[i], finished)
		}
	})
	for i := range outcomes {
		if outcomes[i].AccountID == "" {
			outcomes[i] = notStarted(ctx, accountIDs[i])
		}
	}
	return outcomes
}
