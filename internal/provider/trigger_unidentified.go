package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// A trigger whose backup could not be identified (client.UnidentifiedError:
// queued, or perhaps queued, but never listed) is saved with what is known:
// the account, triggered_at (when the trigger began, on this machine's
// clock) and a null id and backup_status. Every later operation looks for
// that backup before it sends anything: a refresh, once; the next apply,
// for a bounded time, then waits for it as for any backup. A new trigger is
// sent only when the first one's outcome was unknown and no backup of it
// appeared within the client's grace period, or when the user replaces the
// resource.

// privateUnconfirmed marks a trigger recorded after a request whose outcome
// was unknown: the service may never have queued its backup.
const privateUnconfirmed = "unconfirmed"

// recordUnidentified sets the model to what is known of an unidentified
// trigger and says so: as an error when the caller waits for the backup
// (it cannot have succeeded as far as anyone can tell), as a warning
// otherwise (the backup was queued, which is all wait_for_completion =
// false promises). An unknown outcome is always an error.
func recordUnidentified(ctx context.Context, m *triggerModel, ue *client.UnidentifiedError, private privateSetter, diags *diag.Diagnostics, by caller) {
	m.ID, m.BackupStatus, m.CompletedAt = types.StringNull(), types.StringNull(), timetypes.NewRFC3339Null()
	m.TriggeredAt = timetypes.NewRFC3339TimeValue(ue.TriggeredAt.UTC())
	var mark []byte
	if !ue.Queued {
		mark = []byte(`true`)
	}
	diags.Append(private.SetKey(ctx, privateUnconfirmed, mark)...)

	accountID := m.AccountID.ValueString()
	var b []byte
	b = fmt.Appendf(b, "A backup of account %s was triggered at %s", accountID, m.TriggeredAt.ValueString())
	if ue.Queued {
		b = append(b, " and the Backup Service accepted it (a backup was queued), but"...)
	} else {
		b = append(b, ", but the outcome of the request is unknown (the service may have queued a backup), and"...)
	}
	b = append(b, " no record of it could be found in the account's backups:\n\n"...)
	b = append(b, describeError(ue.Err)...)
	waits := m.WaitForCompletion.ValueBool()
	next := by.unidentifiedNotWaiting
	if waits || !ue.Queued {
		next = by.unidentifiedWaiting
	}
	b = fmt.Appendf(b, "\n\n%s If you know that no backup was queued, `terraform apply -replace` on this resource sends a new trigger.", next)
	if waits || !ue.Queued {
		diags.AddAttributeError(path.Root("id"), "Backup queued but not identified", string(b))
	} else {
		diags.AddAttributeWarning(path.Root("id"), "Backup queued but not identified yet", string(b))
	}
}

// privateSetter is the part of a response's private state this file uses.
type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// readUnidentified is the refresh of a trigger recorded without its backup
// id that does not wait for its backup: one look at the account's backups. Found, the backup is recorded;
// not found, the state stays as it is (the plan then proposes an update
// that looks again).
func (r *triggerResource) readUnidentified(ctx context.Context, prior map[string]types.String, resp *resource.ReadResponse) {
	accountID := prior["account_id"].ValueString()
	began, err := time.Parse(time.RFC3339, prior["triggered_at"].ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Unreadable backup_trigger state",
			fmt.Sprintf("The trigger of account %s has no backup id and no valid triggered_at (%q).", accountID, prior["triggered_at"].ValueString()))
		return
	}
	b, err := r.data.client.FindTriggered(ctx, accountID, began)
	switch {
	case errors.Is(err, client.ErrNotFound):
		resp.Diagnostics.AddWarning("Backup trigger removed from state",
			fmt.Sprintf("The Backup Service no longer knows account %s: the account was deleted, or is no longer visible to this API key. "+
				"The trigger, whose backup was never identified, is removed from the state.", accountID))
		resp.State.RemoveResource(ctx)
		return
	case err != nil:
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to look for the backup of the trigger of account %s (triggered at %s)",
			accountID, prior["triggered_at"].ValueString()), err)
		return
	case b == nil:
		return
	}
	var now triggerModel
	now.setBackup(b)
	for name, v := range map[string]types.String{
		"id": now.ID, "backup_status": now.BackupStatus, "triggered_at": now.TriggeredAt.StringValue, "completed_at": now.CompletedAt.StringValue,
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), v)...)
	}
	setIdentity(ctx, resp.Identity, accountID, b.ID, &resp.Diagnostics)
}

// resumeUnidentified is the update of a trigger recorded without its
// backup id that the refresh did not find either.
func (r *triggerResource) resumeUnidentified(ctx context.Context, plan, state *triggerModel, timeout time.Duration, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	accountID := state.AccountID.ValueString()
	began, diags := state.TriggeredAt.ValueRFC3339Time()
	if diags.HasError() {
		resp.Diagnostics.AddError("Unreadable backup_trigger state",
			fmt.Sprintf("The trigger of account %s has no backup id and no valid triggered_at (%q).", accountID, state.TriggeredAt.ValueString()))
		return
	}
	unconfirmed, diags := req.Private.GetKey(ctx, privateUnconfirmed)
	resp.Diagnostics.Append(diags...)
	b, err := r.data.client.ResumeTrigger(ctx, accountID, began, len(unconfirmed) == 0, r.runOptions(ctx, plan))
	var ue *client.UnidentifiedError
	switch {
	case errors.As(err, &ue):
		plan.TriggeredAt = state.TriggeredAt
		recordUnidentified(ctx, plan, ue, resp.Private, &resp.Diagnostics, resumeCaller)
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
		return
	case b == nil:
		addTriggerError(&resp.Diagnostics, resumeCaller, accountID, timeout, err)
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateUnconfirmed, nil)...)
	plan.setBackup(b)
	reportWait(&resp.Diagnostics, resumeCaller, accountID, timeout, err)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	setIdentity(ctx, resp.Identity, accountID, b.ID, &resp.Diagnostics)
}
