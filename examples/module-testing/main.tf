# A module that backs up a platform's accounts before each release, and
# stops a plan whose API key expires soon. tests/ holds its
# `terraform test` suite, which runs without the Backup Service.
terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

variable "platform" {
  type    = string
  default = "slack"
}

variable "release" {
  type    = string
  default = "2026.11.1"
}

variable "key_warning_window" {
  description = "Warn in plans when the API key expires within this many hours."
  type        = string
  default     = "720h"
}

variable "key_stop_window" {
  description = "Stop plans when the API key expires within this many hours."
  type        = string
  default     = "168h"
}

data "backup_token" "current" {
  lifecycle {
    postcondition {
      condition     = timecmp(self.expires_at, timeadd(plantimestamp(), var.key_stop_window)) > 0
      error_message = "The Backup Service API key \"${self.name}\" expires at ${self.expires_at}, within ${var.key_stop_window}."
    }
  }
}

check "backup_api_key_expiry" {
  assert {
    condition     = timecmp(data.backup_token.current.expires_at, timeadd(plantimestamp(), var.key_warning_window)) > 0
    error_message = "The Backup Service API key expires at ${data.backup_token.current.expires_at}, within ${var.key_warning_window}."
  }
}

data "backup_accounts" "this" {
  platform = var.platform
}

resource "backup_trigger" "release" {
  for_each = toset(data.backup_accounts.this.ids)

  account_id          = each.value
  triggers            = { release = var.release }
  wait_for_completion = true
}

output "backups" {
  value = { for id, t in backup_trigger.release : id => t.backup_status }
}
