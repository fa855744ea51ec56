package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// defaultCreateTimeout bounds a create, waits included.
const defaultCreateTimeout = 30 * time.Minute

var (
	_ resource.ResourceWithConfigure      = (*triggerResource)(nil)
	_ resource.ResourceWithImportState    = (*triggerResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*triggerResource)(nil)
	_ resource.ResourceWithValidateConfig = (*triggerResource)(nil)
	_ resource.ResourceWithIdentity       = (*triggerResource)(nil)
)

// triggerResource is backup_trigger: one on-demand backup, taken when the
// resource is created (or replaced, when account_id or triggers change).
type triggerResource struct {
	data *providerData
}

func (r *triggerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_trigger"
	// A trigger recorded before its backup could be identified has the
	// identity { account_id, id = null } until a later read finds it.
	resp.ResourceBehavior.MutableIdentity = true
}

func (r *triggerResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		Description: "Triggers one on-demand backup of an account when it is created, and follows its outcome. " +
			"A new backup is taken only when the resource is created or replaced (a change of `account_id` or `triggers`); " +
			"applying an unchanged configuration takes none. Destroying the resource only removes it from the state: " +
			"backups are never deleted. With `wait_for_completion`, what depends on it runs only after a good backup: an " +
			"interrupted wait (Ctrl-C) saves the trigger with its backup and stops the apply before its dependents, and the " +
			"next apply resumes the wait; a wait that times out fails the apply and taints the trigger, and its replacement " +
			"on the next apply adopts the same backup instead of queueing another. That adoption needs the tainted trigger " +
			"destroyed before its replacement is created: do not set `create_before_destroy` on a `backup_trigger` (its " +
			"replacement would be created first and take a new backup), or untaint a timed-out trigger " +
			"(`terraform untaint`, `tofu untaint`) to resume its wait in place.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, PlanModifiers: keep,
				Description: "ID of the backup this resource queued (`bkp_...`).",
			},
			"account_id": schema.StringAttribute{
				Required:      true,
				Description:   "ID of the account to back up: `acc_` followed by exactly 16 letters or digits. Changing it takes a new backup.",
				Validators:    []validator.String{accountIDValidator()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"triggers": schema.MapAttribute{
				Optional:      true,
				ElementType:   types.StringType,
				PlanModifiers: []planmodifier.Map{triggersRequireReplace{}},
				Description: "Arbitrary values; a change of any value takes a new backup, for example `{ release = var.release }`. " +
					"Entries whose value is null count as absent, and an empty map is the same as no map, so adding `{}` or " +
					"`{ a = null }` takes no backup. A trigger adopted by import takes the configuration's `triggers` without a new backup.",
			},
			"wait_for_completion": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "Wait, within `timeouts.create`, until the backup has finished, and fail the apply unless it succeeded. " +
					"An interrupted wait (Ctrl-C) saves the resource with the backup still in progress, and the next apply resumes " +
					"waiting for that same backup; a wait that times out fails the apply, and the next apply waits for that same " +
					"backup rather than queueing another while it can still succeed. A backup that failed is taken again on the " +
					"next apply. Defaults to `false`: the apply returns once the backup is queued.",
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
				Computed: true, CustomType: timetypes.RFC3339Type{}, PlanModifiers: keep,
				Description: "When the backup was queued, RFC 3339 in UTC.",
			},
			"completed_at": schema.StringAttribute{
				Computed: true, CustomType: timetypes.RFC3339Type{}, PlanModifiers: keep,
				Description: "When the backup ended, RFC 3339 in UTC; null while it is in progress.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": resourceTimeoutsBlock("create",
				"How long creation may take, waits included (for a backup already in progress, and for "+
					"completion), as a positive duration such as `30m`. Also bounds a resumed wait. Defaults to `30m`."),
		},
	}
}

func (r *triggerResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

// ValidateConfig refuses a timeout that could never let a wait succeed.
func (r *triggerResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateTimeoutsBlock(ctx, req.Config, "create", &resp.Diagnostics)
}

func (r *triggerResource) runOptions(ctx context.Context, m *triggerModel) client.RunOptions {
	return client.RunOptions{
		WaitOnConflict:    m.OnConflict.ValueString() == onConflictWait,
		WaitForCompletion: m.WaitForCompletion.ValueBool(),
		Poll:              r.data.poll,
		Progress:          logProgress(ctx),
	}
}

func (r *triggerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan triggerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	timeout := plan.createTimeout(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	accountID := plan.AccountID.ValueString()
	ctx, cancel := boundedFor(ctx, r.data.client, timeout, accountID)
	defer cancel()
	c := r.data.client
	opts := r.runOptions(ctx, &plan)

	b, err := r.adoptReplaced(ctx, &plan, opts)
	if b == nil && err == nil {
		b, err = c.RunBackup(ctx, accountID, opts)
	}
	var ue *client.UnidentifiedError
	if b == nil && errors.As(err, &ue) {
		recordUnidentified(ctx, &plan, ue, resp.Private, &resp.Diagnostics, createCaller)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		setIdentity(ctx, resp.Identity, accountID, "", &resp.Diagnostics)
		return
	}
	if b == nil {
		addTriggerError(&resp.Diagnostics, createCaller, accountID, timeout, err)
		return
	}
	plan.setBackup(b)
	reportWait(&resp.Diagnostics, createCaller, accountID, timeout, err)
	// Saved even after an error above: Terraform then marks it tainted.
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	setIdentity(ctx, resp.Identity, accountID, b.ID, &resp.Diagnostics)
}

// Read refreshes the backup's outcome. Only backup_status, completed_at and
// (after an import) triggered_at can change, so it reads the few values it
// needs from the raw state and sets only what changed, rather than
// decoding and re-encoding the whole model per resource (measured in
// BENCHMARKS.md, refresh at scale).
//
// A finished backup never changes again and cannot be deleted, so for a
// finished trigger only its account's existence can change: that is
// checked through the command state (one request, or a share of one listing of
// every account) instead of paging the account's backups, which cost a
// request per 50 newer backups. A backup in progress is the account's
// newest (the service refuses a second one), so reading it costs one.
func (r *triggerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	prior, err := rawStrings(req.State.Raw, "account_id", "id", "backup_status", "triggered_at", "completed_at")
	if err != nil {
		resp.Diagnostics.AddError("Unreadable backup_trigger state", err.Error())
		return
	}
	accountID, backupID := prior["account_id"].ValueString(), prior["id"].ValueString()
	if resp.Identity != nil && req.Identity != nil && req.Identity.Raw.IsNull() {
		// State from before identities (or from Terraform before 1.12, which
		// keeps none): the framework wants one after every Read, even one
		// that removes the resource.
		setIdentity(ctx, resp.Identity, accountID, backupID, &resp.Diagnostics)
	}
	if backupID == "" {
		var waits types.Bool
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("wait_for_completion"), &waits)...)
		if !waits.ValueBool() {
			r.readUnidentified(ctx, prior, resp)
		}
		// Else the next apply identifies it and waits for it, in an update
		// or in the replacement of a tainted trigger: both look for it by
		// triggered_at, which a refresh must therefore keep.
		return
	}
	removed := func(why string) {
		resp.Diagnostics.AddWarning("Backup trigger removed from state",
			fmt.Sprintf("The Backup Service no longer knows backup %s of account %s (%s): the account was deleted, or is no longer "+
				"visible to this API key. The trigger is removed from the state, so the plan proposes to create it again, "+
				"which queues a new backup.", backupID, accountID, why))
		resp.State.RemoveResource(ctx)
	}
	if status := prior["backup_status"]; !status.IsNull() && status.ValueString() != "" &&
		!client.InProgress(status.ValueString()) && !prior["triggered_at"].IsNull() {
		exists, report, err := r.data.command.accountExists(ctx, r.data.client, accountID)
		switch {
		case err != nil && report:
			addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to check that account %s of backup %s still exists", accountID, backupID), err)
		case err != nil:
			// Another trigger reports this shared failure; the plan fails on it.
		case !exists:
			removed("its account is not in the organization's accounts")
		}
		return
	}
	b, err := r.data.client.FindBackup(ctx, accountID, backupID)
	if errors.Is(err, client.ErrNotFound) {
		// The read that completes an import (marked imported, with no
		// status yet) fails naming the ids, rather than leaving Terraform's
		// generic "non-existent remote object"; a refresh removes the trigger.
		imported, diags := req.Private.GetKey(ctx, privateImported)
		resp.Diagnostics.Append(diags...)
		if len(imported) != 0 && prior["backup_status"].IsNull() {
			addImportNotFound(&resp.Diagnostics, accountID, backupID, err)
			return
		}
		removed(err.Error())
		return
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to read backup %s of account %s", backupID, accountID), err)
		return
	}
	var now triggerModel
	now.setBackup(b)
	for name, v := range map[string]types.String{
		"backup_status": now.BackupStatus, "triggered_at": now.TriggeredAt.StringValue, "completed_at": now.CompletedAt.StringValue,
	} {
		if !v.Equal(prior[name]) {
			resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), v)...)
		}
	}
}

// ModifyPlan decides what a change means for the backup:
//   - triggers that differ (null entries and empty maps aside) replace the
//     trigger, except on a trigger adopted by import, which takes them;
//   - a waited trigger whose backup is still in progress (an interrupted
//     wait) plans an update that resumes the wait;
//   - a waited trigger whose backup failed is replaced: a new backup;
//   - a trigger planned for creation checks the key's organization against
//     organization_id (one token read per process, none without it), so
//     that a key of another organization fails the plan.
func (r *triggerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() && !req.Plan.Raw.IsNull() {
		checkOrganizationAtPlan(ctx, r.data, req.Plan, "backup_trigger", &resp.Diagnostics)
	}
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	var state, plan triggerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	replace, diags := triggersReplace(ctx, req.Private, plan.Triggers, state.Triggers)
	resp.Diagnostics.Append(diags...)
	if replace {
		return // triggersRequireReplace replaces it; nothing here applies
	}
	imported, diags := req.Private.GetKey(ctx, privateImported)
	resp.Diagnostics.Append(diags...)
	if !plan.AccountID.Equal(state.AccountID) {
		return
	}
	settle := func() {
		for _, name := range []string{"backup_status", "completed_at"} {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(name), types.StringUnknown())...)
		}
	}
	if state.ID.IsNull() {
		// Recorded without its backup id, and the refresh did not find
		// it: the update looks for it again (and waits for it) before any
		// new trigger.
		settle()
		for _, name := range []string{"id", "triggered_at"} {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(name), types.StringUnknown())...)
		}
		return
	}
	status := state.BackupStatus.ValueString()
	if len(imported) != 0 || (plan.WaitForCompletion.ValueBool() && !state.WaitForCompletion.ValueBool()) {
		// An imported trigger takes its configuration in an update, even
		// an identical one, so that it is adopted once and only once; a
		// trigger whose wait is switched on settles its backup's outcome
		// there (waits for it, or fails when it failed).
		settle()
		return
	}
	if !state.WaitForCompletion.ValueBool() || !plan.WaitForCompletion.ValueBool() {
		return
	}
	switch {
	case client.InProgress(status):
		settle()
	case status != client.StatusSuccess && status != "":
		resp.Diagnostics.AddWarning("The backup of this trigger did not succeed",
			fmt.Sprintf("Backup %s of account %s ended with status %q, and wait_for_completion is true: the trigger is "+
				"replaced to take a new backup.", state.ID.ValueString(), state.AccountID.ValueString(), status))
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("backup_status"), types.StringUnknown())...)
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("backup_status"))
	}
}

// Update takes no new backup. It stores how the resource behaves (waits,
// conflicts, timeouts, adopted triggers) and, when the plan says so,
// resumes waiting for the backup in progress.
func (r *triggerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state triggerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateImported, nil)...)
	setIdentity(ctx, resp.Identity, state.AccountID.ValueString(), state.ID.ValueString(), &resp.Diagnostics)
	if !plan.BackupStatus.IsUnknown() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	timeout := plan.createTimeout(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	accountID := state.AccountID.ValueString()
	wctx, cancel := boundedFor(ctx, r.data.client, timeout, accountID)
	defer cancel()
	if state.ID.IsNull() {
		r.resumeUnidentified(wctx, &plan, &state, timeout, req, resp)
		return
	}
	known := client.Backup{ID: state.ID.ValueString(), AccountID: accountID, Status: state.BackupStatus.ValueString()}
	if !client.InProgress(known.Status) || !plan.WaitForCompletion.ValueBool() {
		// Adopted (import, or the wait switched on): read where it stands.
		now, err := r.data.client.FindBackup(wctx, accountID, known.ID)
		if err != nil {
			addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to read backup %s of account %s", known.ID, accountID), err)
			return
		}
		known = *now
	}
	var b *client.Backup
	var err error
	if plan.WaitForCompletion.ValueBool() {
		tflog.Info(wctx, "waiting for the backup", map[string]any{"backup_id": known.ID, "status": known.Status})
		b, err = r.data.client.WaitForBackup(wctx, plan.AccountID.ValueString(), known, r.data.poll, logProgress(wctx))
	} else {
		b = &known
	}
	if b != nil && b.CreatedAt.IsZero() {
		b.CreatedAt, _ = time.Parse(time.RFC3339, state.TriggeredAt.ValueString())
	}
	plan.setBackup(b)
	reportWait(&resp.Diagnostics, resumeCaller, accountID, timeout, err)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Delete forgets the resource: backups are never deleted, which the first
// Delete of a command says once. It keeps what the trigger's replacement
// needs to adopt a backup still in progress.
func (r *triggerResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state triggerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.data != nil {
		r.rememberForReplacement(&state, state.createTimeout(ctx, &resp.Diagnostics))
		r.data.command.destroyNotice.Do(func() {
			resp.Diagnostics.AddWarning("Backups are kept",
				"Destroying a backup_trigger only removes it from the state. Its backup, and every other backup, "+
					"stays in the Backup Service: the API offers no way to delete one.")
		})
	}
}
