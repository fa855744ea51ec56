// Which backup counts for a change. A Record is
// what a backup_trigger, a backup_on_destroy or an action invocation knows
// of the backup it stands for, and its Phase; this file holds every
// transition between phases and every rule on when a recorded backup
// still stands for a change, so that the resources and the action only
// carry records and ask them.
//
//	none ──trigger──▶ in_progress ──wait──▶ succeeded | failed
//	  │                  │   ▲ (read)
//	  │                  ├──▶ interrupted (Ctrl-C)  ─┐
//	  │                  └──▶ timed_out             ─┴─ follow ─▶ ...
//	  └──outcome unknown / not listed──▶ unidentified ──found──▶ in_progress ...
//	import ──▶ imported ──first apply──▶ (phase of its status)

package workflow

import (
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// Phase is where the backup a record stands for is, as far as it knows.
type Phase string

// The phases. Interrupted and TimedOut are in progress as far as the
// service goes: they say why nobody waits for the backup any more.
const (
	PhaseNone         Phase = ""             // nothing recorded: the next change takes a new backup
	PhaseUnidentified Phase = "unidentified" // triggered, its backup never listed (Confirmed: the service accepted it)
	PhaseInProgress   Phase = "in_progress"  // pending or running, not waited for (or still being waited for)
	PhaseInterrupted  Phase = "interrupted"  // a wait for it was interrupted
	PhaseTimedOut     Phase = "timed_out"    // a wait for it ran out
	PhaseSucceeded    Phase = "succeeded"
	PhaseFailed       Phase = "failed"   // ended in any status but success
	PhaseImported     Phase = "imported" // adopted by import, until the first apply takes the configuration
)

// Record is what is known of the backup a resource or an invocation
// stands for.
type Record struct {
	Phase    Phase
	BackupID string // "" while PhaseUnidentified, and when nothing is recorded
	// Status as the service last gave it; "" before an import's first read.
	Status string
	// TriggeredAt is when the backup was created, or, Unidentified, when
	// its trigger began (on this machine's clock); zero before an import's
	// first read.
	TriggeredAt time.Time
	CompletedAt time.Time // zero while in progress
	// Confirmed: the service accepted the trigger of an Unidentified
	// backup (a backup was queued, only its record is missing).
	Confirmed bool
	// CountsUntil bounds how long the record stands for its change (a
	// destroy that stopped: until it plus resume_within).
	CountsUntil time.Time
	// Reused: the backup was not queued for this change; a recent one
	// counted for it (reuse_within).
	Reused bool
	// Since is when the resource's previous change went ahead (Rule.After
	// of this record's change); zero when none is known.
	Since time.Time
	// AheadAt is when this record's change went ahead (its operation
	// reported a good outcome), on the service's clock as its answers
	// date it (Runner.ServiceNow); zero until then.
	AheadAt time.Time
}

// phaseOf is the phase of a backup that nobody waits for: a success that
// contradicts itself (client.Backup.Good) is a failure.
func phaseOf(b client.Backup) Phase {
	switch {
	case client.InProgress(b.Status):
		return PhaseInProgress
	case b.Good():
		return PhaseSucceeded
	default:
		return PhaseFailed
	}
}

// WentAhead is when the change this record stands for went ahead, as far as
// it shows, for the next change's Rule.After: the latest of its own Since,
// its backup's start (or its trigger's, unidentified), its end, and when
// its operation went ahead (an adopted backup can be older). Later
// than the truth is safe (only a newer backup counts); earlier never is.
func (r Record) WentAhead() time.Time {
	t := r.Since
	if r.TriggeredAt.After(t) {
		t = r.TriggeredAt
	}
	if r.CompletedAt.After(t) {
		t = r.CompletedAt
	}
	// Records are dated to the second: a backup created in the second the
	// change went ahead counts as after it (a stated limit).
	if a := r.AheadAt.Add(-time.Nanosecond); a.After(t) {
		t = a
	}
	return t
}

// After is the record once a run or a Follow of r came to o: the backup
// and its phase, with a wait that stopped before the backup ended as
// Interrupted or TimedOut; a trigger whose backup was not listed as
// Unidentified; and None when no backup is known to have been queued (a
// refusal, a conflict waited out, a failure before any trigger, a read
// that failed).
func (r Record) After(o Outcome) Record {
	switch {
	case o.Backup != nil:
		next := Record{Since: r.Since}
		if r.BackupID == o.Backup.ID {
			next = r // its times, where the run read none
		}
		next.Phase = PhaseNone // decided by this outcome alone
		next = next.Observe(*o.Backup)
		next.Reused = next.Reused || o.Reused
		if next.Phase == PhaseInProgress {
			switch o.Kind {
			case Interrupted:
				next.Phase = PhaseInterrupted
			case TimedOut:
				next.Phase = PhaseTimedOut
			}
		}
		return next
	case o.Kind == NotIdentified:
		return Record{Phase: PhaseUnidentified, TriggeredAt: o.TriggeredAt, Confirmed: o.Confirmed, Since: r.Since}
	}
	return Record{Since: r.Since}
}

// ImportedAs is the record of an import of backupID, before its first read.
func ImportedAs(backupID string) Record {
	return Record{Phase: PhaseImported, BackupID: backupID}
}

// Observe is the record after a read of its backup: the service's status
// and times. An unidentified trigger is identified by it; an in-progress
// backup keeps why nobody waits for it; an import stays imported until
// the first apply adopts it.
func (r Record) Observe(b client.Backup) Record {
	next := r
	next.BackupID, next.Status, next.Confirmed = b.ID, b.Status, false
	if !b.CreatedAt.IsZero() {
		next.TriggeredAt = b.CreatedAt
	}
	next.CompletedAt = time.Time{}
	if b.CompletedAt != nil {
		next.CompletedAt = *b.CompletedAt
	}
	switch p := phaseOf(b); {
	case r.Phase == PhaseImported:
	case p == PhaseInProgress && (r.Phase == PhaseInterrupted || r.Phase == PhaseTimedOut):
	default:
		next.Phase = p
	}
	return next
}

// Adopted is an imported record once the first apply has taken the
// configuration: from then on, the phase of its status.
func (r Record) Adopted() Record {
	if r.Phase == PhaseImported && r.Status != "" {
		r.Phase = phaseOf(r.backup())
	}
	return r
}

// backup is the record's backup as the service last gave it.
func (r Record) backup() client.Backup {
	b := client.Backup{ID: r.BackupID, Status: r.Status, CreatedAt: r.TriggeredAt}
	if !r.CompletedAt.IsZero() {
		b.CompletedAt = &r.CompletedAt
	}
	return b
}

// Finished: the backup ended, and the record knows when it began. It
// never changes again, so a refresh only checks that its account exists.
func (r Record) Finished() bool {
	return r.Status != "" && !client.InProgress(r.Status) && !r.TriggeredAt.IsZero()
}

// Known is what Follow needs of the record.
func (r Record) Known() Known {
	return Known{BackupID: r.BackupID, Status: r.Status, TriggeredAt: r.TriggeredAt, Confirmed: r.Confirmed}
}

// Step is what the next apply of a backup_trigger does with its recorded
// backup, where no replacement is planned for other reasons.
type Step int

// The steps.
const (
	// Keep: nothing to do with the backup; settings are stored.
	Keep Step = iota
	// Identify: look for the unidentified backup (and wait for it):
	// id, triggered_at, backup_status and completed_at become known.
	Identify
	// Settle: read or wait for the backup (an import's first apply, a
	// wait switched on, a wait that was interrupted): backup_status and
	// completed_at become known.
	Settle
	// Retake: the backup failed, and the trigger waits for a good one or
	// its change never went ahead: replace the trigger, which takes a new
	// backup.
	Retake
)

// Next is the step of the next apply for a trigger that waited
// (waitedBefore) and now waits (waitsNow) for its backup.
func (r Record) Next(waitedBefore, waitsNow bool) Step {
	switch {
	case r.Phase == PhaseNone:
		return Keep // no backup: a refused replacement, tainted (see FromTriggerState)
	case r.Phase == PhaseUnidentified:
		return Identify
	case r.Phase == PhaseImported, waitsNow && !waitedBefore:
		return Settle
	case r.Phase == PhaseFailed && r.Status != "" && r.AheadAt.IsZero():
		return Retake // its change never went ahead: not on a failed backup
	case !waitedBefore || !waitsNow:
		return Keep
	case client.InProgress(r.Status):
		return Settle
	case r.Phase == PhaseFailed && r.Status != "":
		return Retake
	}
	return Keep
}

// TakesConfigTriggers: an imported trigger adopts the configuration's
// triggers in place on its first apply instead of taking a new backup.
func (r Record) TakesConfigTriggers() bool { return r.Phase == PhaseImported }

// Replaced is what the replacement of a trigger (same account, same
// triggers, in the same command) keeps of it, to adopt its backup rather
// than queue a second one for the same change.
type Replaced struct {
	Record Record
	// Wait is the timeouts.create it waited within; zero when it did not
	// wait for its backup.
	Wait time.Duration
}

// Adoptable says whether the replaced trigger's backup, as now read,
// stands for the replacement: while it is in progress; when it succeeded
// and its change never went ahead (the create failed: timed out, or not
// identified until a refresh found it); and when it succeeded after its
// wait timed out (the apply that tainted the trigger could not see it). A
// backup that failed, or that succeeded for a change that went ahead (the
// replacement then is the user's wish for a new one), does not.
func (p Replaced) Adoptable(b client.Backup) bool {
	switch {
	case client.InProgress(b.Status):
		return true
	case !b.Good():
		return false
	case p.Record.AheadAt.IsZero() && p.Record.Phase != PhaseImported:
		return true
	}
	return p.Wait > 0 && b.CompletedAt != nil && b.CompletedAt.Sub(b.CreatedAt) > p.Wait
}

// Known is what the replacement follows: an unidentified backup as not
// confirmed, so that a replacement queues a new backup once none was
// listed for a whole grace period (the replacement is a request for one).
func (p Replaced) Known() Known {
	k := p.Record.Known()
	k.Confirmed = false
	return k
}

// StandsForDestroy says whether a destroy at now follows the record of
// an earlier destroy that stopped: until its CountsUntil, and never longer
// than resume from now (a runner whose clock ran ahead wrote a later
// CountsUntil), on this machine's clock. After that, or after any apply
// that was not a destroy (which clears the record), the data may have
// changed: a new backup is taken.
func (r Record) StandsForDestroy(now time.Time, resume time.Duration) bool {
	return r.Phase != PhaseNone && !r.CountsUntil.IsZero() && !now.After(r.CountsUntil) && r.CountsUntil.Sub(now) <= resume
}

// CountsForDestroy says whether an earlier destroy's backup, as now read,
// can let this destroy go ahead: while it is in progress (it is waited
// for) or once it succeeded; a failed one is replaced by a new backup.
func CountsForDestroy(b client.Backup) bool {
	return client.InProgress(b.Status) || b.Good()
}

// AfterStoppedDestroy is the record a destroy that did not see its backup
// succeed leaves for the next one, from r (what it followed, None if it
// took a new backup) and the run's outcome: the backup it began, when a
// wait stopped or its backup was not listed; none after a failed backup
// (the next destroy takes a new one); r itself otherwise, since a
// transient error must not make the next destroy queue a second backup.
// It stands until now plus resume (resume_within).
func (r Record) AfterStoppedDestroy(o Outcome, now time.Time, resume time.Duration) Record {
	next := r
	switch o.Kind {
	case Failed:
		return Record{}
	case NotIdentified, TimedOut, Interrupted, Unfollowed:
		if o.Kind == NotIdentified || o.Backup.ID != "" {
			next = r.After(o)
		}
	}
	if next.Phase == PhaseNone {
		return Record{}
	}
	next.CountsUntil = now.Add(resume).Truncate(time.Second) // as the state shows it
	return next
}

// String names the record in logs and test failures.
func (r Record) String() string {
	return fmt.Sprintf("%s backup %q status %q triggered %s", r.Phase, r.BackupID, r.Status, r.TriggeredAt.UTC().Format(time.RFC3339))
}
