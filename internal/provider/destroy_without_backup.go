package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// destroy_without_backup lets named guards whose account cannot be backed up (cannotBackUp) be destroyed; it lives in the
// provider block, which a destroy reads from the configuration.

// nonBlank: a reason holds at least one letter or digit.
var nonBlank = regexp.MustCompile(`[\p{L}\p{N}]`)

type destroyWithoutBackupModel struct {
	AccountIDs []types.String `tfsdk:"account_ids"`
	Reason     types.String   `tfsdk:"reason"`
}

func destroyWithoutBackupAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{Optional: true,
		Description: "Lets the destroy of a `backup_on_destroy` of the named accounts go ahead without a backup, when and only " +
			"when the account cannot be backed up: the service proved it gone (deleted, or outside the key's organization), " +
			"refused the backup as not backupable (its own 422 problem answer, not a proxy's: paused, lapsed subscription, connection needing re-authorization), or " +
			"the backup failed. Every other failure (interrupted, timed out, a refused key, an answer that is not the " +
			"service's) still stops the destroy. A warning names each guard it lets through, with `reason`. **Risk**: the " +
			"guarded data is destroyed with no backup taken for it; remove the setting once that destroy is done.",
		Attributes: map[string]schema.Attribute{
			"account_ids": schema.ListAttribute{Required: true, ElementType: types.StringType,
				Validators:  []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(accountIDValidator())},
				Description: "The accounts whose guards may be let through, each `acc_` followed by exactly 16 letters or digits."},
			"reason": schema.StringAttribute{Required: true, Validators: []validator.String{reasonValidator},
				Description: "Why these guards may go without a backup (a ticket, say), repeated in each warning."},
		},
	}
}

// guardRelease is destroy_without_backup as configured; nil when unset.
type guardRelease struct {
	accounts map[string]bool
	reason   string
}

// releaseFrom reads the setting; it must be known when it is set.
func releaseFrom(ctx context.Context, v types.Object, diags *diag.Diagnostics) *guardRelease {
	if v.IsNull() {
		return nil
	}
	if v.IsUnknown() {
		diags.AddError("Unknown destroy_without_backup", "destroy_without_backup must be known at plan time.")
		return nil
	}
	var m destroyWithoutBackupModel
	diags.Append(v.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	if diags.HasError() {
		return nil
	}
	g := &guardRelease{accounts: map[string]bool{}, reason: strings.TrimSpace(m.Reason.ValueString())}
	for _, id := range m.AccountIDs {
		if id.IsUnknown() {
			diags.AddError("Unknown destroy_without_backup", "destroy_without_backup.account_ids must be known at plan time.")
			return nil
		}
		g.accounts[id.ValueString()] = true
	}
	return g
}

// covers says whether a guard of the account may be let through.
func (g *guardRelease) covers(accountID string) bool { return g != nil && g.accounts[accountID] }

// warning is what each guard let through says.
func (g *guardRelease) warning(accountID string) string {
	return fmt.Sprintf("The provider's destroy_without_backup names account %s, with the reason %q: the destroy goes ahead "+
		"WITHOUT a backup, and the resources this guard depends on are destroyed. Remove the setting once this destroy is done.",
		accountID, g.reason)
}

// conditionalWarning is the plan's warning for a named guard of an existing account: only its trigger, at apply, shows if it can be backed up.
func (g *guardRelease) conditionalWarning(accountID string) string {
	return fmt.Sprintf("The provider's destroy_without_backup names account %s, with the reason %q. The destroy triggers a backup "+
		"first: if it succeeds, the destroy goes ahead after it; if the Backup Service refuses it as not backupable (its own "+
		"422: paused, a lapsed subscription, a connection needing re-authorization) or the backup fails, the destroy goes ahead "+
		"WITHOUT a backup, and the resources this guard depends on are destroyed. The plan cannot tell which: the API shows "+
		"no account state, and only a trigger, which a plan never sends, reveals it. Remove the setting once this destroy is done.",
		accountID, g.reason)
}

// reasonValidator refuses a reason that says nothing: no letter or digit.
var reasonValidator = valueCheck{desc: "must say why the guards may go without a backup, for example a ticket",
	str: func(v string, at path.Path, diags *diag.Diagnostics) {
		if !nonBlank.MatchString(v) {
			diags.AddAttributeError(at, "Missing reason for destroy_without_backup",
				fmt.Sprintf("destroy_without_backup.reason must say why these guards may let a destroy go ahead without a backup "+
					"(a ticket, say), in words: it is repeated in the warning of each guard let through. Got %q.", v))
		}
	}}
