# versions.tf, beside backups.tfquery.hcl: a query file cannot hold a
# terraform or provider block, and `terraform query` needs both here.
terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

# Reads BACKUP_BASE_URL and BACKUP_API_KEY; or set base_url and api_key.
provider "backup" {}
