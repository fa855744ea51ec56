package workflow

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// reuse is a run in which a recent backup (reuse_within) counts, good or in progress, else a new one is queued; ReuseRefused
// says why the window could not be read. Its first page read is the read before the trigger too: no request more than a run.
func (w *Runner) reuse(ctx context.Context, accountID string, opts RunOptions) Outcome {
	start, emit := w.progress(opts)
	l, stop := w.lookFirst(ctx, accountID)
	if stop != nil {
		return *stop
	}
	rule := rule{AccountID: accountID, Mark: opts.Since, Unrecorded: opts.Unrecorded, ReuseWithin: opts.ReuseWithin, Allowance: w.set.ClockAllowance}
	recent, age, whyNot := w.reusable(ctx, &rule, l.page)
	w.refusedReuse(ctx, accountID, whyNot)
	for recent != nil {
		if o, ok := w.join(ctx, accountID, recent, age, l, opts, start, emit); ok {
			return o
		}
		// It failed: another in the window counts instead, as it could have
		// at first (seed 225862). A fresh look: the read before any trigger too.
		again, err := w.look(ctx, accountID)
		if err != nil {
			break
		}
		l = again
		recent, age, whyNot = w.reusable(ctx, &rule, l.page)
		w.refusedReuse(ctx, accountID, whyNot)
	}
	queue := opts
	queue.WaitOnConflict = false
	o := w.runFrom(ctx, accountID, queue, l)
	if errors.Is(o.Err, client.ErrConflict) {
		// Queued by another since the look, or older than the window: look again.
		if again, err := w.look(ctx, accountID); err == nil {
			if recent, age, whyNot = w.reusable(ctx, &rule, again.page); recent != nil || opts.WaitOnConflict {
				w.refusedReuse(ctx, accountID, whyNot)
				if joined, ok := w.join(ctx, accountID, recent, age, again, opts, start, emit); ok {
					return joined
				}
				o = w.runFrom(ctx, accountID, opts, again)
			}
		}
	}
	o.ReuseRefused = whyNot
	return o
}

// reusable is r.reusable on p, once the listing shows where the previous
// change's mark is when p lists none of it (provenBelow).
func (w *Runner) reusable(ctx context.Context, r *rule, p client.BackupsPage) (*client.Backup, time.Duration, error) {
	if !r.Unrecorded {
		r.Mark, _ = w.provenBelow(ctx, r.AccountID, r.Mark, p)
	}
	return r.reusable(p)
}

func (w *Runner) refusedReuse(ctx context.Context, accountID string, why error) {
	if why != nil {
		w.log.Warn(ctx, "reuse_within cannot be applied; taking a new backup", map[string]any{"account_id": accountID, "error": why.Error()})
	}
}

// join makes b (a recent backup on l's page, age old) this run's, waiting if the caller does; ok unless none or it failed.
func (w *Runner) join(ctx context.Context, accountID string, b *client.Backup, age time.Duration, l looked, opts RunOptions,
	start time.Time, emit emitFunc,
) (o Outcome, ok bool) {
	if b == nil {
		return Outcome{}, false
	}
	if opts.Progress != nil {
		opts.Progress(Event{Kind: EventReused, Backup: *b, Elapsed: w.clock.Now().Sub(start), Age: age})
	}
	o = notWaited(b, &l.page)
	if opts.WaitForCompletion {
		o = w.waitFrom(ctx, accountID, b, &l.page, start, emit)
	}
	// The floor, not the page: a retake after this backup fails may reuse
	// any other above it, as this run could (a guard or an action has none).
	o.Reused, o.Before = true, cmp.Or(opts.Since, l.mark)
	return o, o.Kind != Failed
}
