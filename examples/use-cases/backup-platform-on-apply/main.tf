# In a pipeline: back up every Slack account whenever the release changes,
# and fail the apply if any backup fails.
terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

variable "release" {
  type    = string
  default = "2026.11.1"
}

data "backup_accounts" "slack" {
  platform = "slack"
}

resource "backup_trigger" "slack" {
  for_each = toset(data.backup_accounts.slack.ids)

  account_id          = each.value
  triggers            = { release = var.release }
  wait_for_completion = true

  timeouts {
    create = "1h"
  }
}

output "slack_backups" {
  value = { for id, t in backup_trigger.slack : id => "${t.id}: ${t.backup_status}" }
}
