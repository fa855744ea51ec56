terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

# Every Slack account without a successful backup in the last 24 hours.
data "backup_stale_accounts" "slack" {
  max_age  = "24h"
  platform = "slack"
}

# A check warns in every plan (and in HCP Terraform's health assessments)
# without blocking the apply.
check "slack_backups_are_fresh" {
  assert {
    condition     = length(data.backup_stale_accounts.slack.accounts) == 0
    error_message = "No successful backup within 24h: ${join(", ", [for a in data.backup_stale_accounts.slack.accounts : "${a.name} (${a.id}: ${a.last_success_at != null ? "last success ${a.last_success_at}" : a.reason})"])}."
  }
}
