package provider

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/lifecycle"
)

// runOrAdopt takes the trigger's backup. When this create replaces a
// trigger deleted earlier in the command (Terraform replaces a tainted
// one: its wait timed out, or its backup was not identified) with the
// same account and triggers, that trigger's backup belongs to the same
// change: while it is in progress it is followed instead of queueing a
// second one, and if it succeeded after the timeout it is this change's
// backup (lifecycle.Replaced.Adoptable). Otherwise a new backup is queued.
func (r *triggerResource) runOrAdopt(ctx context.Context, plan *triggerModel, opts client.RunOptions) (*client.Backup, error) {
	accountID := plan.AccountID.ValueString()
	c := r.data.client
	old, ok := r.data.command.take(accountID, triggersKey(plan.Triggers))
	if !ok {
		return c.RunBackup(ctx, accountID, opts)
	}
	tflog.Info(ctx, "following the backup of the replaced trigger, queued for the same change", map[string]any{"record": old.Record.String()})
	b, err := c.Follow(ctx, accountID, old.Known(), client.FollowOptions{RunOptions: opts, Counts: old.Adoptable, Renew: true})
	var unreadable *client.UnreadableError
	if errors.As(err, &unreadable) {
		// Nothing to adopt that can be seen: queue a new backup, as a
		// replacement does.
		tflog.Warn(ctx, "could not read the replaced trigger's backup; queueing a new one", map[string]any{"backup_id": unreadable.BackupID, "error": unreadable.Err.Error()})
		return c.RunBackup(ctx, accountID, opts)
	}
	return b, err
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
	p := lifecycle.Replaced{Record: rec}
	if state.WaitForCompletion.ValueBool() {
		p.Wait = timeout
	}
	r.data.command.remember(state.AccountID.ValueString(), triggersKey(state.Triggers), p)
}
