terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

data "backup_account" "crm" {
  id = "acc_0123456789abcdef"
}

output "crm_backup_status" {
  value = data.backup_account.crm.backup_status
}
