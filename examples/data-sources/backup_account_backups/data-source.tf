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

# The restore point for a change ticket: the last good backup that finished
# before the change window opened (one still running then, or that finished
# after it, holds data the change may have touched).
data "backup_account_backups" "restore_point" {
  account_id       = "acc_0123456789abcdef"
  statuses         = ["success"]
  max_results      = 1
  completed_before = "2026-11-24T09:00:00Z"
}

output "crm_restore_point" {
  value = one(data.backup_account_backups.restore_point.backups[*].id)
}
