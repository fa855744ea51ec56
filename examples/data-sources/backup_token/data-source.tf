terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

data "backup_token" "current" {}

# Warn on every plan once the key expires within 30 days.
check "backup_api_key_expiry" {
  assert {
    condition     = timecmp(data.backup_token.current.expires_at, timeadd(plantimestamp(), "720h")) > 0
    error_message = "The Backup Service API key \"${data.backup_token.current.name}\" expires at ${data.backup_token.current.expires_at}: rotate it."
  }
}

output "backup_key" {
  value = {
    name         = data.backup_token.current.name
    expires_at   = data.backup_token.current.expires_at
    organization = data.backup_token.current.organization_name
  }
}
