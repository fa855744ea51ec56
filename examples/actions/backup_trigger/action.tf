terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

# Terraform 1.14+: take a backup of the CRM account before each schema
# migration, and stop the migration unless the backup succeeds.
action "backup_trigger" "pre_migration" {
  config {
    account_id          = "acc_0123456789abcdef"
    wait_for_completion = true   # the default: a guarded change waits for its backup
    on_conflict         = "wait" # the default: wait for a backup already in progress

    timeouts {
      invoke = "30m"
    }
  }
}

variable "schema_version" {
  type    = string
  default = "42"
}

resource "terraform_data" "schema" {
  input = var.schema_version

  lifecycle {
    action_trigger {
      events  = [before_update]
      actions = [action.backup_trigger.pre_migration]
    }
  }
}

# On demand, from a pipeline:
#   terraform apply -invoke=action.backup_trigger.pre_migration
