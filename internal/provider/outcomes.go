package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// boundedFor is ctx bounded by timeout on the provider's clock, with the account on every log line.
func boundedFor(ctx context.Context, clk clock.Clock, timeout time.Duration, accountID string) (context.Context, context.CancelFunc) {
	ctx, cancel := clock.WithTimeout(ctx, clk, timeout)
	return tflog.SetField(ctx, "account_id", accountID), cancel
}

// caller is what runs a backup; an outcome's messages take what follows from its follow-ups, never naming a setting it lacks.
type caller struct {
	creates  bool // a trigger's create, not its update (workflow.Saving.Creating)
	followUp map[followUp]string
	until    time.Time // a stopped destroy's pending_destroy_backup.counts_until; zero when none was recorded
	// recordsImport: an import's first apply, which records a past backup whatever it became, silent on one nobody waits for.
	recordsImport bool
}

var (
	createCaller = caller{creates: true, followUp: createFollowUps}
	resumeCaller = caller{followUp: resumeFollowUps}
	importCaller = caller{followUp: resumeFollowUps, recordsImport: true}
	invokeCaller = caller{followUp: invokeFollowUps}
)

// destroyCaller is a destroy that stopped, whose record stands until until.
func destroyCaller(until time.Time) caller { return caller{followUp: destroyFollowUps, until: until} }

// followUp is a kind of sentence that follows an outcome; a caller without one says nothing there.
type followUp int

const (
	timeoutName            followUp = iota // the setting that bounds the caller's waits
	stopsSummary                           // heads an interrupted wait's error where the caller guards a change; "": a warning
	settingsFrom                           // follows advice to change a setting the caller reads from the state
	wayOut                                 // follows a refusal or failure that repeating may not mend
	onInterrupt                            // after an interrupted wait
	onTimeout                              // after a wait that timed out
	onFailure                              // after a failed backup
	onUnidentified                         // after a backup queued (or perhaps queued) and not identified, that what follows waits for
	onUnidentifiedUnwaited                 // the same, for a trigger that does not wait for it
	onUnread                               // after a stopped operation's backup could not be read
)

const (
	resumesWait = "The next apply resumes waiting for this same backup, without queueing another."
	takesNew    = "The next apply takes a new backup."
	recordsNone = "The action records nothing: follow the backup with the backup_account_backups data source."
	destroyKeep = "The destroy stopped and this resource is kept; a destroy {until} "
	// One wording for a stopped destroy's next one, interrupted or timed out: the record is the same.
	destroyFollows = "follows this same backup, waiting while it is in progress, instead of queueing another; a later one takes a new backup."
)

// createFollowUps: a trigger's create.
var createFollowUps = map[followUp]string{
	timeoutName: "timeouts.create",
	onInterrupt: resumesWait,
	onTimeout: "The trigger is tainted; the next apply replaces it, and the replacement waits for this same backup while it is in " +
		"progress instead of queueing another. With create_before_destroy on the trigger, the replacement is created first and " +
		"takes a new backup: remove it, or untaint the trigger (terraform untaint, or tofu untaint) so that the next apply resumes " +
		"this wait in place.",
	onFailure: takesNew,
	onUnidentified: "The trigger is saved without a backup id, and tainted: the next apply looks for this " +
		"backup before anything else, and the change goes ahead only once a backup for it is found (and, with wait_for_completion, has succeeded).",
	onUnidentifiedUnwaited: "The trigger is saved without a backup id: the next refresh looks for this backup and records it, and no " +
		"new trigger is sent for this change.",
}

// resumeFollowUps: a trigger's update that resumes its wait, or an import's first apply.
var resumeFollowUps = map[followUp]string{
	timeoutName:            "timeouts.create",
	onInterrupt:            resumesWait,
	onTimeout:              "The next apply resumes waiting for it.",
	onFailure:              takesNew,
	onUnidentified:         "The trigger stays saved without a backup id: the next apply looks for this backup again.",
	onUnidentifiedUnwaited: "The trigger stays saved without a backup id: the next refresh looks for this backup again.",
}

// destroyFollowUps: a guard's destroy.
var destroyFollowUps = map[followUp]string{
	timeoutName:  "timeouts.delete",
	stopsSummary: "The wait for its backup was interrupted",
	settingsFrom: "A destroy uses timeouts.delete, on_conflict and resume_within as the state holds them: change them and apply before " +
		"destroying again (that apply clears the pending backup, so the next destroy takes a new one; with the guard's block removed, " +
		"they cannot change: see Troubleshooting in the provider's documentation).",
	wayOut: "If the account cannot be backed up and the destroy must go ahead without a backup, name it in the provider's " +
		"destroy_without_backup (with a reason), or forget this guard instead of destroying it: a removed block with " +
		"lifecycle { destroy = false } (1.7+), or state rm (see Troubleshooting in the provider's documentation).",
	onInterrupt: "The destroy stopped: neither this resource nor the resources it guards (those it depends on) were destroyed. " +
		"A destroy {until} " + destroyFollows,
	onTimeout:      destroyKeep + destroyFollows,
	onFailure:      "The destroy stopped and this resource is kept, with the resources it guards; destroying again takes a new backup.",
	onUnidentified: destroyKeep + "looks for this backup before it sends any new trigger; a later one takes a new backup.",
	onUnread:       destroyKeep + "looks for this same backup again instead of queueing another; a later one takes a new backup.",
}

// invokeFollowUps: the action's invocation.
var invokeFollowUps = map[followUp]string{
	timeoutName:  "timeouts.invoke",
	stopsSummary: "Interrupted before the backup was seen to succeed",
	onInterrupt:  "The invocation fails, since it did not see a good backup: a change it guards does not go ahead. " + recordsNone,
	onTimeout:    recordsNone,
	onUnidentified: "The action records nothing: look for it among the account's backups (data source backup_account_backups) " +
		"before invoking the action again.",
}

// says is what the caller says of f, naming a stopped destroy's moment.
func (c caller) says(f followUp) string {
	before := "within resume_within of this stop"
	if !c.until.IsZero() {
		before = "before " + c.until.UTC().Format(time.RFC3339) + " (pending_destroy_backup.counts_until: this stop plus resume_within)"
	}
	return strings.ReplaceAll(c.followUp[f], "{until}", before)
}

// report turns an outcome into diagnostics in the caller's terms; nothing is said of a good one.
func report(diags *diag.Diagnostics, by caller, timeout time.Duration, o workflow.Outcome) {
	accountID := o.AccountID
	summary := fmt.Sprintf("Unable to trigger a backup of account %s", accountID)
	at := path.Root("account_id")
	reportReuseRefused(diags, o)
	switch o.Kind {
	case workflow.Succeeded:
	case workflow.NotWaited:
		if !o.Good(false) {
			// Not waited for, yet already seen to have ended badly: the change must not go ahead.
			if o.Err == nil {
				o.Err = fmt.Errorf("backup %s of account %s reads %q, but its record contradicts itself", o.Backup.ID, accountID, o.Backup.Status)
			}
			reportFailed(diags, by, o)
		}
	case workflow.Unsettled:
		unsettled(diags, by, timeout, o)
	case workflow.Failed:
		reportFailed(diags, by, o)
	case workflow.NotIdentified:
		what := "The Backup Service accepted the trigger (a backup was queued)"
		if !o.Confirmed {
			what = "The outcome of the trigger is unknown (a backup may have been queued)"
		}
		diags.AddAttributeError(at, summary, fmt.Sprintf("%s at %s, but no record of it could be found in the account's backups, "+
			"so its outcome cannot be followed. %s\n\n%s", what, o.TriggeredAt.UTC().Format(time.RFC3339), by.says(onUnidentified), describeError(o.Err)))
	case workflow.Refused:
		var wait *workflow.ConflictWaitError
		var unread *workflow.UnreadError
		switch {
		case errors.As(o.Err, &wait):
			conflictNotOver(diags, by, summary, timeout, o, wait)
		case errors.As(o.Err, &unread) && unread.BackupID == "":
			diags.AddError(fmt.Sprintf("Unable to look for the backup of the earlier trigger of account %s", accountID),
				describeError(unread.Err, by.says(onUnread)))
		case errors.As(o.Err, &unread):
			diags.AddError(fmt.Sprintf("Unable to read backup %s of account %s", unread.BackupID, accountID), describeError(unread.Err, by.says(onUnread)))
		default:
			refused(diags, by, summary, o.Err)
		}
	default:
		diags.AddError(summary, fmt.Sprintf("The run ended in an outcome this release does not know (%d): no good backup.", o.Kind))
	}
}

// reportReuseRefused says why reuse_within took no recent backup, when it could not be read; nothing otherwise.
func reportReuseRefused(diags *diag.Diagnostics, o workflow.Outcome) {
	if o.ReuseRefused == nil {
		return
	}
	advice := "Check the clock of this machine (NTP) and of anything between it and the Backup Service."
	if errors.Is(o.ReuseRefused, workflow.ErrNoEarlierChange) || errors.Is(o.ReuseRefused, workflow.ErrEmptyEarlierChange) {
		advice = "The next replacement of this trigger counts a recent backup listed since this one's change went ahead."
	}
	diags.AddAttributeWarning(path.Root("reuse_within"), fmt.Sprintf("reuse_within not applied to account %s", o.AccountID),
		fmt.Sprintf("No recent backup was reused: %v. A new backup was taken instead. %s", o.ReuseRefused, advice))
}

// conflictNotOver says that the wait for another's backup stopped, and that none was queued.
func conflictNotOver(diags *diag.Diagnostics, by caller, summary string, timeout time.Duration, o workflow.Outcome, wait *workflow.ConflictWaitError) {
	at := path.Root("account_id")
	switch {
	case errors.Is(o.Err, context.DeadlineExceeded):
		running := "A backup of account " + o.AccountID
		if wait.Running != nil {
			running = fmt.Sprintf("Backup %s of account %s", wait.Running.ID, o.AccountID)
		}
		diags.AddAttributeError(at, summary, strings.TrimSpace(fmt.Sprintf("%s was already in progress and had not finished after %s (%s is %s). "+
			"No backup was queued. Raise %s, or set on_conflict = \"fail\" to fail at once. %s",
			running, o.Waited.Round(time.Second), by.says(timeoutName), timeout, by.says(timeoutName), by.says(settingsFrom))))
	case errors.Is(o.Err, context.Canceled):
		diags.AddAttributeError(at, summary, "Interrupted while waiting for a backup already in progress; no backup was queued "+
			"for this change: running it again starts over.")
	default:
		diags.AddError(summary, describeError(fmt.Errorf("waiting %s for the backup already in progress: %w", o.Waited.Round(time.Second), wait.Err)))
	}
}

// unsettled says why the wait for a backup that goes on stopped: interrupted, out of time, or unable to follow it.
func unsettled(diags *diag.Diagnostics, by caller, timeout time.Duration, o workflow.Outcome) {
	accountID := o.AccountID
	switch {
	case errors.Is(o.Err, context.Canceled):
		summary, add := "Waiting for the backup was interrupted", diags.AddWarning
		if stops := by.says(stopsSummary); stops != "" {
			summary, add = stops, diags.AddError
		}
		add(summary, strings.TrimSpace(fmt.Sprintf("Backup %s of account %s was %s when the wait was interrupted after %s. It goes on in the Backup Service. %s",
			o.Backup.ID, accountID, o.Backup.Status, o.Waited.Round(time.Second), by.says(onInterrupt))))
	case errors.Is(o.Err, context.DeadlineExceeded):
		diags.AddError("Backup still in progress",
			strings.TrimSpace(fmt.Sprintf("Backup %s of account %s was still %s after waiting %s (%s is %s). It goes on in the Backup Service. %s "+
				"Raise %s to wait longer. %s",
				o.Backup.ID, accountID, o.Backup.Status, o.Waited.Round(time.Second), by.says(timeoutName), timeout, by.says(onTimeout),
				by.says(timeoutName), by.says(settingsFrom))))
	default:
		addAPIError(diags, fmt.Sprintf("Unable to follow backup %s of account %s (last seen %s, after waiting %s)",
			o.Backup.ID, accountID, o.Backup.Status, o.Waited.Round(time.Second)), o.Err)
	}
}

// reportFailed says that the backup ended, and not in a success that counts.
func reportFailed(diags *diag.Diagnostics, by caller, o workflow.Outcome) {
	summary, what := "Backup did not succeed", fmt.Sprintf("Backup %s of account %s ended with status %q: %s", o.Backup.ID, o.AccountID, o.Backup.Status, o.Reason())
	if o.Backup.Status == client.StatusSuccess {
		summary, what = "Backup does not count for this change", describeError(o.Err)+": a success whose record contradicts itself, "+
			"or that started before this change, is not a good backup for it."
	}
	diags.AddError(summary, strings.TrimSpace(fmt.Sprintf("%s\n\n%s %s", what, by.says(onFailure), by.says(wayOut))))
}

// refused says why no backup was queued.
func refused(diags *diag.Diagnostics, by caller, summary string, err error) {
	at := path.Root("account_id")
	var past *client.RetryError
	switch {
	case errors.Is(err, client.ErrConflict):
		// The service's answer says that a backup is in progress: the hint says only what follows from it.
		diags.AddAttributeError(at, summary, describeError(err, "With on_conflict = \"fail\", the provider does not wait for that backup to end: no backup was queued. "+
			strings.TrimSpace("Set on_conflict = \"wait\" to wait for it and then take a new backup. "+by.says(settingsFrom))))
	case errors.Is(err, client.ErrUnprocessable):
		diags.AddAttributeError(at, summary, describeError(err, strings.TrimSpace("The account cannot be backed up in its current state (for "+
			"example paused, a lapsed subscription, or a connection needing re-authorization); fix that in the Backup Service web "+
			"application. "+by.says(wayOut))))
	case errors.Is(err, client.ErrWrongOrganization):
		diags.AddError(summary, describeError(err, wrongOrganizationHint))
	case errors.Is(err, client.ErrNotFound), errors.Is(err, client.ErrForbidden):
		diags.AddAttributeError(at, summary, describeError(err))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.As(err, &past) && past.Cause == client.RetryPastDeadline:
		// Stopped before a trigger was sent, or while a refused one (429) waited to be sent again: say what a user cannot tell.
		diags.AddError(summary, describeError(err, "No backup was queued: the trigger was not sent, or the service refused it unprocessed."))
	default:
		diags.AddError(summary, describeError(err))
	}
}

// progress reports each event once: in the log at INFO and, when say is set, to the user.
func progress(ctx context.Context, say func(string, ...any), accountID string) func(workflow.Event) {
	return func(ev workflow.Event) {
		msg := progressLine(ev, accountID)
		if msg == "" {
			return
		}
		// The log line is a phrase: the log adds ": " and the fields after it.
		tflog.Info(ctx, strings.TrimSuffix(msg, "."), map[string]any{"account_id": accountID, "backup_id": ev.Backup.ID, "status": ev.Backup.Status})
		if say != nil {
			say("%s", msg)
		}
	}
}

// progressLine is what an event says, as a sentence; "" for none. Its "[… elapsed]" counts from the operation's start, as
// Terraform's "Still creating..." does: a wait for another's backup first is in it.
func progressLine(ev workflow.Event, accountID string) string {
	elapsed := ev.Elapsed.Round(time.Second)
	switch ev.Kind {
	case workflow.EventConflict:
		if ev.Elapsed >= workflow.StillWaitingEvery {
			return fmt.Sprintf("Still waiting for backup %s of account %s, which was already in progress (%s), before queueing a new one [%s elapsed].",
				ev.Backup.ID, accountID, ev.Backup.Status, elapsed)
		}
		return fmt.Sprintf("Backup %s of account %s is already in progress (%s); waiting for it before queueing a new one.", ev.Backup.ID, accountID, ev.Backup.Status)
	case workflow.EventQueued:
		return fmt.Sprintf("Queued backup %s of account %s (%s).", ev.Backup.ID, accountID, ev.Backup.Status)
	case workflow.EventStatus:
		if ev.Previous != ev.Backup.Status {
			return fmt.Sprintf("Backup %s: %s -> %s [%s elapsed].", ev.Backup.ID, ev.Previous, ev.Backup.Status, elapsed)
		}
		return fmt.Sprintf("Backup %s of account %s still %s [%s elapsed].", ev.Backup.ID, accountID, ev.Backup.Status, elapsed)
	case workflow.EventReused:
		return fmt.Sprintf("Reused backup %s of account %s (%s, started %s ago): no backup queued (reuse_within).",
			ev.Backup.ID, accountID, ev.Backup.Status, ev.Age.Round(time.Second))
	case workflow.EventDone:
		completed := "unknown"
		if ev.Backup.CompletedAt != nil {
			completed = ev.Backup.CompletedAt.UTC().Format(time.RFC3339)
		}
		return fmt.Sprintf("Backup %s of account %s ended: %s, completed at %s [%s elapsed].", ev.Backup.ID, accountID, ev.Backup.Status, completed, elapsed)
	}
	return ""
}

// reportUnidentified says what is known of an unidentified trigger (its account, triggered_at and
// prior_backup_ids): a warning when the apply goes on past it (Outcome.UnidentifiedGoesOn), else an error.
func reportUnidentified(m *triggerModel, o workflow.Outcome, diags *diag.Diagnostics, by caller) {
	what := " and the Backup Service accepted it (a backup was queued), but"
	if !o.Confirmed {
		what = ", but the outcome of the request is unknown (the service may have queued a backup), and"
	}
	summary, add, next := "Backup queued but not identified", diags.AddAttributeError, by.says(onUnidentified)
	if o.UnidentifiedGoesOn(m.WaitForCompletion.ValueBool()) { // a warning: the apply, and the change, go ahead now
		summary, add, next = "Backup queued but not identified yet", diags.AddAttributeWarning, by.says(onUnidentifiedUnwaited)
	}
	wayOut := fmt.Sprintf("If you know that no backup was queued, `terraform apply -replace` on this resource looks once more and, "+
		"if still none is listed, sends a new trigger (after %s from this one, the time an unanswered request is given to show up).",
		workflow.DefaultUncertainGrace)
	switch {
	case errors.Is(o.Err, workflow.ErrListingLost):
		// A later look finds it once the service's own listing answers; one whose read before it was another's never does.
		wayOut = "While the listings disagree so, no other trigger is sent for this change, -replace included; a later look finds " +
			"this one once the service's own listing answers. If every look fails so, the read before the trigger came from another " +
			"listing: if the account's backups (data source backup_account_backups) show the one it queued, record it: " +
			"`terraform state rm` this resource, then `terraform import` it with acc_.../bkp_...; else a new `triggers` value " +
			"takes a new backup for a new change, once a backup is listed since this trigger."
	case o.Confirmed:
		// Accepted: sending again could queue a second backup for the change, whatever a lagging listing shows.
		wayOut = "The service accepted this trigger (trigger_accepted), so no other is sent for this change, -replace included; " +
			"a new `triggers` value takes a new backup for a new change."
		if o.UnidentifiedGoesOn(m.WaitForCompletion.ValueBool()) {
			wayOut = strings.TrimSuffix(wayOut, ".") + " once a backup is listed since this trigger: until then its replacement, " +
				"as a destroy, fails and keeps it, so that no later trigger takes this one's backup for its own."
		}
	}
	add(path.Root("id"), summary, fmt.Sprintf("A backup of account %s was triggered at %s%s the account's backups list none "+
		"above those they listed just before it (prior_backup_ids):\n\n%s\n\n%s %s",
		m.AccountID.ValueString(), timeValue(o.TriggeredAt).ValueString(), what, describeError(o.Err), next, wayOut))
}
