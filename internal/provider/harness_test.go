package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// Environment variables the harness reads or sets.
const (
	envTerraformPath = "TF_ACC_TERRAFORM_PATH"
	envCLIConfigFile = "TF_CLI_CONFIG_FILE"
	openTofuRegistry = "registry.opentofu.org"
)

// usingOpenTofu is set by TestMain when the acceptance tests run on
// OpenTofu. Tests use it only where OpenTofu differs from Terraform, and say
// why next to it.
var usingOpenTofu bool

// prepareCLI makes the acceptance suite run the same on any Terraform or
// OpenTofu binary on a fresh machine:
//   - A TF_CLI_CONFIG_FILE naming a file that does not exist makes OpenTofu
//     print a warning on stdout, which breaks the test framework's version
//     parsing. It is pointed at an empty configuration in dir instead.
//   - OpenTofu resolves "backup-service/backup" in registry.opentofu.org,
//     so the framework must serve the provider at that host.
func prepareCLI(dir string) error {
	if f := os.Getenv(envCLIConfigFile); f != "" {
		if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) {
			empty := filepath.Join(dir, "empty.tfrc")
			if err := os.WriteFile(empty, nil, 0o600); err != nil {
				return err
			}
			_ = os.Setenv(envCLIConfigFile, empty)
		}
	}
	bin := os.Getenv(envTerraformPath)
	if bin == "" {
		found, lookErr := exec.LookPath("terraform")
		if lookErr != nil {
			return nil //nolint:nilerr // the test framework reports the missing binary itself
		}
		bin = found
	}
	flavour, err := cliFlavour(bin)
	if err != nil {
		return err
	}
	cliBinary = bin
	if flavour == "OpenTofu" {
		usingOpenTofu = true
		if os.Getenv(resource.EnvTfAccProviderHost) == "" {
			_ = os.Setenv(resource.EnvTfAccProviderHost, openTofuRegistry)
		}
	}
	return nil
}

// cliBinary is the Terraform or OpenTofu binary the suite runs.
var cliBinary string

// versionGates are the features some tests need, and the version that
// has them; the tests skip below it (tfversion.SkipBelow or skipBelow).
var versionGates = []struct{ feature, since string }{
	{"terraform test with mock_provider", "1.7.0"},
	{"removed blocks", "1.7.0"},
	{"ephemeral input variables", "1.10.0"},
	{"resource identity and import by identity", "1.12.0"},
	{"actions, list resources and terraform query", "1.14.0"},
	{"before_destroy action events", "1.16.0-rc1"},
}

// gatesSummary says in one line which gated tests this binary skipped, so
// that a green make test on an older Terraform does not read as all.
func gatesSummary() string {
	if cliBinary == "" {
		return ""
	}
	out, err := exec.Command(cliBinary, "version", "-json").Output()
	if err != nil {
		return ""
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if json.Unmarshal(out, &v) != nil {
		return ""
	}
	have, err := version.NewVersion(v.Version)
	if err != nil {
		return ""
	}
	var skipped []string
	for _, g := range versionGates {
		if have.LessThan(version.Must(version.NewVersion(g.since))) {
			skipped = append(skipped, fmt.Sprintf("%s (%s+)", g.feature, strings.TrimSuffix(g.since, "-rc1")))
		}
	}
	if len(skipped) == 0 {
		return fmt.Sprintf("gates: %s %s runs every version-gated test", filepath.Base(cliBinary), v.Version)
	}
	return fmt.Sprintf("gates: %s %s skipped the tests of %s; make testmatrix runs them on newer binaries",
		filepath.Base(cliBinary), v.Version, strings.Join(skipped, ", "))
}

// cliFlavour runs "bin version" and returns "Terraform" or "OpenTofu", the
// first word of what it prints.
func cliFlavour(bin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "version")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s version: %w", bin, err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return first, nil
}
