package provider

import (
	"archive/zip"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// keyVariableConfig reads the key from a variable, sensitive and, when
// ephemeral, ephemeral too.
func keyVariableConfig(baseURL string, ephemeral bool) string {
	return withProvider(fmt.Sprintf(`variable "backup_api_key" {
  type      = string
  sensitive = true
  ephemeral = %t
}

provider "backup" {
  base_url = %q
  api_key  = var.backup_api_key
}

data "backup_token" "this" {}

output "key_name" {
  value = data.backup_token.this.name
}
`, ephemeral, baseURL))
}

// planHolds reports whether any file of a saved plan (a zip archive)
// contains s.
func planHolds(t *testing.T, plan, s string) bool {
	t.Helper()
	zr, err := zip.OpenReader(plan)
	if err != nil {
		t.Fatalf("the saved plan: %v", err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}

// The docs recommend an ephemeral variable for the key: a saved plan
// (plan -out) then does not hold it, and apply takes it again. A sensitive
// variable alone is written into the plan file: the difference is what the
// recommendation rests on, so both are checked.
func TestAccEphemeralKeyVariableStaysOutOfSavedPlans(t *testing.T) {
	t.Parallel()
	skipBelow(t, "1.10.0", "ephemeral input variables")
	for _, ephemeral := range []bool{false, true} {
		t.Run(fmt.Sprintf("ephemeral=%t", ephemeral), func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, mockservice.Options{Seed: 2210})
			c := newCLI(t, e, keyVariableConfig(e.url, ephemeral))
			keyVar := "TF_VAR_backup_api_key=" + e.key
			c.env = append(c.env, keyVar)
			c.run("plan", "-input=false", "-no-color", "-out=tfplan")
			held := planHolds(t, filepath.Join(c.dir, "tfplan"), e.key)
			if held == ephemeral {
				t.Fatalf("ephemeral = %t: the saved plan holds the key: %t", ephemeral, held)
			}
			if !ephemeral {
				return
			}
			// Apply asks for the ephemeral value again, and works with it.
			c.env = c.env[:len(c.env)-1]
			out, err := c.exec(nil, "apply", "-input=false", "-no-color", "tfplan")
			if err == nil || !strings.Contains(out, "backup_api_key") {
				t.Fatalf("apply of the saved plan without the key: %v\n%s", err, out)
			}
			c.env = append(c.env, keyVar)
			if out := c.run("apply", "-input=false", "-no-color", "tfplan"); !strings.Contains(out, mockservice.DemoKeyName) {
				t.Errorf("apply with the key:\n%s", out)
			}
		})
	}
}
