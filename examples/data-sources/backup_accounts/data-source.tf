terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

# Every account, newest first.
data "backup_accounts" "all" {}

# Only the Slack accounts whose latest backup failed, oldest first.
data "backup_accounts" "failed_slack" {
  platform      = "slack"
  backup_status = "failed"
  order         = "asc"
}

output "account_names" {
  value = { for a in data.backup_accounts.all.accounts : a.id => a.name }
}

output "failed_slack_account_ids" {
  value = data.backup_accounts.failed_slack.ids
}
