package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// adoptReplaced handles the replacement of a trigger whose wait timed out
// in an earlier apply (Terraform replaces it, since it was tainted). Its
// backup belongs to the same change when account and triggers are the
// same: while it is in progress it is waited for instead of queueing a
// second one, and if it succeeded after the timeout it is this change's
// backup. It returns nil, nil when there is nothing to adopt.
func (r *triggerResource) adoptReplaced(ctx context.Context, plan *triggerModel, opts client.RunOptions) (*client.Backup, error) {
	old, ok := r.data.command.take(plan.AccountID.ValueString(), triggersKey(plan.Triggers))
	if !ok {
		return nil, nil
	}
	c := r.data.client
	if old.backupID == "" {
		// Its backup was never identified: look for it before any POST. A
		// replacement may queue a new one once no backup of it was listed
		// for a whole apply (ResumeTrigger's grace).
		tflog.Info(ctx, "looking for the backup of the replaced trigger, recorded without its id", map[string]any{"triggered_at": old.triggeredAt})
		return c.ResumeTrigger(ctx, plan.AccountID.ValueString(), old.triggeredAt, false, opts)
	}
	b, err := c.FindBackup(ctx, plan.AccountID.ValueString(), old.backupID)
	if err != nil {
		// Nothing to adopt that can be seen: queue a new backup, as a
		// replacement does.
		tflog.Warn(ctx, "could not read the replaced trigger's backup; queueing a new one", map[string]any{"backup_id": old.backupID, "error": err.Error()})
		return nil, nil //nolint:nilerr // not an error of this Create
	}
	finishedLate := b.Status == client.StatusSuccess && old.waited && b.CompletedAt != nil &&
		b.CompletedAt.Sub(b.CreatedAt) > old.waitTimeout
	if !client.InProgress(b.Status) && !finishedLate {
		return nil, nil
	}
	tflog.Info(ctx, "adopting the backup of the replaced trigger, queued for the same change", map[string]any{"backup_id": b.ID, "status": b.Status})
	if opts.Progress != nil {
		opts.Progress(client.Event{Kind: client.EventQueued, Backup: *b})
	}
	if !opts.WaitForCompletion || !client.InProgress(b.Status) {
		return b, nil
	}
	return c.WaitForBackup(ctx, plan.AccountID.ValueString(), *b, opts.Poll, opts.Progress)
}

// rememberForReplacement keeps, for the rest of the command, what the
// Create that replaces this trigger (same account, same triggers) needs to
// adopt its backup instead of queueing a second one (see commandState).
func (r *triggerResource) rememberForReplacement(state *triggerModel, timeout time.Duration) {
	triggeredAt, _ := state.TriggeredAt.ValueRFC3339Time()
	r.data.command.remember(state.AccountID.ValueString(), replacedTrigger{
		backupID: state.ID.ValueString(), triggers: triggersKey(state.Triggers),
		waited: state.WaitForCompletion.ValueBool(), waitTimeout: timeout, triggeredAt: triggeredAt,
	})
}
