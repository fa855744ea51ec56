terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

data "backup_account_backups" "crm" {
  account_id  = "acc_0123456789abcdef"
  max_results = 10
}

output "crm_last_backup" {
  value = try(data.backup_account_backups.crm.backups[0], null)
}
