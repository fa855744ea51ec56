package workflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

type followOptions struct {
	RunOptions
	// Counts says whether the recorded backup, read by its id, still stands for the change; nil counts every backup.
	Counts func(client.Backup) bool
	// Renew runs again (backUp, with RunOptions.Since, so reuse_within too) when the recorded backup no longer counts;
	// without it follow returns what it read.
	Renew bool
	// StandsAt, when set, says whether the record still stands as of a page's answer (a stopped destroy's resume_within
	// on the service's clock); one that no longer does is renewed like a backup that no longer counts.
	StandsAt func(client.AnswerTime) bool
	// Above, when set, is a mark the recorded backup must be listed above on the first page to count: it started after
	// every change the mark stands for went ahead (a replacement that cannot tell which replaced trigger it is).
	Above *Mark
	// Claimed, for a record not identified: backups other creates of this process queued or took, skipped (never cut at)
	// where its backup is looked for above its Prior, for its own may be listed below them (deep-run seed 482951).
	Claimed *Mark
}

// standsAt says whether the record stands as of page's answer; a backup found past the first page gives no time to show it.
func (o followOptions) standsAt(page *client.BackupsPage) bool {
	return page != nil && o.StandsAt(page.At)
}

// above says whether b, read on page (nil: beyond the first), is listed above the Above mark.
func (o followOptions) above(b client.Backup, page *client.BackupsPage) bool {
	return page != nil && slices.ContainsFunc(o.Above.above(*page), func(x client.Backup) bool { return x.ID == b.ID })
}

// UpdateTrigger carries on with a trigger's recorded backup (an interrupted wait, an import's first apply, a trigger not
// identified): a new backup only where its trigger is sent again (see followRecord), counted above the record's floor.
func (w *Runner) UpdateTrigger(ctx context.Context, accountID string, r Record, opts RunOptions) Outcome {
	opts.Since = r.floor()
	return w.follow(ctx, accountID, r, followOptions{RunOptions: opts})
}

func (w *Runner) follow(ctx context.Context, accountID string, r Record, opts followOptions) Outcome {
	o := w.followRecord(ctx, accountID, r, opts)
	o.AccountID = accountID
	return o
}

// followRecord carries on with r's backup, the one way a resource resumes one: one not identified is looked for above Prior
// and, unconfirmed, sent again only once none is listed after UncertainGrace, which the look waits out.
func (w *Runner) followRecord(ctx context.Context, accountID string, r Record, opts followOptions) Outcome {
	start, emit := w.progress(opts.RunOptions)
	var b *client.Backup
	var page *client.BackupsPage
	var err error
	switch {
	case r.BackupID == "":
		unidentified := func(err error) Outcome { // dated by the last page read, if any: a stopped destroy's record is dated at its stop
			return Outcome{Kind: NotIdentified, TriggeredAt: r.TriggeredAt, TriggeredOnService: r.TriggeredOnService,
				Confirmed: r.Confirmed, Err: err, Before: r.Prior, At: answeredAt(page)}
		}
		if r.Prior == nil {
			return unidentified(errNoPrior)
		}
		mine := rule{AccountID: accountID, Mark: r.Prior.readSince(r.TriggeredAt), Claimed: opts.Claimed}
		within := w.set.IdentifyWithin
		if !r.Confirmed {
			// The grace left on this machine's clock (at most all of it); all if the service's start is unknown (graceOver).
			left := w.set.UncertainGrace - w.clock.Now().Sub(r.TriggeredAt)
			if r.TriggeredOnService.IsZero() {
				left = w.set.UncertainGrace
			}
			within = max(within, min(left, w.set.UncertainGrace))
		}
		if b, page, err = w.lookFor(ctx, mine, within); b == nil {
			if page == nil && !r.Ahead && !errors.Is(err, context.Canceled) {
				// Not one listing read: its backup, queued before this operation, may have ended badly,
				// and its change has not gone ahead on it (seed 100927: a not-waited create went ahead).
				return Outcome{Kind: Refused, Err: &UnreadError{Err: err}}
			}
			if !r.Confirmed && errors.Is(err, errNotListed) {
				if err = w.graceOver(r, page, start); err == nil {
					l, stop := w.lookFirst(ctx, accountID)
					if stop != nil {
						// Nothing sent: the trigger stays, looked for again (deep-run seed 735552: refused, the
						// record carried only its floor, and the next apply queued a second backup).
						return unidentified(stop.Err)
					}
					// The read before sending it again may list that trigger's backup, which a lagging listing
					// hid from the look: it is that trigger's, not another's to wait out (deep-run seed 526915).
					if b, err = w.seen(ctx, &mine, &newest{}, l.page); err != nil {
						return unidentified(err)
					}
					if b == nil {
						return w.resend(ctx, accountID, r, mine, *page, l, opts.RunOptions)
					}
					page = &l.page
				}
			}
			if b == nil {
				if page != nil && errors.Is(err, errNotListed) {
					if below := mine.unexplained(*page); below != nil {
						err = errors.Join(err, unexplainedError(below)) // named, so that the user can record it
					}
				}
				return unidentified(err)
			}
		}
	case client.InProgress(r.Status) && opts.WaitForCompletion && opts.Counts == nil:
		// The wait's first poll reads it.
		b = &client.Backup{ID: r.BackupID, AccountID: accountID, Status: r.Status, CreatedAt: r.TriggeredAt}
		return w.waitFrom(ctx, accountID, b, nil, start, emit)
	default:
		if b, page, err = w.find(ctx, accountID, r.BackupID); err != nil {
			// Dated by the page read, if any: a stopped destroy's window runs from this stop on both clocks
			// (deep-run seed 755886: dated by the first stop on the service's, the next destroy took a second backup).
			return Outcome{Kind: Refused, Err: &UnreadError{BackupID: r.BackupID, Err: err}, At: answeredAt(page)}
		}
	}
	if opts.StandsAt != nil && !opts.standsAt(page) {
		// The record no longer stands (or its page's time is unknown): its backup is not followed.
		if opts.Renew {
			return w.renew(ctx, accountID, opts.RunOptions, b.ID)
		}
		return notWaited(b, page)
	}
	// A backup above the mark read before its trigger is its own, followed whatever it became, unless Counts says it no longer
	// counts, as the record's own would not (seed 148830: a stopped destroy's lost trigger, processed late, failed).
	if opts.Counts != nil && !opts.Counts(*b) {
		if opts.Renew {
			return w.renew(ctx, accountID, opts.RunOptions, b.ID) // a new backup, or with reuse_within a recent one above Since
		}
		if opts.WaitForCompletion {
			return failed(*b, &notCountedError{Backup: *b, Why: "it no longer stands for this change"})
		}
		return notWaited(b, page)
	}
	if opts.Above != nil && page != nil {
		opts.Above, _ = w.provenBelow(ctx, accountID, opts.Above, *page)
	}
	if opts.Above != nil && !opts.above(*b, page) {
		// It may be this change's, not that of whichever replaced trigger this is: neither followed nor retaken (seed 7087).
		return Outcome{Kind: Refused, Err: fmt.Errorf("%w: backup %s", errNotAboveReplaced, b.ID)}
	}
	return w.waitOwn(ctx, accountID, b, page, opts.WaitForCompletion, start, emit)
}

// resend sends again r's trigger, of unknown outcome, when the look's last page and l (read since) list none above mine; not
// when a backup either lists since, below the mark, may be that trigger's (a clock set back).
func (w *Runner) resend(ctx context.Context, accountID string, r Record, mine rule, lastLook client.BackupsPage, l looked, opts RunOptions) Outcome {
	b, err := mine.unexplained(lastLook), error(nil)
	if b == nil {
		b, err = w.hiddenBelow(ctx, mine, l.page)
	}
	if b != nil || err != nil {
		return Outcome{Kind: NotIdentified, TriggeredAt: r.TriggeredAt, TriggeredOnService: r.TriggeredOnService, Err: cmp.Or(err, unexplainedError(b)),
			Before: r.Prior, At: answeredAt(&l.page)} // dated at the stop, as followRecord's own (seed 560472)
	}
	w.log.Warn(ctx, "no backup of the earlier trigger, whose outcome was unknown, was ever listed; queueing one now",
		map[string]any{"account_id": accountID, "triggered_at": r.TriggeredAt.UTC().Format(time.RFC3339)})
	opts.afterUnknown = true
	o := w.runFrom(ctx, accountID, opts, l)
	o.Renewed = !o.earlier // its own backup, not the earlier trigger's (seed 232669), unless refused for that one's
	return o
}

// renew runs again in place of the record's backup (backupID), which is never the run's own.
func (w *Runner) renew(ctx context.Context, accountID string, opts RunOptions, backupID string) Outcome {
	opts.replaced = backupID
	o := w.backUp(ctx, accountID, opts)
	o.Renewed = true
	return o
}

var errNotAboveReplaced = errors.New("the backup of the trigger this one replaces, queued for its change, is not listed above the " +
	"backups recorded when another trigger of the account replaced in this apply went ahead (its prior_backup_ids), " +
	"so it cannot be shown to stand for this trigger, and a new trigger could be a second backup for its change")

// graceOver says why an unconfirmed trigger, of which page (the last read) lists nothing, is not resent yet: it began less
// than UncertainGrace ago by either reading, this machine's clock or the service's (the Dates of the read before it and of
// page): the younger counts. Without the service's (a tainted trigger's replacement has no stored record; no Date), this
// operation's own time since start reads instead: TriggeredAt may be another runner's clock, minutes off
// (deep-run seed 283844: 20 minutes behind, it was resent as the first was on its way). That time is a floor either way: the
// trigger predates this operation (deep-run seed 631460: a record stamped on a clock 9 s ahead read 56 s after a wait of 60).
func (w *Runner) graceOver(r Record, page *client.BackupsPage, start time.Time) error {
	elapsed := w.clock.Now().Sub(start)
	if page != nil && !page.At.Service.IsZero() && !r.TriggeredOnService.IsZero() {
		elapsed = max(elapsed, min(w.clock.Now().Sub(r.TriggeredAt), page.At.Service.Sub(r.TriggeredOnService)))
	}
	if elapsed >= w.set.UncertainGrace {
		return nil
	}
	return errors.Join(errNotListed, fmt.Errorf("the trigger began %s ago, less than the %s a request without an answer is given to show up "+
		"before it is sent again", max(elapsed, 0).Round(time.Second), w.set.UncertainGrace))
}
