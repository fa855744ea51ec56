terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

data "backup_audit_logs" "recent" {
  order       = "desc"
  max_results = 200
}

output "recent_backup_triggers" {
  value = [
    for l in data.backup_audit_logs.recent.audit_logs : "${l.created_at} ${l.actor} ${l.resource_id}"
    if l.action == "backup.triggered"
  ]
}
