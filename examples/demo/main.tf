# The configuration `make demo` applies against the mock Backup Service.
# The provider reads BACKUP_BASE_URL and BACKUP_API_KEY from the environment.
terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

provider "backup" {}

data "backup_token" "current" {}

data "backup_accounts" "all" {
  order = "asc"
}

resource "backup_trigger" "first_account" {
  account_id          = data.backup_accounts.all.ids[0]
  triggers            = { demo = "1" }
  wait_for_completion = true

  timeouts {
    create = "2m"
  }
}

output "api_key" {
  value = "${data.backup_token.current.name} of ${data.backup_token.current.organization_name}, expires ${data.backup_token.current.expires_at}"
}

output "accounts" {
  value = [for a in data.backup_accounts.all.accounts : "${a.id}  ${a.platform}  ${a.name}  (${a.backup_status})"]
}

output "backup" {
  value = "${backup_trigger.first_account.id} of ${backup_trigger.first_account.account_id}: ${backup_trigger.first_account.backup_status}, completed at ${backup_trigger.first_account.completed_at}"
}
