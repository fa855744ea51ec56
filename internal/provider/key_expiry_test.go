package provider

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// key_expiry_warning warns in a plan when the key expires within it,
// naming the key and the date; not otherwise. It costs one token read per
// provider process, shared with the organization check, and validate sends
// nothing.
func TestAccKeyExpiryWarning(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 4110})
	expires := e.clock.Now().Add(10 * 24 * time.Hour).UTC().Truncate(time.Second)
	soon := e.srv.AddKey(mockservice.KeySpec{Name: "ci-soon", ExpiresAt: expires})
	later := e.srv.AddKey(mockservice.KeySpec{Name: "ci-later", ExpiresAt: e.clock.Now().Add(60 * 24 * time.Hour)})
	provider := func(key string) string {
		return withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url           = %q\n  api_key            = %q\n"+
			"  organization_id    = %q\n  key_expiry_warning = \"720h\"\n}\n\n%s",
			e.url, key, e.srv.OrganizationID(), triggerConfig(e.srv.AccountIDs()[0], "")))
	}
	c := newCLI(t, e, provider(soon))
	before := e.srv.Requests(mockservice.RouteToken)
	c.run("validate", "-no-color")
	if n := e.srv.Requests(mockservice.RouteToken) - before; n != 0 {
		t.Errorf("validate read the token %d times", n)
	}
	out := c.run("plan", "-no-color")
	if !regexp.MustCompile(words(`The Backup Service API key "ci-soon" expires in 10 days`)).MatchString(out) ||
		!regexp.MustCompile(words(expires.Format(time.RFC3339))).MatchString(out) {
		t.Errorf("no warning naming the key and its expiry:\n%s", out)
	}
	// One token read: the warning's, which the organization check of the
	// trigger planned for creation shares.
	if n := e.srv.Requests(mockservice.RouteToken) - before; n != 1 {
		t.Errorf("the plan read the token %d times, want once", n)
	}

	c2 := newCLI(t, e, provider(later))
	if out := c2.run("plan", "-no-color"); regexp.MustCompile(`expires in`).MatchString(out) {
		t.Errorf("a warning for a key expiring in 60 days:\n%s", out)
	}
}
