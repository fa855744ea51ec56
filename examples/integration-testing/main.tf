# A module that backs up an account before each release, and guards the
# resource holding the account's data: destroying it takes a backup first,
# and a failed backup stops the destroy. tests/ holds its integration tests,
# which apply it against the mock Backup Service, and failure-tests/ the
# test of its guard's failure path; ci.sh runs both, and the failure paths
# as plain commands.
terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

variable "account_id" {
  description = "The account backed up before each release, and before its data is destroyed."
  type        = string
  default     = "acc_0123456789abcdef"
}

variable "release" {
  description = "A new value takes a new backup."
  type        = string
  default     = "2026.11.1"
}

# A backup before each release; the apply fails unless it succeeds.
resource "backup_trigger" "before_release" {
  account_id          = var.account_id
  triggers            = { release = var.release }
  wait_for_completion = true
}

# Stands for the resource that holds the account's data (a tenant, a
# database, a bucket).
resource "terraform_data" "tenant" {
  input = var.account_id
}

# Destroyed before the tenant: one backup, which must succeed, or the
# destroy stops with the tenant kept.
resource "backup_on_destroy" "tenant" {
  account_id = var.account_id
  depends_on = [terraform_data.tenant]

  lifecycle {
    replace_triggered_by = [terraform_data.tenant.id]
  }
}

output "backup_id" {
  value = backup_trigger.before_release.id
}

output "backup_status" {
  value = backup_trigger.before_release.backup_status
}
