package workflow

import (
	"context"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// Destroy takes a guard's destroy-time backup: it follows the backup an earlier, stopped destroy began (earlier) while that
// record stands for resume on both clocks, else takes a new one. next is what the next destroy follows should this one stop
// (see afterStoppedDestroy); followed says whether the outcome is the earlier destroy's backup.
func (w *Runner) Destroy(ctx context.Context, accountID string, earlier Record, opts RunOptions, resume time.Duration) (o Outcome, next Record, followed bool) {
	kept := earlier // what a stop leaves for the next destroy
	switch {
	case earlier.standsForDestroy(w.clock.Now(), resume):
		w.log.Debug(ctx, "following the backup an earlier destroy began", map[string]any{"record": earlier.String()})
		o = w.follow(ctx, accountID, earlier, followOptions{RunOptions: opts, Counts: stillCounts, Renew: true,
			StandsAt: func(at client.AnswerTime) bool { return earlier.standsOnService(at, resume) }})
	case !earlier.Empty():
		// It stood for a destroy that stopped before resume_within: the data may have changed since.
		w.log.Debug(ctx, "the backup an earlier destroy began no longer counts for this one; taking a new backup",
			map[string]any{"record": earlier.String()})
		if !earlier.standsTooLong(w.clock.Now(), resume) {
			// Expired, not read on a clock that moved: a stop here must not make it stand again (seed 149421).
			kept = Record{}
		}
		o = w.renew(ctx, accountID, opts, earlier.BackupID)
	default:
		o = w.backUp(ctx, accountID, opts)
	}
	return o, kept.afterStoppedDestroy(o, w.clock.Now(), resume), !earlier.Empty() && !o.Renewed
}
