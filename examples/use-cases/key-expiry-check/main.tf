# Plan-time checks of the API key: a warning 30 days before expiry, and a
# hard stop 7 days before, so a pipeline never runs with a dying key.
terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

data "backup_token" "current" {
  lifecycle {
    postcondition {
      condition     = timecmp(self.expires_at, timeadd(plantimestamp(), "168h")) > 0
      error_message = "The Backup Service API key \"${self.name}\" expires at ${self.expires_at}, within 7 days. Create a new key in the Backup Service web application."
    }
  }
}

check "backup_api_key_expiry" {
  assert {
    condition     = timecmp(data.backup_token.current.expires_at, timeadd(plantimestamp(), "720h")) > 0
    error_message = "The Backup Service API key \"${data.backup_token.current.name}\" expires at ${data.backup_token.current.expires_at}, within 30 days."
  }
}
