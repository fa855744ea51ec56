# Terraform 1.14+: before a migration that touches every Slack account, back
# them all up at once and stop unless every backup succeeds.
terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

data "backup_accounts" "slack" {
  platform = "slack"
}

action "backup_trigger" "slack" {
  config {
    account_ids = data.backup_accounts.slack.ids

    timeouts {
      invoke = "2h" # the whole fleet, not each account
    }
  }
}

variable "migration" {
  type    = string
  default = "2026-11-slack-retention"
}

resource "terraform_data" "migration" {
  input = var.migration

  lifecycle {
    action_trigger {
      events  = [before_update]
      actions = [action.backup_trigger.slack]
    }
  }
}

# Or on demand: terraform apply -invoke=action.backup_trigger.slack
