package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

var (
	_ resource.ResourceWithConfigure      = (*triggerResource)(nil)
	_ resource.ResourceWithImportState    = (*triggerResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*triggerResource)(nil)
	_ resource.ResourceWithValidateConfig = (*triggerResource)(nil)
	_ resource.ResourceWithIdentity       = (*triggerResource)(nil)
)

// triggerResource is backup_trigger: one backup, taken when it is created or replaced.
type triggerResource struct{ backupResource }

func (r *triggerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_trigger"
	// A trigger recorded before its backup was identified has the identity { account_id, id = null } until a read finds it.
	resp.ResourceBehavior.MutableIdentity = true
}

func (r *triggerResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	// Kept from the state unless planUpdate says otherwise.
	keep, keepBool := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}, []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		Description: "Triggers one on-demand backup of an account when it is created or replaced (a change of `account_id` or " +
			"`triggers`), and follows its outcome. With `wait_for_completion`, what depends on it runs only after the backup succeeded.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, PlanModifiers: keep, Description: "ID of the backup this resource queued (`bkp_...`)."},
			"account_id": replacingAccountID("ID of the account to back up: `acc_` followed by exactly 16 letters or digits. " +
				"Changing it takes a new backup."),
			"triggers": schema.MapAttribute{Optional: true, ElementType: types.StringType,
				Description: "Arbitrary values; a change of any value takes a new backup, for example `{ release = var.release }`. Entries whose " +
					"value is null count as absent, and an empty map is the same as no map, so adding `{}` or `{ a = null }` takes no backup. A trigger adopted by import takes the configuration's `triggers` without a new backup. " +
					"Give each trigger of one account a value of its own (`{ migration = \"orders\", release = var.release }`): Terraform does not tell a provider which trigger a replacement replaces, so a trigger created with the value of another of the account that is replaced, interrupted, in the same apply may follow that one's backup (see Which backup counts in the lifecycle guide)."},
			"wait_for_completion": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "Wait, within `timeouts.create`, until the backup has finished, and fail the apply unless it succeeded; " +
					"an interrupted or timed-out wait is resumed, not retaken, by the next apply. Defaults to `false`: the apply " +
					"returns once the backup is queued. While it waits, Terraform prints only its own \"Still creating...\" " +
					"lines (a resource cannot print during an apply): run with `TF_LOG_PROVIDER=INFO` to see the backup's id and " +
					"status at each change, and every minute without one."},
			"on_conflict": onConflictArgument("What to do when a backup of the account is already in progress: `wait` (the default) " +
				"waits for it to finish, within `timeouts.create`, then queues a new one, so that the backup reflects this apply; " +
				"`fail` fails the apply."),
			"reuse_within": reuseWithinArgument("create"),
			"reused": schema.BoolAttribute{Computed: true, PlanModifiers: keepBool,
				Description: "Whether this trigger's create queued no backup because a recent one counted for it (`reuse_within`). " +
					"A replacement that follows the backup of the tainted trigger it replaces (an interrupted run's) keeps that trigger's value; " +
					"a killed runner's retry records nothing of it and takes a new backup (false)."},
			"backup_status": schema.StringAttribute{Computed: true, PlanModifiers: keep, Description: "Status of the backup when last read: " +
				"`pending`, `running`, `success` or `failed` (the service may add values; only `success` is a good backup)."},
			"triggered_at": schema.StringAttribute{Computed: true, CustomType: timetypes.RFC3339Type{}, PlanModifiers: keep,
				Description: "When the backup was queued, RFC 3339 in UTC, on the Backup Service's clock (for a reused backup, when whoever " +
					"took it queued it; for one not identified yet, when its trigger was sent, on this machine's clock)."},
			"completed_at": schema.StringAttribute{Computed: true, CustomType: timetypes.RFC3339Type{}, PlanModifiers: keep,
				Description: "When the backup ended, RFC 3339 in UTC; null while it is in progress."},
			"trigger_accepted": schema.BoolAttribute{Computed: true, PlanModifiers: keepBool,
				Description: "For a backup not identified yet (a null `id`), whether the Backup Service accepted its trigger (HTTP 202): " +
					"a backup was queued, so every apply looks for it above `prior_backup_ids` and none sends another trigger for this " +
					"change, `-replace` included. `false` when the request's outcome is unknown (its answer was lost): it is sent again " +
					"only once nothing was listed since for the grace (30 seconds after a 5xx, 60 without an answer). Null once the " +
					"backup is identified."},
			"prior_backup_ids": schema.StringAttribute{Computed: true, PlanModifiers: keep,
				Description: "The account's newest backups, by id and separated by commas, as the Backup Service listed them when this trigger's " +
					"change went ahead, its own backup among them: a replacement of this trigger (a change of `triggers`) counts only a " +
					"backup listed above all of them, whatever any clock says. Until the change goes ahead, the backups listed just before " +
					"its trigger was sent, with those the previous change's listed: its own backup is the one listed above them, which is " +
					"how a trigger not identified yet is looked for. When the change went ahead before its backup was identified, a refresh " +
					"that identifies it records what it listed, later backups included (one may have started before the change went ahead), " +
					"and a replacement reuses none of them. Empty when the account listed none (`,bkp_…` when the read before the trigger " +
					"listed none and this one retakes the failed `bkp_…`: what is listed above counts only within 90 s of that read); null " +
					"when none is known: a replacement then takes a new backup even with `reuse_within`. (A string, not a list: a list " +
					"attribute costs every plan of many triggers about a tenth more.)"},
		},
		Blocks: map[string]schema.Block{
			"timeouts": resourceTimeoutsBlock("create",
				"How long creation may take, waits included (for a backup already in progress, and for "+
					"completion), as a positive duration such as `30m`. Also bounds a resumed wait. Defaults to `30m`."),
		},
	}
}

func (r *triggerResource) runOptions(ctx context.Context, m *triggerModel) workflow.RunOptions {
	return workflow.RunOptions{WaitOnConflict: m.OnConflict.ValueString() == onConflictWait, WaitForCompletion: m.WaitForCompletion.ValueBool(),
		ReuseWithin: durationOf(m.ReuseWithin), Progress: progress(ctx, nil, m.AccountID.ValueString())}
}

func (r *triggerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan triggerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	timeout := plan.createTimeout(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := boundedFor(ctx, r.data.clock, timeout, plan.AccountID.ValueString())
	defer cancel()

	o, prior := r.data.runner.CreateTrigger(ctx, plan.AccountID.ValueString(), triggersKey(plan.Triggers), r.runOptions(ctx, &plan))
	r.record(ctx, &plan, prior, o, createCaller, timeout, resp.Private, &resp.State, resp.Identity, &resp.Diagnostics)
}

// record saves what a create or an update learnt, in state and private state, and says what follows; a trigger without a
// backup is not saved unless unidentified.
func (r *triggerResource) record(ctx context.Context, m *triggerModel, prior workflow.Record, o workflow.Outcome, by caller,
	timeout time.Duration, private privateSetter, state *tfsdk.State, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics,
) {
	rec, save := prior.Saved(o, workflow.Saving{Creating: by.creates, Importing: by.recordsImport,
		Waits: m.WaitForCompletion.ValueBool(), Stopped: errors.Is(ctx.Err(), context.Canceled)})
	switch {
	case o.Kind == workflow.NotIdentified:
		reportUnidentified(m, o, diags, by)
	case o.Kind != workflow.NotWaited || !by.recordsImport:
		report(diags, by, timeout, o)
	}
	if !save {
		return
	}
	m.setRecord(rec)
	saveRecord(ctx, private, rec, diags)
	diags.Append(state.Set(ctx, m)...)
	setIdentity(ctx, identity, m.AccountID.ValueString(), m.ID.ValueString(), diags)
}

// Read refreshes the backup's outcome through the trigger's record (the workflow says what it learnt), setting only what changed.
func (r *triggerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	m, ok := decode[triggerModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	accountID, backupID := m.AccountID.ValueString(), m.ID.ValueString()
	if resp.Identity != nil && req.Identity != nil && req.Identity.Raw.IsNull() {
		// State from before identities: the framework wants one after every Read.
		setIdentity(ctx, resp.Identity, accountID, backupID, &resp.Diagnostics)
	}
	rec, ok := triggerRecord(ctx, &m, req.Private, &resp.Diagnostics)
	if !ok {
		return
	}
	unread := fmt.Sprintf("Unable to read backup %s of account %s", backupID, accountID)
	switch {
	case rec.Unidentified():
		backupID = "(never identified, triggered at " + m.TriggeredAt.ValueString() + ")"
		unread = fmt.Sprintf("Unable to look for the backup of the trigger of account %s (triggered at %s)", accountID, m.TriggeredAt.ValueString())
	case rec.Finished():
		unread = fmt.Sprintf("Unable to check that account %s of backup %s still exists", accountID, backupID)
	}
	c := r.data.runner.Refresh(ctx, accountID, rec, m.WaitForCompletion.ValueBool())
	switch c.Verdict {
	case workflow.Current:
		r.refreshed(ctx, &m, rec, c.Record, resp)
		if rec.Unidentified() && c.Backup != nil {
			setIdentity(ctx, resp.Identity, accountID, c.Backup.ID, &resp.Diagnostics)
		}
	case workflow.Gone:
		// The one way a trigger leaves the state: the service proved its account gone.
		resp.Diagnostics.AddWarning("Backup trigger removed from state",
			describeError(c.Err, fmt.Sprintf("The Backup Service proved that backup %s of account %s can no longer be read: the account "+
				"does not exist for this API key (it was deleted, or is outside the key's organization). The trigger is removed from "+
				"the state, so the plan proposes to create it again, which fails while the account is missing.", backupID, accountID)))
		resp.State.RemoveResource(ctx)
	case workflow.NotImported:
		// Fails naming the ids, rather than Terraform's generic "non-existent remote object".
		addImportNotFound(&resp.Diagnostics, accountID, backupID, c.Err)
	case workflow.Unread:
		if rec.Unidentified() {
			// Nothing to update: the plan goes on, so that a new triggers value can replace a trigger no look can identify.
			if c.Report {
				resp.Diagnostics.AddWarning(unread, describeError(c.Err, "The trigger is kept as it is. The next apply that changes "+
					"or follows it looks for its backup again first, and fails as this refresh did while no backup can be told to be its own."))
			}
			return
		}
		if !errors.As(c.Err, new(*client.BackupNotFoundError)) {
			if c.Report { // else another resource reports this shared failure; the plan fails on it
				addAPIError(&resp.Diagnostics, unread, c.Err)
			}
			return
		}
		resp.Diagnostics.AddError(fmt.Sprintf("Backup %s of account %s is missing from the account's backups", backupID, accountID),
			fmt.Sprintf("The account's backups listing does not hold backup %s, which this trigger recorded. The Backup Service never "+
				"deletes a backup while its account exists, so the listing is behind, or not the service's (a proxy, another base_url): "+
				"the trigger is kept as it is. Check base_url and try again.", backupID))
	}
}

// refreshed sets the attributes that changed, and the record when it did.
func (r *triggerResource) refreshed(ctx context.Context, m *triggerModel, prior, now workflow.Record, resp *resource.ReadResponse) {
	if now == prior {
		return
	}
	next := *m
	next.setRecord(now)
	for _, a := range []struct {
		name     string
		was, now attr.Value
	}{
		{"id", m.ID, next.ID}, {"backup_status", m.BackupStatus, next.BackupStatus},
		{"triggered_at", m.TriggeredAt, next.TriggeredAt}, {"completed_at", m.CompletedAt, next.CompletedAt},
		{"prior_backup_ids", m.PriorBackupIDs, next.PriorBackupIDs}, {"trigger_accepted", m.TriggerAccepted, next.TriggerAccepted},
	} {
		if !a.now.Equal(a.was) {
			resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(a.name), a.now)...)
		}
	}
	saveRecord(ctx, resp.Private, now, &resp.Diagnostics)
}

// ModifyPlan checks a new trigger's key against organization_id; for an update, see planUpdate.
func (r *triggerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	switch {
	case req.State.Raw.IsNull() && !req.Plan.Raw.IsNull():
		checkOrganizationAtPlan(ctx, r.data, req.Plan, "backup_trigger", &resp.Diagnostics)
	case !req.State.Raw.IsNull() && !req.Plan.Raw.IsNull():
		r.planUpdate(ctx, req, resp)
	}
}

// Update takes no new backup: it stores the settings and, when the plan says so, follows the recorded backup.
func (r *triggerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state triggerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	rec, ok := triggerRecord(ctx, &state, req.Private, &resp.Diagnostics) // false after any error
	if !ok {
		return
	}
	by := resumeCaller
	if rec.TakesConfigTriggers() {
		by = importCaller
	}
	rec = rec.Adopted()
	accountID := state.AccountID.ValueString()
	setIdentity(ctx, resp.Identity, accountID, state.ID.ValueString(), &resp.Diagnostics)
	if !plan.BackupStatus.IsUnknown() {
		// Next planned nothing to do: its change went ahead already, or it has no backup.
		saveRecord(ctx, resp.Private, rec, &resp.Diagnostics)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	timeout := plan.createTimeout(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	wctx, cancel := boundedFor(ctx, r.data.clock, timeout, accountID)
	defer cancel()
	if !rec.Unidentified() && plan.WaitForCompletion.ValueBool() {
		tflog.Info(wctx, "waiting for the backup", map[string]any{"backup_id": state.ID.ValueString(), "status": state.BackupStatus.ValueString()})
	}
	o := r.data.runner.UpdateTrigger(wctx, accountID, rec, r.runOptions(wctx, &plan))
	r.record(ctx, &plan, rec, o, by, timeout, resp.Private, &resp.State, resp.Identity, &resp.Diagnostics)
}

// Delete forgets the resource (backups are never deleted), keeping what its replacement needs (workflow.Runner.DeleteTrigger):
// all of it in the state, which Terraform gives a tainted object's Delete too; an unreadable record is not kept, and the
// replacement takes a new backup. One gone ahead on a backup not listed yet fails: Terraform keeps it.
func (r *triggerResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := decode[triggerModel](ctx, req.State, &resp.Diagnostics)
	if !ok || r.data == nil {
		return
	}
	var unread diag.Diagnostics
	rec, ok := triggerRecord(ctx, &state, req.Private, &unread)
	if !ok {
		return
	}
	if err := r.data.runner.DeleteTrigger(ctx, state.AccountID.ValueString(), triggersKey(state.Triggers), rec); err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to delete the backup_trigger of account %s (triggered at %s)",
			state.AccountID.ValueString(), state.TriggeredAt.ValueString()), err)
	}
}

func (r *triggerResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			"account_id": identityschema.StringAttribute{RequiredForImport: true, Description: "ID of the account (`acc_...`)."},
			"id":         identityschema.StringAttribute{RequiredForImport: true, Description: "ID of the backup (`bkp_...`)."},
		},
	}
}

// planUpdate plans an update from the record, once: a change of triggers, then what the next apply does with the backup
// (workflow.Record.Next) makes its attributes unknown (identify, settle) or replaces the trigger (retake).
// A change of account_id replaces the trigger, and nothing is planned here.
func (r *triggerResource) planUpdate(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	// Only the attributes it needs: decoding two whole models cost a plan of 250 triggers 3% (BENCHMARKS.md).
	var state, plan triggerModel
	for _, a := range []struct {
		from interface {
			GetAttribute(context.Context, path.Path, any) diag.Diagnostics
		}
		name string
		to   any
	}{
		{req.State, "id", &state.ID}, {req.State, "account_id", &state.AccountID}, {req.State, "backup_status", &state.BackupStatus},
		{req.State, "triggered_at", &state.TriggeredAt}, {req.State, "completed_at", &state.CompletedAt},
		{req.State, "reused", &state.Reused}, {req.State, "wait_for_completion", &state.WaitForCompletion}, {req.State, "triggers", &state.Triggers},
		{req.State, "prior_backup_ids", &state.PriorBackupIDs}, {req.State, "trigger_accepted", &state.TriggerAccepted},
		{req.Plan, "account_id", &plan.AccountID}, {req.Plan, "wait_for_completion", &plan.WaitForCompletion}, {req.Plan, "triggers", &plan.Triggers},
		{req.Plan, "reuse_within", &plan.ReuseWithin},
	} {
		resp.Diagnostics.Append(a.from.GetAttribute(ctx, path.Root(a.name), a.to)...)
	}
	if resp.Diagnostics.HasError() || !plan.AccountID.Equal(state.AccountID) {
		return
	}
	rec, ok := triggerRecord(ctx, &state, req.Private, &resp.Diagnostics)
	if !ok {
		return
	}
	// A change of triggers (or an unknown value) takes a new backup, except on an import's first apply.
	if plan.Triggers.IsUnknown() || !rec.TakesConfigTriggers() && triggersKey(plan.Triggers) != triggersKey(state.Triggers) {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("triggers"))
	}
	unknown := func(name string, v attr.Value) {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(name), v)...)
	}
	switch rec.Next(state.WaitForCompletion.ValueBool(), plan.WaitForCompletion.ValueBool()) {
	case workflow.Settle:
		if rec.Unidentified() {
			unknown("id", types.StringUnknown())
			unknown("triggered_at", timetypes.NewRFC3339Unknown())
			unknown("trigger_accepted", types.BoolUnknown())
		}
		unknown("backup_status", types.StringUnknown())
		unknown("completed_at", timetypes.NewRFC3339Unknown())
		unknown("prior_backup_ids", types.StringUnknown()) // the listing when its change goes ahead
	case workflow.Retake:
		unknown("backup_status", types.StringUnknown())
		why := "wait_for_completion is true"
		if !state.WaitForCompletion.ValueBool() || !plan.WaitForCompletion.ValueBool() {
			why = "the change it was taken for never went ahead (its wait was interrupted or ran out)"
		}
		instead := ""
		if durationOf(plan.ReuseWithin) > 0 {
			instead = " (or to count another good backup within reuse_within, as the lifecycle guide says)"
		}
		resp.Diagnostics.AddWarning("The backup of this trigger did not succeed",
			fmt.Sprintf("Backup %s of account %s ended with status %q and is not a good backup, and %s: the trigger is "+
				"replaced to take a new backup%s.", state.ID.ValueString(), state.AccountID.ValueString(), state.BackupStatus.ValueString(), why, instead))
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("backup_status"))
	}
}

// addImportNotFound explains why a backup_trigger cannot be imported: no such backup, or no such account.
func addImportNotFound(diags *diag.Diagnostics, accountID, backupID string, err error) {
	keyHint := "An account, and its backups, are visible only with an API key of the account's organization: check which key " +
		"the provider is given (api_key or " + EnvAPIKey + ")."
	if errors.As(err, new(*client.BackupNotFoundError)) {
		diags.AddError(fmt.Sprintf("Cannot import backup %s of account %s: no such backup", backupID, accountID),
			fmt.Sprintf("Account %s has no backup %s, so there is nothing to import. Check the backup id: the "+
				"backup_account_backups data source lists the account's backups with their ids (account_id = %q). %s",
				accountID, backupID, accountID, keyHint))
		return
	}
	diags.AddError(fmt.Sprintf("Cannot import backup %s of account %s: no such account", backupID, accountID),
		describeError(err, fmt.Sprintf("The Backup Service does not know account %s, so backup %s cannot be imported. Check the "+
			"account id: the backup_accounts data source lists the accounts the key can see, and the backup_account_backups "+
			"data source an account's backup ids. %s", accountID, backupID, keyHint)))
}

// ImportState takes "acc_.../bkp_..." or, on Terraform and OpenTofu 1.12+, the identity { account_id, id }.
func (r *triggerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	var accountID, backupID string
	if req.ID != "" {
		var ok bool
		accountID, backupID, ok = strings.Cut(req.ID, "/")
		if !ok || !client.AccountIDFormat.MatchString(accountID) || !client.BackupIDFormat.MatchString(backupID) {
			resp.Diagnostics.AddError("Invalid import id",
				fmt.Sprintf("Expected <account id>/<backup id>, such as acc_0123456789abcdef/bkp_0123456789abcdef; got %q.", req.ID))
			return
		}
	} else {
		id, ok := decode[triggerIdentity](ctx, req.Identity, &resp.Diagnostics)
		if !ok {
			return
		}
		accountID, backupID = id.AccountID.ValueString(), id.ID.ValueString()
		if !client.AccountIDFormat.MatchString(accountID) {
			resp.Diagnostics.AddAttributeError(path.Root("account_id"), "Invalid import identity",
				fmt.Sprintf("identity.account_id must be an account id such as acc_0123456789abcdef; got %q.", accountID))
		}
		if !client.BackupIDFormat.MatchString(backupID) {
			resp.Diagnostics.AddAttributeError(path.Root("id"), "Invalid import identity",
				fmt.Sprintf("identity.id must be a backup id such as bkp_0123456789abcdef; got %q.", backupID))
		}
		if resp.Diagnostics.HasError() {
			return
		}
	}
	setIdentity(ctx, resp.Identity, accountID, backupID, &resp.Diagnostics)
	// Status and times stay null until the first refresh reads the backup.
	m := importedModel(&client.Backup{ID: backupID, AccountID: accountID})
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	// Imported until its first update, which takes the configuration's triggers in place.
	saveRecord(ctx, resp.Private, workflow.ImportedAs(backupID), &resp.Diagnostics)
}
