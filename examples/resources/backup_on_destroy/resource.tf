terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

# Stands for the resource that holds the account's data (a database, a
# tenant, a bucket).
resource "terraform_data" "crm_database" {
  input = "crm"
}

# Back up the CRM account before its database is destroyed or replaced, and
# stop (keeping the database) unless the backup succeeds.
resource "backup_on_destroy" "crm" {
  account_id = "acc_0123456789abcdef"

  # Destroyed first, so the backup comes before the database goes: this
  # guards `terraform destroy` and removal of the database's block.
  depends_on = [terraform_data.crm_database]

  lifecycle {
    # A replacement of the database gives it a new id, which replaces the
    # guard: one backup before the old database goes. An in-place update
    # keeps the id and takes no backup. (depends_on alone guards no
    # replacement.)
    replace_triggered_by = [terraform_data.crm_database.id]
  }

  timeouts {
    delete = "30m" # read from the state at destroy: apply a change first
  }
}
