package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/ids"
)

const (
	defaultCreateTimeout = 30 * time.Minute
	onConflictWait       = "wait"
	onConflictFail       = "fail"
	// privateImported marks a trigger adopted by import until its first
	// update: it takes the configuration's triggers in place.
	privateImported = "imported"
)

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
	// A trigger recorded before its backup could be identified has the
	// identity { account_id, id = null } until a later read finds it.
	resp.ResourceBehavior.MutableIdentity = true
}

// triggerIdentity identifies a trigger by its backup (Terraform 1.12+ and
// OpenTofu 1.12+ import by it).
type triggerIdentity struct {
	AccountID types.String `tfsdk:"account_id"`
	ID        types.String `tfsdk:"id"`
}

func (r *triggerResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			"account_id": identityschema.StringAttribute{RequiredForImport: true, Description: "Id of the account (`acc_...`)."},
			"id":         identityschema.StringAttribute{RequiredForImport: true, Description: "Id of the backup (`bkp_...`)."},
		},
	}
}

// setIdentity records the identity, when Terraform supports identities
// (resp.Identity is nil before 1.12).
func setIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, accountID, backupID string, diags *diag.Diagnostics) {
	if identity == nil || accountID == "" {
		return
	}
	id := types.StringNull() // not identified yet
	if backupID != "" {
		id = types.StringValue(backupID)
	}
	diags.Append(identity.Set(ctx, triggerIdentity{AccountID: types.StringValue(accountID), ID: id})...)
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
					"completion), as a positive duration such as `30m`. Also bounds a resumed wait. Defaults to `30m`.",
			}),
		},
	}
}

func (r *triggerResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

// ValidateConfig refuses a timeout that could never let a wait succeed.
func (r *triggerResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var t timeouts.Value
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("timeouts"), &t)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateTimeout(t.Object, "create", &resp.Diagnostics)
}

// createTimeout is timeouts.create, or the default.
func (m *triggerModel) createTimeout(ctx context.Context, diags *diag.Diagnostics) time.Duration {
	d, ds := m.Timeouts.Create(ctx, defaultCreateTimeout)
	diags.Append(ds...)
	return d
}

func (r *triggerResource) runOptions(ctx context.Context, m *triggerModel) client.RunOptions {
	return client.RunOptions{
		WaitOnConflict:    m.OnConflict.ValueString() == onConflictWait,
		WaitForCompletion: m.WaitForCompletion.ValueBool(),
		Poll:              r.data.poll,
		Progress:          logProgress(ctx),
	}
}

// logProgress logs each step of a backup at INFO: Terraform shows only
// "Still creating…" during a long wait, TF_LOG=INFO shows why.
func logProgress(ctx context.Context) func(client.Event) {
	return func(ev client.Event) {
		fields := map[string]any{"backup_id": ev.Backup.ID, "status": ev.Backup.Status, "elapsed": ev.Elapsed.Round(time.Second).String()}
		switch ev.Kind {
		case client.EventConflict:
			tflog.Info(ctx, "a backup of the account is already in progress; waiting for it before queueing a new one", fields)
		case client.EventQueued:
			tflog.Info(ctx, "backup queued", fields)
		case client.EventStatus:
			fields["previous_status"] = ev.Previous
			tflog.Info(ctx, "backup status changed", fields)
		case client.EventDone:
			tflog.Info(ctx, "backup finished", fields)
		}
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
	ctx, cancel := boundedFor(ctx, timeout, accountID)
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
		addTriggerError(&resp.Diagnostics, accountID, timeout, err)
		return
	}
	plan.setBackup(b)
	reportWait(&resp.Diagnostics, accountID, timeout, err, createOutcome)
	// Saved even after an error above: Terraform then marks it tainted.
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	setIdentity(ctx, resp.Identity, accountID, b.ID, &resp.Diagnostics)
}

// adoptReplaced handles the replacement of a trigger whose wait timed out
// in an earlier apply (Terraform replaces it, since it was tainted). Its
// backup belongs to the same change when account and triggers are the
// same: while it is in progress it is waited for instead of queueing a
// second one, and if it succeeded after the timeout it is this change's
// backup. It returns nil, nil when there is nothing to adopt.
func (r *triggerResource) adoptReplaced(ctx context.Context, plan *triggerModel, opts client.RunOptions) (*client.Backup, error) {
	old, ok := r.data.session.take(plan.AccountID.ValueString(), triggersKey(plan.Triggers))
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
	return c.WaitForBackup(ctx, *b, opts.Poll, opts.Progress)
}

// boundedFor is ctx bounded by timeout, with the account on every log line.
func boundedFor(ctx context.Context, timeout time.Duration, accountID string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return tflog.SetField(ctx, "account_id", accountID), cancel
}

// waitOutcome says what follows each way a wait can end, for the one who
// waited (a create, a resumed wait, an action).
type waitOutcome struct {
	timeoutName string // "timeouts.create", "timeouts.invoke"
	interrupted string // after an interrupt
	timedOut    string // after a timeout
	failed      string // after a failed backup
}

// reportWait turns the outcome of a wait into diagnostics. An interrupt
// is a warning (a resource is then saved untainted, and the next apply
// resumes the wait); a timeout or a failed backup is an error naming the
// backup and its status.
func reportWait(diags *diag.Diagnostics, accountID string, timeout time.Duration, err error, next waitOutcome) {
	var we *client.WaitError
	var fe *client.BackupFailedError
	switch {
	case err == nil:
	case errors.As(err, &we) && errors.Is(err, context.Canceled):
		diags.AddWarning("Waiting for the backup was interrupted",
			strings.TrimSpace(fmt.Sprintf("Backup %s of account %s was %s when the wait was interrupted after %s. It goes on in the Backup Service. %s",
				we.Backup.ID, accountID, we.Backup.Status, we.Waited.Round(time.Second), next.interrupted)))
	case errors.As(err, &we) && errors.Is(err, context.DeadlineExceeded):
		diags.AddError("Backup still in progress",
			strings.TrimSpace(fmt.Sprintf("Backup %s of account %s was still %s after waiting %s (%s is %s). It goes on in the Backup Service. %s "+
				"Raise %s to wait longer.",
				we.Backup.ID, accountID, we.Backup.Status, we.Waited.Round(time.Second), next.timeoutName, timeout, next.timedOut, next.timeoutName)))
	case errors.As(err, &we):
		addAPIError(diags, fmt.Sprintf("Unable to follow backup %s of account %s (last seen %s, after waiting %s)",
			we.Backup.ID, accountID, we.Backup.Status, we.Waited.Round(time.Second)), we.Err)
	case errors.As(err, &fe):
		diags.AddError("Backup did not succeed",
			strings.TrimSpace(fmt.Sprintf("Backup %s of account %s ended with status %q: %s\n\n%s",
				fe.Backup.ID, accountID, fe.Backup.Status, fe.Reason(), next.failed)))
	default:
		addAPIError(diags, "Unable to follow the backup of account "+accountID, err)
	}
}

// What follows a create's wait, and a resumed one's.
var (
	createOutcome = waitOutcome{
		timeoutName: "timeouts.create",
		interrupted: "The next apply resumes waiting for this same backup, without queueing another.",
		timedOut:    "The next apply waits for this same backup while it is in progress, instead of queueing another.",
		failed:      "The next apply takes a new backup.",
	}
	resumeOutcome = waitOutcome{
		timeoutName: "timeouts.create",
		interrupted: createOutcome.interrupted,
		timedOut:    "The next apply resumes waiting for it.",
		failed:      createOutcome.failed,
	}
)

func addTriggerError(diags *diag.Diagnostics, accountID string, timeout time.Duration, err error) {
	summary := fmt.Sprintf("Unable to trigger a backup of account %s", accountID)
	at := path.Root("account_id")
	var cw *client.ConflictWaitError
	var ue *client.UnidentifiedError
	switch {
	case errors.As(err, &ue):
		what := "The Backup Service accepted the trigger (a backup was queued)"
		if !ue.Queued {
			what = "The outcome of the trigger is unknown (a backup may have been queued)"
		}
		diags.AddAttributeError(at, summary, fmt.Sprintf("%s at %s, but no record of it could be found in the account's backups, "+
			"so its outcome cannot be followed. Look for it among the account's backups (data source backup_account_backups) "+
			"before triggering another.\n\n%s", what, ue.TriggeredAt.UTC().Format(time.RFC3339), describeError(ue.Err)))
	case errors.As(err, &cw) && errors.Is(err, context.DeadlineExceeded):
		running := "A backup of account " + accountID
		if cw.Running != nil {
			running = fmt.Sprintf("Backup %s of account %s", cw.Running.ID, accountID)
		}
		diags.AddAttributeError(at, summary, fmt.Sprintf("%s was already in progress and had not finished after %s (timeouts.create is %s). "+
			"No backup was queued by this apply. Raise timeouts.create, or set on_conflict = \"fail\" to fail at once.", running, cw.Waited.Round(time.Second), timeout))
	case errors.As(err, &cw) && errors.Is(err, context.Canceled):
		diags.AddAttributeError(at, summary, "Interrupted while waiting for a backup already in progress; no backup was queued by this apply.")
	case errors.Is(err, client.ErrConflict):
		diags.AddAttributeError(at, summary, describeError(err, "A backup of this account is already in progress and on_conflict is \"fail\". "+
			"Set on_conflict = \"wait\" to wait for it and then take a new backup."))
	case errors.Is(err, client.ErrUnprocessable):
		diags.AddAttributeError(at, summary, describeError(err, "The account cannot be backed up in its current state (for example paused, "+
			"a lapsed subscription, or a connection needing re-authorization); fix that in the Backup Service web application."))
	case errors.Is(err, client.ErrNotFound), errors.Is(err, client.ErrForbidden):
		diags.AddAttributeError(at, summary, describeError(err))
	default:
		diags.AddError(summary, describeError(err))
	}
}

// Read refreshes the backup's outcome. Only backup_status, completed_at and
// (after an import) triggered_at can change, so it reads the few values it
// needs from the raw state and sets only what changed: decoding and
// re-encoding the whole model per resource made refreshing 200 triggers
// about 10% slower.
//
// A finished backup never changes again and cannot be deleted, so for a
// finished trigger only its account's existence can change: that is
// checked through the session (one request, or a share of one listing of
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
		exists, report, err := r.data.session.accountExists(ctx, r.data.client, accountID)
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

// ModifyPlan decides what a change means for the backup:
//   - triggers that differ (null entries and empty maps aside) replace the
//     trigger, except on a trigger adopted by import, which takes them;
//   - a waited trigger whose backup is still in progress (an interrupted
//     wait) plans an update that resumes the wait;
//   - a waited trigger whose backup failed is replaced: a new backup.
func (r *triggerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	var state, plan triggerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	imported, diags := req.Private.GetKey(ctx, privateImported)
	resp.Diagnostics.Append(diags...)
	if plan.Triggers.IsUnknown() || (len(imported) == 0 && triggersKey(plan.Triggers) != triggersKey(state.Triggers)) {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("triggers"))
		return
	}
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

// triggersKey is a canonical text of triggers: entries with null values
// dropped, keys sorted, and no map the same as an empty one. A user who
// adds `triggers = {}` or `{ a = null }` means no trigger value, not a new
// backup.
func triggersKey(m types.Map) string {
	if m.IsNull() || m.IsUnknown() {
		return ""
	}
	vals := map[string]string{}
	for k, v := range m.Elements() {
		s, ok := v.(types.String)
		if !ok || s.IsNull() || s.IsUnknown() {
			continue
		}
		vals[k] = s.ValueString()
	}
	if len(vals) == 0 {
		return ""
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		kj, _ := json.Marshal(k)
		vj, _ := json.Marshal(vals[k])
		b.Write(kj)
		b.WriteByte(':')
		b.Write(vj)
		b.WriteByte(',')
	}
	return b.String()
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
	wctx, cancel := boundedFor(ctx, timeout, accountID)
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
		b, err = r.data.client.WaitForBackup(wctx, known, r.data.poll, logProgress(wctx))
	} else {
		b = &known
	}
	if b != nil && b.CreatedAt.IsZero() {
		b.CreatedAt, _ = time.Parse(time.RFC3339, state.TriggeredAt.ValueString())
	}
	plan.setBackup(b)
	reportWait(&resp.Diagnostics, accountID, timeout, err, resumeOutcome)
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
	timeout := state.createTimeout(ctx, &resp.Diagnostics)
	if r.data != nil {
		triggeredAt, _ := time.Parse(time.RFC3339, state.TriggeredAt.ValueString())
		r.data.session.remember(state.AccountID.ValueString(), replacedTrigger{
			backupID: state.ID.ValueString(), triggers: triggersKey(state.Triggers),
			waited: state.WaitForCompletion.ValueBool(), waitTimeout: timeout, triggeredAt: triggeredAt,
		})
		r.data.session.destroyNotice.Do(func() {
			resp.Diagnostics.AddWarning("Backups are kept",
				"Destroying a backup_trigger only removes it from the Terraform state. Its backup, and every other backup, "+
					"stays in the Backup Service: the API offers no way to delete one.")
		})
	}
}

// ImportState takes "acc_.../bkp_..." or, on Terraform and OpenTofu 1.12+,
// the identity { account_id, id }. The imported trigger adopts the
// configuration's triggers, wait_for_completion and on_conflict in place
// on its first apply, without a new backup.
func (r *triggerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	var accountID, backupID string
	if req.ID != "" {
		var ok bool
		accountID, backupID, ok = strings.Cut(req.ID, "/")
		if !ok || !ids.IsAccountID(accountID) || !ids.IsBackupID(backupID) {
			resp.Diagnostics.AddError("Invalid import id",
				fmt.Sprintf("Expected <account id>/<backup id>, such as acc_0123456789abcdef/bkp_0123456789abcdef; got %q.", req.ID))
			return
		}
	} else {
		var id triggerIdentity
		resp.Diagnostics.Append(req.Identity.Get(ctx, &id)...)
		if resp.Diagnostics.HasError() {
			return
		}
		accountID, backupID = id.AccountID.ValueString(), id.ID.ValueString()
		if !ids.IsAccountID(accountID) {
			resp.Diagnostics.AddAttributeError(path.Root("account_id"), "Invalid import identity",
				fmt.Sprintf("identity.account_id must be an account id such as acc_0123456789abcdef; got %q.", accountID))
		}
		if !ids.IsBackupID(backupID) {
			resp.Diagnostics.AddAttributeError(path.Root("id"), "Invalid import identity",
				fmt.Sprintf("identity.id must be a backup id such as bkp_0123456789abcdef; got %q.", backupID))
		}
		if resp.Diagnostics.HasError() {
			return
		}
	}
	setIdentity(ctx, resp.Identity, accountID, backupID, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("account_id"), accountID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), backupID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("wait_for_completion"), false)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("on_conflict"), onConflictWait)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateImported, []byte(`true`))...)
}
