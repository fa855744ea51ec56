terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

variable "backup_api_key" {
  description = "Backup Service API key; or leave api_key out and set BACKUP_API_KEY."
  type        = string
  sensitive   = true
  # ephemeral = true # Terraform 1.10+, OpenTofu 1.11+: kept out of saved plan files
}

provider "backup" {
  base_url = "https://backup.example.com" # or BACKUP_BASE_URL
  api_key  = var.backup_api_key           # or BACKUP_API_KEY

  # Optional:
  # organization_id = "org_8Fq2LmT0aZ7cX1vB" # refuse to back up with another organization's key
  # max_retries     = 4     # server and network errors; 429s are waited out
  # retry_budget    = "5m"  # waits of one request without timeouts of its own
  # request_timeout = "30s"
}
