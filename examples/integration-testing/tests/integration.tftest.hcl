# terraform test (Terraform 1.7+, OpenTofu 1.8+) against a running mock
# Backup Service: no mock_provider, so every run applies for real. The
# provider reads BACKUP_BASE_URL and BACKUP_API_KEY from the environment
# (ci.sh sources them from the file backup-mock -env-file writes). At the
# end, terraform test destroys what the runs created: the guard takes its
# backup then. Three backups in all, which ci.sh checks in the mock's
# counters: a run cannot see what an earlier one queued on OpenTofu.

run "backup_before_release" {
  command = apply

  assert {
    condition     = backup_trigger.before_release.backup_status == "success"
    error_message = "The backup before the release ended ${backup_trigger.before_release.backup_status}, not success."
  }

  assert {
    condition     = startswith(output.backup_id, "bkp_") && backup_trigger.before_release.completed_at != null
    error_message = "No completed backup: ${output.backup_id}."
  }
}

# The same release again: nothing to change, no new backup.
run "same_release_again" {
  command = apply

  assert {
    condition     = output.backup_status == "success"
    error_message = "The release's backup is now ${output.backup_status}."
  }
}

run "next_release" {
  command = apply

  variables {
    release = "2026.11.2"
  }

  assert {
    condition     = backup_trigger.before_release.backup_status == "success"
    error_message = "The backup before release 2026.11.2 ended ${backup_trigger.before_release.backup_status}."
  }

  assert {
    condition     = backup_trigger.before_release.triggers.release == "2026.11.2"
    error_message = "The backup was not taken for release 2026.11.2."
  }
}
