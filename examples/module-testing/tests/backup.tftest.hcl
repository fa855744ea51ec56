# terraform test (Terraform 1.7+, OpenTofu 1.8+): the module without the
# Backup Service. mock_provider answers for the provider; mocked values are
# random strings unless given, so every attribute a check or condition
# reads has a default here: a random expires_at would fail timecmp.
mock_provider "backup" {
  mock_data "backup_token" {
    defaults = {
      name              = "ci"
      expires_at        = "2099-01-01T00:00:00Z"
      organization_id   = "org_8Fq2LmT0aZ7cX1vB"
      organization_name = "Example Org"
    }
  }

  mock_data "backup_accounts" {
    defaults = {
      ids = ["acc_0123456789abcdef", "acc_fedcba9876543210"]
      accounts = [
        { id = "acc_0123456789abcdef", name = "Support", platform = "slack", service_type = "backup", backup_status = "success" },
        { id = "acc_fedcba9876543210", name = "Sales", platform = "slack", service_type = "backup", backup_status = "success" },
      ]
    }
  }

  # The module does not read these; a module that does starts from them.
  mock_data "backup_account" {
    defaults = { name = "Support", platform = "slack", service_type = "backup", backup_status = "success" }
  }

  mock_data "backup_account_backups" {
    defaults = {
      truncated = false
      backups   = [{ id = "bkp_0123456789abcdef", status = "success", created_at = "2026-11-22T02:00:00Z", completed_at = "2026-11-22T02:09:00Z", error = null }]
    }
  }

  mock_data "backup_audit_logs" {
    defaults = { audit_logs = [] }
  }

  mock_data "backup_stale_accounts" {
    defaults = { checked = 2, accounts = [], ids = [] }
  }

  mock_resource "backup_trigger" {
    defaults = {
      id            = "bkp_0123456789abcdef"
      backup_status = "success"
      triggered_at  = "2026-11-23T10:00:00Z"
      completed_at  = "2026-11-23T10:04:00Z"
    }
  }
}

run "backs_up_every_account_of_the_platform" {
  assert {
    condition     = length(backup_trigger.release) == 2
    error_message = "Want one trigger per account."
  }
  assert {
    condition     = alltrue([for s in values(output.backups) : s == "success"])
    error_message = "Every backup should have succeeded."
  }
  assert {
    condition     = backup_trigger.release["acc_0123456789abcdef"].triggers.release == var.release
    error_message = "The trigger should follow the release."
  }
}

# Override values must be static, so the runs move the windows, not the
# clock: the mocked key (expiring in 2099) is then "about to expire".
run "warns_when_the_key_expires_within_the_warning_window" {
  command = plan

  variables {
    key_warning_window = "876000h" # 100 years
  }

  expect_failures = [check.backup_api_key_expiry]
}

run "stops_when_the_key_expires_within_the_stop_window" {
  command = plan

  variables {
    key_stop_window = "876000h"
  }

  expect_failures = [data.backup_token.current]
}

run "stops_with_an_expired_key" {
  command = plan

  override_data {
    target = data.backup_token.current
    values = { name = "ci", expires_at = "2026-01-01T00:00:00Z" }
  }

  expect_failures = [data.backup_token.current]
}
