terraform {
  required_providers {
    backup = {
      source  = "backup-service/backup"
      version = "~> 0.1"
    }
  }
}

# Stands for the resource that holds the account's data (a database, a
# tenant, a bucket). Destroying or replacing it destroys the guard first.
resource "terraform_data" "crm_database" {
  input = "crm"
}

# Back up the CRM account before its database is destroyed, and stop the
# destroy (keeping the database) unless the backup succeeds.
resource "backup_on_destroy" "crm" {
  account_id = "acc_0123456789abcdef"

  # Destroyed first, so the backup comes before the database goes.
  depends_on = [terraform_data.crm_database]

  lifecycle {
    # Replacing the database replaces the guard, which takes a backup.
    replace_triggered_by = [terraform_data.crm_database]
  }

  timeouts {
    delete = "30m"
  }
}
