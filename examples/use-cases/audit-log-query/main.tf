# Who triggered backups recently, per actor.
terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

data "backup_audit_logs" "recent" {
  max_results = 1000
}

locals {
  triggers = [for l in data.backup_audit_logs.recent.audit_logs : l if l.action == "backup.triggered"]
}

output "backup_triggers_per_actor" {
  value = { for l in local.triggers : l.actor => l.resource_id... }
}
