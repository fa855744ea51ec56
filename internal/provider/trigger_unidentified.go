package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// A trigger whose backup could not be identified (workflow.NotIdentified:
// queued, or perhaps queued, but never listed) is saved with what is known:
// the account, triggered_at (when the trigger began, on this machine's
// clock) and a null id and backup_status. Every later operation looks for
// that backup before it sends anything: a refresh, once; the next apply,
// for a bounded time, then waits for it as for any backup. A new trigger is
// sent only when the first one's outcome was unknown and no backup of it
// appeared within the client's grace period, or when the user replaces the
// resource.

// recordUnidentified sets the model to what is known of an unidentified
// trigger and says so: as an error when the caller waits for the backup
// (it cannot have succeeded as far as anyone can tell), as a warning
// otherwise (the backup was queued, which is all wait_for_completion =
// false promises). An unknown outcome is always an error.
func recordUnidentified(ctx context.Context, m *triggerModel, prior workflow.Record, o workflow.Outcome, private privateSetter, diags *diag.Diagnostics, by caller) {
	rec := prior.After(o)
	m.setRecord(rec)
	saveRecord(ctx, private, rec, diags)

	accountID := m.AccountID.ValueString()
	var b []byte
	b = fmt.Appendf(b, "A backup of account %s was triggered at %s", accountID, m.TriggeredAt.ValueString())
	if o.Confirmed {
		b = append(b, " and the Backup Service accepted it (a backup was queued), but"...)
	} else {
		b = append(b, ", but the outcome of the request is unknown (the service may have queued a backup), and"...)
	}
	b = append(b, " no record of it could be found in the account's backups:\n\n"...)
	b = append(b, describeError(o.Err)...)
	waits := m.WaitForCompletion.ValueBool()
	next := by.says(onUnidentifiedUnwaited)
	if waits || !o.Confirmed {
		next = by.says(onUnidentified)
	}
	b = fmt.Appendf(b, "\n\n%s If you know that no backup was queued, `terraform apply -replace` on this resource sends a new trigger.", next)
	if waits || !o.Confirmed {
		diags.AddAttributeError(path.Root("id"), "Backup queued but not identified", string(b))
	} else {
		diags.AddAttributeWarning(path.Root("id"), "Backup queued but not identified yet", string(b))
	}
}

// readUnidentified is the refresh of a trigger recorded without its backup
// id that does not wait for its backup: one look at the account's
// backups. Found, the backup is recorded; not found, the state stays as it
// is (the plan then proposes an update that looks again).
func (r *triggerResource) readUnidentified(ctx context.Context, m *triggerModel, rec workflow.Record, resp *resource.ReadResponse) {
	accountID := m.AccountID.ValueString()
	b, err := r.data.runner.FindTriggered(ctx, accountID, rec.TriggeredAt, rec.TriggeredOnService, rec.Since)
	switch {
	case errors.Is(err, client.ErrGone):
		removeTrigger(ctx, resp, accountID, "(never identified, triggered at "+m.TriggeredAt.ValueString()+")", err)
		return
	case err != nil:
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to look for the backup of the trigger of account %s (triggered at %s)",
			accountID, m.TriggeredAt.ValueString()), err)
		return
	case b == nil:
		return
	}
	r.refreshed(ctx, m, rec, rec.Observe(*b), resp)
	setIdentity(ctx, resp.Identity, accountID, b.ID, &resp.Diagnostics)
}
