# backups.tfquery.hcl (Terraform 1.14+): the account's failed backups, newest
# first. `terraform query` lists them; `terraform query
# -generate-config-out=adopted.tf` writes import and resource blocks that
# adopt them as backup_trigger resources, without taking a backup.
list "backup_trigger" "failed" {
  provider = backup
  limit    = 20

  config {
    account_id = "acc_0123456789abcdef"
    statuses   = ["failed"] # optional: pending, running, success, failed
  }
}
