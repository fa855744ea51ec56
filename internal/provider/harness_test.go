package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

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
	if flavour == "OpenTofu" {
		usingOpenTofu = true
		if os.Getenv(resource.EnvTfAccProviderHost) == "" {
			_ = os.Setenv(resource.EnvTfAccProviderHost, openTofuRegistry)
		}
	}
	return nil
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
