# The failure path of the module's guard, against a running mock Backup
# Service: the backup a destroy takes fails, so the destroy stops and the
# tenant is kept.
#
# This file FAILS, on purpose, at its last run: the guard stops the
# destroy with an error, and terraform test cannot expect a provider's error
# (expect_failures takes only checks, conditions and variable validations;
# hashicorp/terraform#35628). Run it alone, and check that it fails there
# and nowhere else, as ci.sh does:
#
#   terraform test -test-directory=failure-tests   # exit 1: 2 passed, 1 failed
#
# The mock fails one backup only: the teardown's destroy then takes a good
# one, and nothing is left behind.
variables {
  account_id = "acc_0123456789abcdef"
}

run "deploy" {
  module {
    source = "./failure-tests/pipeline"
  }

  variables {
    deployed = true
  }

  assert {
    condition     = startswith(output.backup_id, "bkp_")
    error_message = "The release's backup was not taken: ${output.backup_id}."
  }
}

# The admin API: the account's next backup, the guard's, fails.
run "fail_the_next_backup" {
  module {
    source = "./failure-tests/mock-admin"
  }

  variables {
    control = "fail-backups"
    body    = { count = 1, error = "quota exceeded at the platform" }
  }
}

# Fails: the guard's backup ends failed, the destroy stops, the tenant stays.
run "destroy_stops_when_the_backup_fails" {
  module {
    source = "./failure-tests/pipeline"
  }

  variables {
    deployed = false
  }
}
