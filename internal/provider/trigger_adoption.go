package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// runOrAdopt takes the trigger's backup. When this create replaces a
// trigger deleted earlier in the command (Terraform replaces a tainted
// one: its wait timed out, or its backup was not identified) with the
// same account and triggers, that trigger's backup belongs to the same
// change: while it is in progress it is followed instead of queueing a
// second one, and if it succeeded after the timeout it is this change's
// backup (workflow.Record.Adoptable). Otherwise a new backup is queued.
func (r *triggerResource) runOrAdopt(ctx context.Context, plan *triggerModel, opts workflow.RunOptions) (workflow.Outcome, time.Time) {
	accountID := plan.AccountID.ValueString()
	w := r.data.runner
	old, ok := r.data.command.take(accountID, triggersKey(plan.Triggers))
	// A backup that started before a replaced trigger went ahead is the
	// previous change's, never this one's (workflow.Rule.After); a tainted
	// trigger with the same triggers is this change's own.
	opts.After = r.data.command.after(accountID)
	if !ok {
		return w.Run(ctx, accountID, opts), opts.After
	}
	// Not adopted, its backup is the previous change's.
	renewAfter := opts.After
	if t := old.Record.WentAhead(); t.After(renewAfter) {
		renewAfter = t
	}
	if old.Record.Since.After(opts.After) {
		opts.After = old.Record.Since
	}
	tflog.Info(ctx, "following the backup of the replaced trigger, queued for the same change", map[string]any{"record": old.Record.String()})
	adoptable := func(b client.Backup) bool { return old.Record.Adoptable(b, old.wait) }
	o := w.Follow(ctx, accountID, old.Record.Unconfirmed(), workflow.FollowOptions{RunOptions: opts, Counts: adoptable, Renew: true, RenewAfter: renewAfter})
	if o.Kind == workflow.Unreadable {
		// Nothing to adopt that can be seen: queue a new backup, as a
		// replacement does.
		tflog.Warn(ctx, "could not read the replaced trigger's backup; queueing a new one", map[string]any{"backup_id": o.BackupID, "error": o.Err.Error()})
		opts.After = renewAfter
		return w.Run(ctx, accountID, opts), opts.After
	}
	if o.Backup != nil && old.Record.BackupID != "" && o.Backup.ID != old.Record.BackupID {
		return o, renewAfter // renewed: a new change
	}
	return o, opts.After
}

// rememberForReplacement keeps, for the rest of the command, what the
// Create that replaces this trigger (same account, same triggers) needs to
// adopt its backup instead of queueing a second one (see commandState).
// A record that cannot be read is not remembered: the replacement then
// takes a new backup, and the destroy is not failed for it.
func (r *triggerResource) rememberForReplacement(ctx context.Context, state *triggerModel, private privateGetter, timeout time.Duration) {
	var diags diag.Diagnostics
	rec, ok := triggerRecord(ctx, state, private, &diags)
	if !ok {
		return
	}
	if !state.WaitForCompletion.ValueBool() {
		timeout = 0
	}
	r.data.command.remember(state.AccountID.ValueString(), triggersKey(state.Triggers), rec, timeout)
}
