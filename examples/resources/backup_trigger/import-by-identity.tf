# Terraform 1.12+ and OpenTofu 1.12+: adopt an existing backup by identity.
import {
  to = backup_trigger.before_migration
  identity = {
    account_id = "acc_0123456789abcdef"
    id         = "bkp_0123456789abcdef"
  }
}
