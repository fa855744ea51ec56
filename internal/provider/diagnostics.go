package provider

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// addAPIError turns a client error into a diagnostic that says what failed
// (summary, for example `Unable to read backup_account "acc_..."`), the HTTP
// status, the problem title and detail, the request id, and what to do.
func addAPIError(diags *diag.Diagnostics, summary string, err error) {
	diags.AddError(summary, describeError(err))
}

// describeError is the detail text of addAPIError; hints, specific to the
// operation, come after the service's explanation and before the request id.
func describeError(err error, hints ...string) string {
	var b strings.Builder
	var apiErr *client.APIError
	switch {
	case errors.As(err, &apiErr):
		fmt.Fprintf(&b, "The Backup Service answered HTTP %d", apiErr.StatusCode)
		if apiErr.Title != "" {
			fmt.Fprintf(&b, " (%s)", apiErr.Title)
		}
		fmt.Fprintf(&b, " to %s %s.", apiErr.Method, apiErr.Path)
		if apiErr.Detail != "" {
			fmt.Fprintf(&b, "\n\n%s", apiErr.Detail)
		}
		if hint := hintFor(apiErr); hint != "" {
			fmt.Fprintf(&b, "\n\n%s", hint)
		}
		for _, h := range hints {
			fmt.Fprintf(&b, "\n\n%s", h)
		}
		var re *client.RetryError
		if errors.As(err, &re) {
			fmt.Fprintf(&b, "\n\nThe provider gave up after %d attempt(s): %s.", re.Attempts, re.Reason)
		}
		if apiErr.RequestID != "" {
			fmt.Fprintf(&b, "\n\nRequest ID: %s (quote it to the Backup Service's support).", apiErr.RequestID)
		} else {
			b.WriteString("\n\nThe response carried no request ID: it may not have come from the Backup Service (a proxy, for instance).")
		}
	default:
		b.WriteString(err.Error())
		for _, h := range hints {
			fmt.Fprintf(&b, "\n\n%s", h)
		}
		var re *client.RetryError
		if errors.As(err, &re) {
			b.WriteString("\n\nThe request failed on every attempt; check the base URL and the network, or raise max_retries or request_timeout.")
		}
	}
	return b.String()
}

func hintFor(e *client.APIError) string {
	switch e.StatusCode {
	case http.StatusUnauthorized:
		return "The API key was rejected: it is missing, invalid or expired, belongs to another organization, or the user who created it lost access. " +
			"API keys are created and revoked by an organization owner or admin in the Backup Service web application; " +
			"set a valid one in the provider's api_key or the " + EnvAPIKey + " environment variable."
	case http.StatusForbidden:
		return "The API key is valid but lacks permission for this: the resource is outside the key's organization, the permissions of the user " +
			"who created the key changed, or the account is restricted."
	case http.StatusTooManyRequests:
		return "The Backup Service is rate limiting this key (or is under heavy load) and the retries ran out; lower Terraform's -parallelism or raise max_retries."
	}
	if e.StatusCode >= 500 {
		return "The Backup Service failed; the provider retried where that was safe. Try again later."
	}
	return ""
}
