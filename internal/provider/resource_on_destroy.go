package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// defaultResumeWithin: how long a stopped destroy's backup counts for its retry; not timeouts.delete: the data may change meanwhile.
const (
	defaultResumeWithin = "10m"
	defaultResume       = 10 * time.Minute
)

var (
	_ resource.ResourceWithConfigure      = (*onDestroyResource)(nil)
	_ resource.ResourceWithValidateConfig = (*onDestroyResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*onDestroyResource)(nil)
)

// onDestroyResource is backup_on_destroy: its destroy takes a backup and fails unless it succeeded, so that Terraform keeps
// what depends on it. Creating it takes no backup.
type onDestroyResource struct{ backupResource }

type onDestroyModel struct {
	ID         types.String   `tfsdk:"id"`
	AccountID  types.String   `tfsdk:"account_id"`
	OnConflict types.String   `tfsdk:"on_conflict"`
	Resume     duration       `tfsdk:"resume_within"`
	Reuse      duration       `tfsdk:"reuse_within"`
	Pending    types.Object   `tfsdk:"pending_destroy_backup"`
	Timeouts   timeouts.Value `tfsdk:"timeouts"`
}

func (r *onDestroyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_on_destroy"
}

func (r *onDestroyResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Takes one backup of an account when this resource is destroyed, and fails the destroy unless the backup " +
			"succeeded, so that what it `depends_on` is kept. Creating it takes no backup.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				Description: "The account ID."},
			"account_id": replacingAccountID("ID of the account to back up on destroy: `acc_` followed by exactly 16 letters or " +
				"digits. Changing it destroys this resource, which backs up the old account."),
			"on_conflict": onConflictArgument("What the destroy does when a backup of the account is already in progress: `wait` " +
				"(the default) waits for it, then takes a new one, so that the backup reflects the data as it is destroyed; `fail` " +
				"fails the destroy."),
			"resume_within": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(defaultResumeWithin),
				CustomType: durationType{}, Validators: []validator.String{positiveDuration},
				Description: "How long after a destroy stopped (interrupted, timed out, or unable to identify its backup) the backup " +
					"it began still counts for the next destroy, as a Go duration such as `10m`. Defaults to `" + defaultResumeWithin +
					"`: the retry of a stopped destroy. Later, a destroy takes a new backup, since the data may have changed."},
			"reuse_within":           reuseWithinArgument("destroy"),
			"pending_destroy_backup": pendingAttribute(),
		},
		Blocks: map[string]schema.Block{
			"timeouts": resourceTimeoutsBlock("delete",
				"How long the destroy may take, waits included (for a backup already in progress, and for "+
					"completion), as a positive duration such as `30m`. Defaults to `30m`."),
		},
	}
}

// ModifyPlan checks a new guard's key against organization_id, runs the preflight of a destroy,
// and clears the pending destroy-time backup on any other plan (the data may have changed).
func (r *onDestroyResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		if !req.State.Raw.IsNull() {
			r.preflight(ctx, req.State, &resp.Diagnostics)
		}
		return // Delete decides whether the record still counts
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("pending_destroy_backup"), pendingNull())...)
	if req.State.Raw.IsNull() {
		checkOrganizationAtPlan(ctx, r.data, req.Plan, "backup_on_destroy", &resp.Diagnostics)
	}
}

// preflight reports at plan what would stop the guard's destroy, before anything is destroyed.
func (r *onDestroyResource) preflight(ctx context.Context, state tfsdk.State, diags *diag.Diagnostics) {
	if r.data == nil {
		return
	}
	m, ok := decode[onDestroyModel](ctx, &state, diags)
	if !ok {
		return
	}
	accountID := m.AccountID.ValueString()
	if err := r.data.client.CheckOrganization(ctx); err != nil {
		addOrganizationError(diags, "destroying the "+guardName(accountID), err, guardKept)
		return
	}
	c := r.data.runner.CheckDestroy(ctx, accountID, m.OnConflict.ValueString() != onConflictFail)
	released := r.data.release.covers(accountID)
	switch {
	case c.Verdict == workflow.Unread:
		diags.AddError(fmt.Sprintf("Unable to read account %s before destroying its backup_on_destroy", accountID), describeError(c.Err, guardKept))
	case c.Verdict == workflow.Gone && released:
		diags.AddWarning(fmt.Sprintf("The %s will be destroyed without a backup: %s", guardName(accountID), r.data.release.reason),
			describeError(c.Err, r.data.release.warning(accountID)))
	case c.Verdict == workflow.Gone:
		diags.AddError(fmt.Sprintf("Account %s does not exist for this API key, so its backup_on_destroy cannot take a backup", accountID),
			describeError(c.Err, goneAdvice(accountID)+" "+guardKept))
	case c.Verdict == workflow.Busy:
		diags.AddError(fmt.Sprintf("A backup of account %s is in progress and on_conflict is \"fail\": its backup_on_destroy cannot be destroyed now", accountID),
			fmt.Sprintf("The account's backup_status is %q, and with on_conflict = \"fail\" the destroy would fail rather than wait for it. "+
				"Wait for it to end, or set on_conflict = \"wait\" and apply that first. %s", c.Account.BackupStatus, guardKept))
	case c.Verdict == workflow.Current && released:
		// The API shows no account state: a paused account is told from an active one only by its trigger's 422,
		// which a plan must not send. So the warning comes before the prompt whatever the account's state.
		diags.AddWarning(fmt.Sprintf("The %s may be destroyed without a backup: %s", guardName(accountID), r.data.release.reason),
			r.data.release.conditionalWarning(accountID))
	}
}

// guardName is how every diagnostic names a guard: Terraform gives a provider no resource address; a guard is known by its account.
func guardName(accountID string) string { return "backup_on_destroy of account " + accountID }

// guardKept ends what a guard's failure says: nothing was destroyed.
const guardKept = "Nothing was destroyed: the guard, and every resource it depends on, stays."

// goneAdvice is the way out of a guard whose account the service proved gone.
func goneAdvice(accountID string) string {
	return fmt.Sprintf("There is nothing to back up, and that is not a good backup: the guard fails closed. If the account was "+
		"deleted on purpose (or belongs to another organization than this key's), let this destroy go ahead without a backup "+
		"by naming it in the provider block:\n\n  destroy_without_backup = {\n    account_ids = [%q]\n    reason      = \"<why>\"\n  }\n\n"+
		"or forget the guard with a removed block (lifecycle { destroy = false }) or terraform state rm. If the account should "+
		"exist, check base_url (or %s) and the API key.", accountID, EnvBaseURL)
}

// Create checks the account and the key's organization: a wrong one fails the apply that adds the guard, not its destroy.
func (r *onDestroyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	m, ok := decode[onDestroyModel](ctx, req.Plan, &resp.Diagnostics) // pending_destroy_backup null, as ModifyPlan planned it
	if !ok {
		return
	}
	accountID := m.AccountID.ValueString()
	if err := r.data.client.CheckOrganization(ctx); err != nil {
		addOrganizationError(&resp.Diagnostics, "backup_on_destroy of account "+accountID, err)
		return
	}
	if _, err := r.data.client.Account(ctx, accountID); err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to read account %s for backup_on_destroy", accountID), err)
		return
	}
	m.ID = m.AccountID
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Read checks the account and never removes the guard: an account proven gone warns here; its destroy fails closed (preflight).
func (r *onDestroyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	m, ok := decode[onDestroyModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	accountID := m.AccountID.ValueString()
	switch c := r.data.runner.CheckAccount(ctx, accountID); {
	case c.Verdict == workflow.Gone:
		resp.Diagnostics.AddWarning(fmt.Sprintf("Account %s, which a backup_on_destroy guards, does not exist for this API key", accountID),
			describeError(c.Err, "The guard stays in the state. Its destroy cannot take a backup, and fails. "+goneAdvice(accountID)))
	case c.Verdict == workflow.Unread && c.Report: // else another resource reports this shared failure
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to read account %s, which a backup_on_destroy guards", accountID), c.Err)
	}
}

// Update stores the settings and clears the pending destroy-time backup; it takes no backup.
func (r *onDestroyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m onDestroyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...) // pending_destroy_backup null, as ModifyPlan planned it
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	saveRecord(ctx, resp.Private, workflow.Record{}, &resp.Diagnostics)
}

// Delete takes the backup and waits for it; when it cannot see it succeed, it fails, so that
// Terraform keeps what the guard depends on, and records the backup for the next destroy to follow.
func (r *onDestroyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	m, ok := decode[onDestroyModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	accountID := m.AccountID.ValueString()
	timeout, diags := m.Timeouts.Delete(ctx, defaultTimeout)
	resp.Diagnostics.Append(namingGuard(accountID, diags)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := boundedFor(ctx, r.data.clock, timeout, accountID)
	defer cancel()
	opts := workflow.RunOptions{
		WaitOnConflict:    m.OnConflict.ValueString() != onConflictFail,
		WaitForCompletion: true,
		ReuseWithin:       durationOf(m.Reuse),
		Unrecorded:        true, // a destroy has no previous change: any backup within reuse_within counts
		Progress:          progress(ctx, nil, m.AccountID.ValueString()),
	}
	resume := cmp.Or(durationOf(m.Resume), defaultResume) // unset in a state a test wrote by hand
	o, next, followed := r.data.runner.Destroy(ctx, accountID, destroyRecord(ctx, req.Private), opts, resume)
	if o.Good(true) {
		tflog.Info(ctx, "backup before destroy succeeded", map[string]any{"backup_id": o.Backup.ID})
		resp.Diagnostics.Append(destroyedDiagnostics(accountID, o, followed, m.Reuse.ValueString())...)
		return
	}
	if why, ok := cannotBackUp(o); ok && r.data.release.covers(accountID) {
		resp.Diagnostics.AddWarning(fmt.Sprintf("The %s was destroyed without a backup: %s", guardName(accountID), r.data.release.reason),
			fmt.Sprintf("Account %s cannot be backed up: %s.\n\n%s", accountID, why, describeError(o.Err, r.data.release.warning(accountID))))
		return
	}

	// The destroy fails: record what the next one follows, for resume_within from now.
	var stopped diag.Diagnostics
	saveRecord(ctx, resp.Private, next, &stopped)
	// The kept state shows the record: Terraform stores the state a failed destroy returns.
	stopped.Append(resp.State.SetAttribute(ctx, path.Root("pending_destroy_backup"), pendingObject(next))...)
	if errors.Is(o.Err, client.ErrGone) {
		stopped.AddError("Its account does not exist for this API key", describeError(o.Err, goneAdvice(accountID)))
	} else {
		report(&stopped, destroyCaller(next.StandsUntil()), timeout, o)
	}
	if !stopped.HasError() {
		stopped.AddError("Its backup could not be seen to succeed", "The destroy stops here.")
	}
	resp.Diagnostics.Append(namingGuard(accountID, stopped)...)
}

// destroyedDiagnostics is what a guard's destroy whose backup succeeded says: why reuse_within took no recent
// backup, when it took none (as a failed destroy would), then the backup the destroy went ahead after.
func destroyedDiagnostics(accountID string, o workflow.Outcome, followed bool, reuseWithin string) diag.Diagnostics {
	var said diag.Diagnostics
	reportReuseRefused(&said, o)
	out := namingGuard(accountID, said)
	out.AddWarning(destroyedAfter(accountID, *o.Backup, o.Reused, followed, reuseWithin))
	return out
}

// destroyedAfter is what a guard's destroy says once its backup succeeded: the guard's state goes with
// the destroy, so this warning is the one place that shows the backup id, and the summary names both
// ids, so that Terraform never folds the warnings of several guards into one.
func destroyedAfter(accountID string, b client.Backup, reused, followed bool, reuseWithin string) (string, string) {
	completed := "at an unknown time"
	if b.CompletedAt != nil {
		completed = "at " + b.CompletedAt.UTC().Format(time.RFC3339)
	}
	how := "This destroy queued it: it is the first backup listed above those listed just before its trigger."
	switch {
	case reused:
		how = fmt.Sprintf("This destroy queued no backup: backup %s, created at %s, is within reuse_within (%s).",
			b.ID, b.CreatedAt.UTC().Format(time.RFC3339), reuseWithin)
	case followed: // a stopped destroy's backup; one renewed in its place is this destroy's (Outcome.Renewed)
		how = fmt.Sprintf("This destroy queued no backup: it followed backup %s, created at %s, which a destroy that stopped "+
			"began (pending_destroy_backup), until it succeeded.", b.ID, b.CreatedAt.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("The %s was destroyed after backup %s", guardName(accountID), b.ID),
		fmt.Sprintf("Backup %s of account %s succeeded %s, so the destroy went ahead. %s\n\nThe guard's state is gone with it, so "+
			"this is where the backup's id is shown; the account's backups (data source backup_account_backups) keep listing it.",
			b.ID, accountID, completed, how)
}

// namingGuard is a stopped destroy's diagnostics, each naming the guard and, for an error, what was kept.
func namingGuard(accountID string, in diag.Diagnostics) diag.Diagnostics {
	out := make(diag.Diagnostics, 0, len(in))
	for _, d := range in {
		what := lowerFirst(strings.NewReplacer(" of account "+accountID, "", " to account "+accountID, "").Replace(d.Summary()))
		var named diag.Diagnostic = diag.NewWarningDiagnostic(fmt.Sprintf("The %s: %s", guardName(accountID), what), d.Detail())
		if d.Severity() == diag.SeverityError {
			named = diag.NewErrorDiagnostic(fmt.Sprintf("Kept the %s and what it guards: %s", guardName(accountID), what), d.Detail())
		}
		if at, ok := d.(diag.DiagnosticWithPath); ok {
			named = diag.WithPath(at.Path(), named)
		}
		out.Append(named)
	}
	return out
}

// lowerFirst lowers a summary's first letter to follow a colon, unless it begins a name (a setting's, an id's).
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	next, _ := utf8.DecodeRuneInString(s[n:])
	if !unicode.IsUpper(r) || !unicode.IsLower(next) {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

// cannotBackUp says whether a destroy's failure shows that the account cannot be backed up, the one
// case destroy_without_backup lets through: gone, the trigger refused by the service itself (422), or
// failed. A 422 to any other request (a read before the trigger) shows nothing.
func cannotBackUp(o workflow.Outcome) (string, bool) {
	var refusal *workflow.RefusalError
	var answer *client.APIError
	switch {
	case errors.Is(o.Err, client.ErrGone):
		return "the Backup Service proved it does not exist for this API key (deleted, or outside the key's organization)", true
	case errors.As(o.Err, &refusal) && errors.Is(refusal.Err, client.ErrUnprocessable) && errors.As(refusal.Err, &answer) && answer.FromService():
		return "the Backup Service refused to back it up", true // its answer, status and all, follows once
	case o.Kind == workflow.Failed && o.Backup != nil && o.Backup.Status != client.StatusSuccess:
		// A success that does not count (the workflow's rule) proves nothing.
		return "its backup failed", true
	}
	return "", false
}

// pendingAttrTypes are the fields of pending_destroy_backup, the record as users see it.
var pendingAttrTypes = map[string]attr.Type{
	"backup_id":    types.StringType,
	"triggered_at": timetypes.RFC3339Type{},
	"counts_until": timetypes.RFC3339Type{},
}

func pendingNull() types.Object { return types.ObjectNull(pendingAttrTypes) }

// pendingObject is the record of a stopped destroy as pending_destroy_backup; null for none.
func pendingObject(d workflow.Record) types.Object {
	if d.Empty() {
		return pendingNull()
	}
	return types.ObjectValueMust(pendingAttrTypes, map[string]attr.Value{
		"backup_id":    stringOrNull(d.BackupID),
		"triggered_at": timeValue(d.TriggeredAt),
		"counts_until": timetypes.NewRFC3339TimeValue(d.CountsUntil.UTC()),
	})
}

func pendingAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{Computed: true,
		Description: "The backup a destroy of this resource began and did not see succeed (it was interrupted, timed out, or " +
			"could not identify its backup); null otherwise. A destroy before `counts_until` follows this backup instead of " +
			"queueing another, and goes ahead only if it succeeds; a later destroy takes a new backup. Any apply that plans " +
			"changes and is not a destroy clears it (the plan shows it going to null), because the data may have changed since; " +
			"a refresh (`-refresh-only`) keeps it.",
		Attributes: map[string]schema.Attribute{
			"backup_id":    schema.StringAttribute{Computed: true, Description: "ID of the backup; null when the destroy could not identify it (it is then looked for above the backups listed just before its trigger)."},
			"triggered_at": schema.StringAttribute{Computed: true, CustomType: timetypes.RFC3339Type{}, Description: "When the backup was triggered (RFC 3339)."},
			"counts_until": schema.StringAttribute{Computed: true, CustomType: timetypes.RFC3339Type{}, Description: "Until when the backup stands for a destroy (RFC 3339): the interrupted or timed-out destroy plus its `resume_within`."},
		},
	}
}

// destroyRecord is the record a guard's stopped destroy left; an unreadable one is none (a new backup).
func destroyRecord(ctx context.Context, private privateGetter) workflow.Record {
	stored, _ := private.GetKey(ctx, workflow.Key)
	r, _ := workflow.Decode(stored) // the zero Record with any error
	return r
}
