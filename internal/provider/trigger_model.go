package provider

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

type triggerModel struct {
	ID                types.String         `tfsdk:"id"`
	AccountID         types.String         `tfsdk:"account_id"`
	Triggers          types.Map            `tfsdk:"triggers"`
	WaitForCompletion types.Bool           `tfsdk:"wait_for_completion"`
	OnConflict        types.String         `tfsdk:"on_conflict"`
	BackupStatus      types.String         `tfsdk:"backup_status"`
	TriggeredAt       timetypes.RFC3339    `tfsdk:"triggered_at"`
	CompletedAt       timetypes.RFC3339    `tfsdk:"completed_at"`
	ReuseWithin       timetypes.GoDuration `tfsdk:"reuse_within"`
	Reused            types.Bool           `tfsdk:"reused"`
	Timeouts          timeouts.Value       `tfsdk:"timeouts"`
}

// triggerIdentity identifies a trigger by its backup (Terraform 1.12+ and
// OpenTofu 1.12+ import by it).
type triggerIdentity struct {
	AccountID types.String `tfsdk:"account_id"`
	ID        types.String `tfsdk:"id"`
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

// createTimeout is timeouts.create, or the default.
func (m *triggerModel) createTimeout(ctx context.Context, diags *diag.Diagnostics) time.Duration {
	d, ds := m.Timeouts.Create(ctx, defaultCreateTimeout)
	diags.Append(ds...)
	return d
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

// importedModel is a trigger as an import records it (and as a list query
// shows it, for the configuration it generates): the backup, no triggers,
// and wait_for_completion and on_conflict at their defaults, until the
// first apply adopts the configuration's values in place.
func importedModel(b *client.Backup) triggerModel {
	m := triggerModel{
		AccountID:         types.StringValue(b.AccountID),
		Triggers:          types.MapNull(types.StringType),
		WaitForCompletion: types.BoolValue(false),
		OnConflict:        types.StringValue(onConflictWait),
		ReuseWithin:       timetypes.NewGoDurationNull(),
		Timeouts:          timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)},
	}
	m.setRecord(workflow.Record{}.Observe(*b))
	return m
}

// timeoutsAttrTypes is the shape of the timeouts block (create only).
var timeoutsAttrTypes = map[string]attr.Type{"create": types.StringType}

func (r *triggerResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			"account_id": identityschema.StringAttribute{RequiredForImport: true, Description: "ID of the account (`acc_...`)."},
			"id":         identityschema.StringAttribute{RequiredForImport: true, Description: "ID of the backup (`bkp_...`)."},
		},
	}
}
