# The latest successful backup of one account, and a check that it is less
# than 24 hours old. It costs the pages of backups up to that one.
terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

data "backup_account_backups" "crm_latest_good" {
  account_id  = "acc_0123456789abcdef"
  statuses    = ["success"]
  max_results = 1
}

locals {
  crm_latest_good = one(data.backup_account_backups.crm_latest_good.backups)
}

check "crm_backup_is_fresh" {
  assert {
    # try(): no successful backup at all fails the check too; one dated ahead of now (a clock set ahead) proves nothing.
    condition = try(timecmp(local.crm_latest_good.completed_at, timeadd(plantimestamp(), "-24h")) > 0 &&
    timecmp(local.crm_latest_good.completed_at, timeadd(plantimestamp(), "10s")) <= 0, false)
    error_message = "The CRM account has no successful backup in the last 24 hours, dated before now (latest: ${try(local.crm_latest_good.completed_at, "none")})."
  }
}

output "crm_latest_good_backup" {
  value = local.crm_latest_good
}
