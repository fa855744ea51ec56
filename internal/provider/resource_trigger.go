package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/ids"
)

// benchNoopRead makes Read do nothing, in the build `make bench` uses to
// measure the refresh floor of Terraform and the plugin protocol (build tag
// benchnoopread); it is false in every other build.
var benchNoopRead = false

const (
	defaultCreateTimeout = 30 * time.Minute
	onConflictWait       = "wait"
	onConflictFail       = "fail"
)

var (
	_ resource.ResourceWithConfigure   = (*triggerResource)(nil)
	_ resource.ResourceWithImportState = (*triggerResource)(nil)
)

// triggerResource is backup_trigger: one on-demand backup, taken when the
// resource is created (or replaced, when account_id or triggers change).
type triggerResource struct {
	client *client.Client
	poll   pollSettings
}

type triggerModel struct {
	ID                types.String   `tfsdk:"id"`
	AccountID         types.String   `tfsdk:"account_id"`
	Triggers          types.Map      `tfsdk:"triggers"`
	WaitForCompletion types.Bool     `tfsdk:"wait_for_completion"`
	OnConflict        types.String   `tfsdk:"on_conflict"`
	BackupStatus      types.String   `tfsdk:"backup_status"`
	TriggeredAt       types.String   `tfsdk:"triggered_at"`
	CompletedAt       types.String   `tfsdk:"completed_at"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
}

// setBackup copies what the service says of the backup into the model.
func (m *triggerModel) setBackup(b *client.Backup) {
	bm := backupToModel(*b)
	m.ID, m.BackupStatus, m.TriggeredAt, m.CompletedAt = bm.ID, bm.Status, bm.CreatedAt, bm.CompletedAt
}

func (r *triggerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_trigger"
}

func (r *triggerResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		Description: "Triggers one on-demand backup of an account when it is created, and follows its outcome. " +
			"A new backup is taken only when the resource is created or replaced (a change of `account_id` or `triggers`); " +
			"applying an unchanged configuration takes none. Destroying the resource only removes it from the state: " +
			"backups are never deleted.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, PlanModifiers: keep,
				Description: "Id of the backup this resource queued (`bkp_...`).",
			},
			"account_id": schema.StringAttribute{
				Required:      true,
				Description:   "Id of the account to back up: `acc_` followed by exactly 16 letters or digits. Changing it takes a new backup.",
				Validators:    []validator.String{accountIDValidator()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"triggers": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				Description: "Arbitrary values; any change takes a new backup, for example `{ release = var.release }`.",
				PlanModifiers: []planmodifier.Map{
					mapplanmodifier.RequiresReplace(),
				},
			},
			"wait_for_completion": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "Wait, within `timeouts.create`, until the backup has finished, and fail the apply unless it succeeded " +
					"(the resource is then tainted, so the next apply triggers again). Defaults to `false`: the apply returns once the backup is queued.",
			},
			"on_conflict": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(onConflictWait),
				Description: "What to do when a backup of the account is already in progress: `wait` (the default) waits for it to finish, " +
					"within `timeouts.create`, then queues a new one, so that the backup reflects this apply; `fail` fails the apply.",
				Validators: []validator.String{stringvalidator.OneOf(onConflictWait, onConflictFail)},
			},
			"backup_status": schema.StringAttribute{
				Computed: true, PlanModifiers: keep,
				Description: "Status of the backup when last read: `pending`, `running`, `success` or `failed` " +
					"(the service may add values; only `success` is a good backup).",
			},
			"triggered_at": schema.StringAttribute{
				Computed: true, PlanModifiers: keep,
				Description: "When the backup was queued, RFC 3339 in UTC.",
			},
			"completed_at": schema.StringAttribute{
				Computed: true, PlanModifiers: keep,
				Description: "When the backup ended, RFC 3339 in UTC; null while it is in progress.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{
				Create: true,
				CreateDescription: "How long creation may take, waits included (for a backup already in progress, and for " +
					"completion), as a duration such as `30m`. Defaults to `30m`.",
			}),
		},
	}
}

func (r *triggerResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *triggerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan triggerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultCreateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	accountID := plan.AccountID.ValueString()
	ctx = tflog.SetField(ctx, "account_id", accountID)

	b, err := r.trigger(ctx, accountID, plan.OnConflict.ValueString() == onConflictWait)
	if err != nil {
		addTriggerError(&resp.Diagnostics, accountID, timeout, err)
		return
	}
	plan.setBackup(b)
	tflog.Info(ctx, "backup queued", map[string]any{"backup_id": b.ID, "status": b.Status})

	if plan.WaitForCompletion.ValueBool() {
		final, err := waitForBackup(ctx, r.client, r.poll, b, func(b *client.Backup) {
			tflog.Info(ctx, "waiting for the backup to finish", map[string]any{
				"backup_id": b.ID, "status": b.Status, "elapsed": time.Since(b.CreatedAt).Round(time.Second).String(),
			})
		})
		plan.setBackup(final)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			resp.Diagnostics.AddError("Backup still running",
				fmt.Sprintf("Backup %s of account %s is still %s after %s (timeouts.create). It goes on in the Backup Service; "+
					"this resource is saved as tainted, so the next apply triggers a new backup. Raise timeouts.create to wait longer.",
					plan.ID.ValueString(), accountID, plan.BackupStatus.ValueString(), timeout))
		case err != nil:
			addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to follow backup %s of account %s", plan.ID.ValueString(), accountID), err)
		case final.Status != client.StatusSuccess:
			resp.Diagnostics.AddError("Backup did not succeed",
				fmt.Sprintf("Backup %s of account %s ended with status %q: %s\n\nThis resource is saved as tainted, so the next apply triggers a new backup.",
					final.ID, accountID, final.Status, errorText(final)))
		}
	}
	// Saved even after an error above: Terraform then marks it tainted.
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// trigger queues a backup. With waitOnConflict, a backup already in
// progress is waited for and then a new one is queued.
func (r *triggerResource) trigger(ctx context.Context, accountID string, waitOnConflict bool) (*client.Backup, error) {
	for {
		tr, err := r.client.TriggerBackup(ctx, accountID)
		if err == nil {
			if tr.Recovered {
				tflog.Warn(ctx, "the trigger's outcome was unknown; found the backup it queued instead of queueing another",
					map[string]any{"backup_id": tr.Backup.ID})
			}
			return &tr.Backup, nil
		}
		if !waitOnConflict || !errors.Is(err, client.ErrConflict) {
			return nil, err
		}
		running, lerr := r.runningBackup(ctx, accountID)
		if lerr != nil {
			return nil, lerr
		}
		if running == nil {
			// Finished between the 409 and the look (or the listing lags):
			// try again after one poll interval, never in a tight loop.
			timer := time.NewTimer(r.poll.initial)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, &conflictWaitError{backupID: "(not found in the listing)", err: ctx.Err()}
			case <-timer.C:
			}
			continue
		}
		tflog.Info(ctx, "a backup is already in progress; waiting for it before queueing a new one", map[string]any{"running_backup_id": running.ID})
		if _, err := waitForBackup(ctx, r.client, r.poll, running, func(b *client.Backup) {
			tflog.Info(ctx, "waiting for the backup in progress", map[string]any{"running_backup_id": b.ID, "status": b.Status})
		}); err != nil {
			return nil, &conflictWaitError{backupID: running.ID, err: err}
		}
	}
}

// runningBackup returns the account's newest backup if it is in progress.
func (r *triggerResource) runningBackup(ctx context.Context, accountID string) (*client.Backup, error) {
	for b, err := range r.client.Backups(ctx, accountID, client.ListOptions{Max: 1}) {
		if err != nil {
			return nil, err
		}
		if client.InProgress(b.Status) {
			return &b, nil
		}
	}
	return nil, nil
}

// conflictWaitError: waiting for another backup to finish failed.
type conflictWaitError struct {
	backupID string
	err      error
}

func (e *conflictWaitError) Error() string {
	return fmt.Sprintf("waiting for backup %s, already in progress, to finish: %v", e.backupID, e.err)
}
func (e *conflictWaitError) Unwrap() error { return e.err }

func addTriggerError(diags *diag.Diagnostics, accountID string, timeout time.Duration, err error) {
	summary := fmt.Sprintf("Unable to trigger a backup of account %s", accountID)
	var cw *conflictWaitError
	switch {
	case errors.As(err, &cw) && errors.Is(err, context.DeadlineExceeded):
		diags.AddError(summary, fmt.Sprintf("Backup %s of account %s was already in progress and had not finished after %s (timeouts.create). "+
			"No backup was queued by this apply. Raise timeouts.create, or set on_conflict = \"fail\" to fail at once.", cw.backupID, accountID, timeout))
	case errors.Is(err, client.ErrConflict):
		diags.AddError(summary, describeError(err, "A backup of this account is already in progress and on_conflict is \"fail\". "+
			"Set on_conflict = \"wait\" to wait for it and then take a new backup."))
	case errors.Is(err, client.ErrUnprocessable):
		diags.AddError(summary, describeError(err, "The account cannot be backed up in its current state (for example paused, "+
			"a lapsed subscription, or a connection needing re-authorization); fix that in the Backup Service web application."))
	default:
		diags.AddError(summary, describeError(err))
	}
}

func errorText(b *client.Backup) string {
	if b.Error == nil || *b.Error == "" {
		return "the service gave no reason"
	}
	return *b.Error
}

// Read refreshes the backup's outcome. Only backup_status, completed_at and
// (after an import) triggered_at can change, so it reads the few values it
// needs from the raw state and sets only what changed: decoding and
// re-encoding the whole model per resource made refreshing 200 triggers
// about 10% slower.
func (r *triggerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if benchNoopRead {
		return
	}
	prior, err := rawStrings(req.State.Raw, "account_id", "id", "backup_status", "triggered_at", "completed_at")
	if err != nil {
		resp.Diagnostics.AddError("Unreadable backup_trigger state", err.Error())
		return
	}
	accountID, backupID := prior["account_id"].ValueString(), prior["id"].ValueString()
	b, err := r.client.FindBackup(ctx, accountID, backupID)
	if errors.Is(err, client.ErrNotFound) {
		tflog.Warn(ctx, "the account or the backup is gone; removing the trigger from state", map[string]any{
			"account_id": accountID, "backup_id": backupID, "error": err.Error(),
		})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to read backup %s of account %s", backupID, accountID), err)
		return
	}
	var now triggerModel
	now.setBackup(b)
	for name, v := range map[string]types.String{
		"backup_status": now.BackupStatus, "triggered_at": now.TriggeredAt, "completed_at": now.CompletedAt,
	} {
		if !v.Equal(prior[name]) {
			resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), v)...)
		}
	}
}

// rawStrings reads top-level string attributes of a raw state value.
func rawStrings(raw tftypes.Value, names ...string) (map[string]types.String, error) {
	var attrs map[string]tftypes.Value
	if err := raw.As(&attrs); err != nil {
		return nil, err
	}
	out := make(map[string]types.String, len(names))
	for _, name := range names {
		var s *string
		if v, ok := attrs[name]; ok {
			if err := v.As(&s); err != nil {
				return nil, fmt.Errorf("attribute %s: %w", name, err)
			}
		}
		out[name] = types.StringPointerValue(s)
	}
	return out, nil
}

// Update changes only how the resource behaves (waits, conflicts,
// timeouts): it takes no new backup.
func (r *triggerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan triggerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete forgets the resource. Backups are never deleted.
func (r *triggerResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// ImportState takes "acc_.../bkp_...".
func (r *triggerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	accountID, backupID, ok := strings.Cut(req.ID, "/")
	if !ok || !ids.IsAccountID(accountID) || !ids.IsBackupID(backupID) {
		resp.Diagnostics.AddError("Invalid import id",
			fmt.Sprintf("Expected <account id>/<backup id>, such as acc_0123456789abcdef/bkp_0123456789abcdef; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("account_id"), accountID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), backupID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("wait_for_completion"), false)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("on_conflict"), onConflictWait)...)
}
