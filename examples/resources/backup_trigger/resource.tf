terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

variable "release" {
  description = "Release being deployed; a new value takes a new backup."
  type        = string
  default     = "2026.11.1"
}

# Take a backup of the CRM account before each release's migration, and
# fail the apply unless it succeeds.
resource "backup_trigger" "before_migration" {
  account_id          = "acc_0123456789abcdef"
  triggers            = { release = var.release }
  wait_for_completion = true
  on_conflict         = "wait"

  timeouts {
    create = "30m"
  }
}

output "backup" {
  value = {
    id           = backup_trigger.before_migration.id
    status       = backup_trigger.before_migration.backup_status
    triggered_at = backup_trigger.before_migration.triggered_at
    completed_at = backup_trigger.before_migration.completed_at
  }
}
