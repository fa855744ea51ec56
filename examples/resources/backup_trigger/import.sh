# A backup_trigger is imported by its account id and backup id.
terraform import backup_trigger.before_migration acc_0123456789abcdef/bkp_0123456789abcdef
