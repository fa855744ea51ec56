package provider

import (
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// clientFrom takes the client the provider's Configure handed over. Nil
// provider data (before configuration, as during validation) is no error.
func clientFrom(providerData any, diags *diag.Diagnostics) *client.Client {
	if providerData == nil {
		return nil
	}
	c, ok := providerData.(*client.Client)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *client.Client, got %T. This is a bug in the provider; please report it.", providerData))
		return nil
	}
	return c
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
