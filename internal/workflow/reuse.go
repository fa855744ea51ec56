package workflow

import (
	"context"
	"errors"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// reuse is a run in which a recent backup (reuse_within) counts, good or in
// progress; else a new one is queued. ReuseRefused: why the window could not be read.
func (w *Runner) reuse(ctx context.Context, accountID string, opts RunOptions) Outcome {
	start, emit := w.progress(opts)
	queue := opts
	queue.WaitOnConflict = false
	recent, whyNot := w.recent(ctx, accountID, opts, start)
	if o, ok := w.join(ctx, accountID, recent, opts, start, emit); ok {
		return o
	}
	o := w.run(ctx, accountID, queue)
	if errors.Is(o.Err, client.ErrConflict) {
		// Queued by another since the look, or older than the window: look again.
		if recent, whyNot = w.recent(ctx, accountID, opts, start); recent != nil || opts.WaitOnConflict {
			if joined, ok := w.join(ctx, accountID, recent, opts, start, emit); ok {
				return joined
			}
			o = w.run(ctx, accountID, opts)
		}
	}
	o.ReuseRefused = whyNot
	return o
}

// join makes a recent backup b, when one was listed, this run's, and waits
// for it if the caller does; ok unless there was none or it failed.
func (w *Runner) join(ctx context.Context, accountID string, b *client.Backup, opts RunOptions, start time.Time, emit emitFunc) (o Outcome, ok bool) {
	if b == nil {
		return Outcome{}, false
	}
	if opts.Progress != nil {
		now := w.clock.Now()
		opts.Progress(Event{Kind: EventReused, Backup: *b, Elapsed: now.Sub(start), Age: max(now.Sub(b.CreatedAt), 0)})
	}
	o = notWaited(b)
	if opts.WaitForCompletion {
		o = w.waitFrom(ctx, accountID, b, start, emit, w.rule(accountID, opts, start))
	}
	o.Reused = true
	return o, o.Kind != Failed
}

// recent is the newest backup on one listing page that Rule.Check accepts
// as a candidate; refused says why the window could not be read at all.
func (w *Runner) recent(ctx context.Context, accountID string, opts RunOptions, start time.Time) (found *client.Backup, refused error) {
	for b, err := range w.c.Backups(ctx, accountID, client.ListOptions{Max: client.PageSize}) {
		if err != nil {
			w.log.Warn(ctx, "could not look for a recent backup to reuse; taking a new one",
				map[string]any{"account_id": accountID, "error": err.Error()})
			return nil, nil
		}
		// The service's clock as this listing's answer dates it.
		switch err := w.rule(accountID, opts, start).Check(b, Candidate); {
		case err == nil:
			return &b, nil
		case errors.Unwrap(err) != nil: // the clocks' (notCountedError.Cause)
			w.log.Warn(ctx, "reuse_within cannot be measured; taking a new backup", map[string]any{"account_id": accountID, "error": err.Error()})
			return nil, errors.Unwrap(err)
		}
		if b.CreatedAt.Before(start.Add(-opts.ReuseWithin)) {
			return nil, nil // newest first: nothing older counts
		}
	}
	return nil, nil
}
