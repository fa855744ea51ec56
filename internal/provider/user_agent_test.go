package provider

import "testing"

func TestUserAgentAppendsTFAppendUserAgent(t *testing.T) {
	t.Parallel()
	for appended, want := range map[string]string{
		"":                       "terraform-provider-backup/1.2.0 Terraform/1.11.4",
		"ci-pipeline/7":          "terraform-provider-backup/1.2.0 Terraform/1.11.4 ci-pipeline/7",
		"  a/1\n  b/2\r\n":       "terraform-provider-backup/1.2.0 Terraform/1.11.4 a/1 b/2",
		"\x1b[2Jmine/3 \x00x/4 ": "terraform-provider-backup/1.2.0 Terraform/1.11.4 [2Jmine/3 x/4",
	} {
		if got := userAgent("1.2.0", "1.11.4", appended); got != want {
			t.Errorf("userAgent(%q) = %q, want %q", appended, got, want)
		}
	}
}
