package workflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Replacing a trigger: Terraform deletes the replaced trigger and creates its replacement as two calls, naming neither to
// the other; what the delete leaves, the create adopts or counts above.

// CreateTrigger takes a trigger's backup or, replacing a trigger of the same account and triggers deleted in this process
// (DeleteTrigger), follows its backup while it stands (stillCounts), reused or adopted only above the floors of the account's
// triggers deleted here (none replaced: no floor, no reuse_within shortcut). It returns the record the outcome builds on.
func (w *Runner) CreateTrigger(ctx context.Context, accountID, triggers string, opts RunOptions) (Outcome, Record) {
	return w.createTrigger(ctx, w.replaced, accountID, triggers, opts)
}

// DeleteTrigger keeps what a trigger's delete leaves its replacement (its backup is never deleted): the create of the same
// account and triggers in this process adopts its backup, and every create of the account counts only above its floor. One
// gone ahead before its backup was listed is looked for first: a listing not showing it yet would let it count as the
// replacement's (deep-run seed 650160: a lagging listing). One listed where no look takes it (below the backups listed before
// it, or after an empty read too long ago) is kept from the replacement with every backup listed since (predating); while
// none is, nothing is kept and the delete fails: Terraform keeps the trigger.
func (w *Runner) DeleteTrigger(ctx context.Context, accountID, triggers string, rec Record) error {
	if rec.Phase == phaseUnidentified && rec.Ahead {
		b, page, err := w.findTriggered(ctx, accountID, rec)
		switch {
		case b != nil:
			rec = rec.identified(*b, page)
		case page != nil && (err == nil || rec.Prior.readEmpty() && errors.Is(err, ErrListingLost)) && rec.Prior.listsBeyond(*page):
			for _, listed := range page.Backups {
				rec.Prior = rec.Prior.with(listed.ID)
			}
		default:
			return fmt.Errorf("%w: %w", unlistedAhead(rec), cmp.Or(err, errNotListed))
		}
	}
	w.replaced.remember(accountID, triggers, rec)
	return nil
}

// unlistedAhead says why a trigger gone ahead on a backup not yet listed is kept.
func unlistedAhead(r Record) error {
	return fmt.Errorf("its change went ahead on the backup its trigger queued at %s (accepted by the Backup Service), which the "+
		"account's backups do not list yet: a trigger replacing it now could take that backup for its own. The trigger is kept "+
		"(a new triggers value replaces it by deleting it first; a destroy deletes it), and nothing was queued for it. Run the command "+
		"again once the listing shows that backup (a listing can lag behind the service's writes); only if the service will never "+
		"list it, remove the trigger from the state (terraform state rm) and apply, which takes a new backup",
		r.TriggeredAt.UTC().Format(time.RFC3339))
}

// createTrigger is CreateTrigger with the triggers deleted in reps.
func (w *Runner) createTrigger(ctx context.Context, reps *replacements, accountID, triggers string, opts RunOptions) (Outcome, Record) {
	opts.Progress = reps.claiming(accountID, opts.Progress)
	opts.predates = reps.predating(accountID)
	old, own := reps.take(accountID, triggers)
	// A trigger another create adopted has its replacement: its floor says nothing of this one's change.
	since, replacedFree := reps.floor(accountID, own, false)
	if own < 0 {
		if replacedFree && reps.serve(accountID) {
			opts.Since = since
		}
		return w.backUp(ctx, accountID, opts), Record{Prior: opts.Since}
	}
	others, replaced := reps.floor(accountID, own, true)
	// Not adopted, its backup is the previous change's: a new one counts above its floor too.
	opts.Since = old.Record.floor()
	var above *Mark
	if replaced {
		opts.Since = union(since, opts.Since)
		// Terraform does not say which deleted trigger this create replaces: an adopted backup must be listed after every
		// other deleted trigger of the account went ahead, so it stands for whichever this one is (none known: a new backup).
		above = others
	}
	if replaced && others == nil {
		// A deleted trigger's floor is unknown: its backup cannot be shown to stand for this change (it may predate the
		// other's change: seed 136118): a new one is taken, above no floor; deferring it (seed 539) took it an apply later.
		return w.renew(ctx, accountID, opts, old.Record.BackupID), Record{}
	}
	w.log.Debug(ctx, "following the backup of the replaced trigger, queued for the same change", map[string]any{"record": old.Record.String()})
	// Not identified, its backup is never one another create of this process queued or took (deep-run seed
	// 74910: another trigger's, whose change went ahead), though it may be listed below one (seed 482951).
	o := w.follow(ctx, accountID, old.Record, followOptions{RunOptions: opts, Counts: stillCounts, Renew: true, Above: above,
		Claimed: reps.claimed(accountID)})
	// Not shown above the others' floors (unread, or not found yet), it is kept with them: replaced alone by the
	// next apply, this trigger never counts a backup listed below them (deep-run seed 227670: a 404 page kept
	// the record without the other's floor, and the next apply adopted a backup older than the other's change).
	if unread := new(UnreadError); errors.As(o.Err, &unread) {
		return o, old.Record.above(others) // unread is not gone: kept, tainted, the next apply looks again
	}
	if o.Kind == NotIdentified && o.Backup == nil && !o.Renewed {
		o.Before = o.Before.joined(others) // the record the provider keeps looks above them
		// Its backup may have ended badly by now, unseen: a create that does not wait goes ahead on it only once
		// found, in progress or good (deep-run seed 382733: another trigger's, failed minutes before).
		o.Adopted = true
	}
	if errors.Is(o.Err, errNotAboveReplaced) {
		// One below another's floor may be its change's: a new backup could be a second for this change.
		// Kept, tainted, with the others' floors, so that the next apply, replacing this trigger alone, still
		// counts only above them: this create may be the other's (seed 683 of the paired replacements).
		o.Err = fmt.Errorf("%w. No backup was queued; the trigger is saved tainted, with those backups among its prior_backup_ids: "+
			"the next apply counts that backup only if it is listed above them, else it takes a new one", o.Err)
		return o, old.Record.above(others)
	}
	if o.Backup != nil && o.Backup.ID == old.Record.BackupID {
		o.Reused = o.Reused || old.Record.Reused // adopted: still the recent backup it reused
		return o, old.Record
	}
	return o, Record{Prior: opts.Since} // a new backup, or one identified
}

// replacements holds one provider process's (one phase of one command) deleted triggers (remember): the Create replacing one
// (same account and triggers) adopts its backup rather than queue a second; every Create of the account counts above their
// floors. Terraform deletes before creating in one process; with create_before_destroy, no floor: a new backup (see docs).
type replacements struct {
	mu       sync.Mutex
	replaced map[string][]replacedTrigger // by account id
	served   map[string]int               // creates of the account that replace one of them
	claims   map[string]*Mark             // backups the account's creates queued or took
}

// replacedTrigger is what a delete keeps of a trigger for its replacement.
type replacedTrigger struct {
	triggers string // its triggers, as the caller keys them
	Record   Record
	taken    bool // by the create that adopts its backup
}

// newReplacements is an empty registry: one per provider process.
func newReplacements() *replacements {
	return &replacements{replaced: map[string][]replacedTrigger{}, served: map[string]int{}, claims: map[string]*Mark{}}
}

// claiming is progress that also notes each backup a create of the account queued or took (claimed).
func (s *replacements) claiming(accountID string, progress func(Event)) func(Event) {
	return func(ev Event) {
		if ev.Kind == EventQueued || ev.Kind == EventReused {
			s.mu.Lock()
			s.claims[accountID] = cmp.Or(s.claims[accountID], &Mark{IDs: []string{}}).with(ev.Backup.ID)
			s.mu.Unlock()
		}
		if progress != nil {
			progress(ev)
		}
	}
}

func (s *replacements) claimed(accountID string) *Mark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cmp.Or(s.claims[accountID], &Mark{IDs: []string{}})
}

func (s *replacements) remember(accountID, triggers string, rec Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replaced[accountID] = append(s.replaced[accountID], replacedTrigger{triggers: triggers, Record: rec})
}

// floor is what a trigger of the account created in this command counts above: the union of the floors of the account's
// triggers deleted before it, but the one it took (own; -1: none) and, unless taken, those other creates took; nil when
// one is unknown; replaced: any was. One from an empty read makes it one: it proves nothing later (ErrEmptyEarlierChange).
func (s *replacements) floor(accountID string, own int, taken bool) (m *Mark, replaced bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, empty := &Mark{IDs: []string{}}, false
	for i, r := range s.replaced[accountID] {
		if i != own && (taken || !r.taken) {
			f := r.Record.floor()
			m, replaced, empty = union(m, f), true, empty || f.readEmpty()
		}
	}
	if empty && m.anchored() {
		m = emptyReadWith(m.IDs, time.Time{})
	}
	return m, replaced
}

// predating is what every trigger of the account deleted in this command listed before its trigger (its Prior, floor or
// not): backups older than any create here; nil when none has a Prior (one that listed none adds nothing to a union).
func (s *replacements) predating(accountID string) *Mark {
	s.mu.Lock()
	defer s.mu.Unlock()
	var m *Mark
	for _, r := range s.replaced[accountID] {
		if p := r.Record.Prior; p != nil {
			m = union(cmp.Or(m, &Mark{IDs: []string{}}), &Mark{IDs: slices.DeleteFunc(slices.Clone(p.IDs), func(id string) bool { return id == "" })})
		}
	}
	return m
}

// take returns the account's deleted trigger with the same triggers and a backup to adopt (change never gone ahead), and its
// place for floor (-1: none). Terraform names neither, so each match takes one: any pairing keeps the promise, an adopted
// backup counting only above all others' floors (seed 664). First one whose backup no other's floor lists, then the earliest.
func (s *replacements) take(accountID, triggers string) (replacedTrigger, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.replaced[accountID]
	// One whose backup another's floor lists cannot be adopted (followOptions.Above): the others first (seed 55400).
	belowOther := func(i int) bool {
		return slices.ContainsFunc(list, func(o replacedTrigger) bool {
			return o.Record.BackupID != list[i].Record.BackupID && o.Record.floor().has(list[i].Record.BackupID)
		})
	}
	found := -1
	for i, t := range list {
		if t.taken || t.triggers != triggers || !t.Record.awaitsItsBackup() || t.Record.Prior == nil {
			continue
		}
		if found < 0 || belowOther(found) && !belowOther(i) ||
			belowOther(found) == belowOther(i) && t.Record.TriggeredAt.Before(list[found].Record.TriggeredAt) {
			found = i
		}
	}
	if found < 0 {
		return replacedTrigger{}, -1
	}
	list[found].taken = true
	s.served[accountID]++
	return list[found], found
}

// serve counts a create adopting none as replacing one of the account's deleted triggers while they outnumber such creates;
// false once each has one: it replaces none (create_before_destroy's, or a new trigger), and their floors say nothing of its
// previous change (seed 12724). A create between another's delete and create takes that slot: Terraform names neither.
func (s *replacements) serve(accountID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.served[accountID] >= len(s.replaced[accountID]) {
		return false
	}
	s.served[accountID]++
	return true
}
