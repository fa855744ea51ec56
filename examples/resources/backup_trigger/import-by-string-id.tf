# Adopt an existing backup: "<account id>/<backup id>".
import {
  to = backup_trigger.before_migration
  id = "acc_0123456789abcdef/bkp_0123456789abcdef"
}
