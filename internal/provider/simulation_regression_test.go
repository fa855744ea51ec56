package provider

import "testing"

// Sequences the simulation found breaking the guards' promise, each
// checked to fail with its fix taken out. A seed plays what the generator
// draws from it: a change to the generator must check them again (the
// first finders of (a), (b) and a future-dated record, seeds 7, 69 and
// 161, no longer play their case since one account per invocation). Seeds
// found before runner clocks replay on true time, as they were found.
func TestSimRegression(t *testing.T) {
	for _, tc := range []struct {
		name         string
		seed         uint64
		runnerClocks bool
	}{
		// (a) reuse_within on a backup_trigger crosses an earlier change: a
		// triggers change reuses the backup of the change before it.
		{"ReuseAcrossChange", 17, false},
		// (b) without reuse_within, a replacement's POST answered 500 unprocessed
		// claims the previous change's backup, created seconds before.
		{"UnknownOutcomeClaimsPreviousBackup", 327, false},
		// (c) the service's clock minutes ahead makes an old backup look recent
		// enough for reuse_within.
		{"ClockAheadReuse", 16, false},
		// The service's clock 20 minutes ahead, and a listing that lags: a guard's
		// destroy identified another's newer-dated backup as its own and went
		// ahead before its own had run.
		{"ClockAheadIdentifiesAnotherBackup", 26, false},
		// A guard's destroy_without_backup let through on the failure of a backup
		// the destroy recognised as its own after a lost answer (the stated limit):
		// the account truly could not be backed up.
		{"ReleaseOnAFailureItRecognised", 561, false},
		// The service's clock 4 minutes behind: a POST processed and answered 500
		// was sent again, since its backup looked older than the trigger.
		{"ClockBehindResendsAfterALostAnswer", 64, false},
		// A replacement whose create queued nothing (a conflict not waited out)
		// left no state: the next create, with reuse_within, took the backup of
		// the change before, taken before that change went ahead.
		{"RefusedReplacementForgetsThePreviousChange", 803, false},
		// A tainted trigger's replacement adopted its old backup, and the change
		// went ahead only then: the next change, with reuse_within, took a backup
		// started between that backup and that moment.
		{"AdoptedChangeWentAheadLater", 937, false},
		// A record dated in the future (30 days late) passed for a recent backup,
		// and for the one a trigger whose answer was lost had just queued.
		{"FutureDatedRecordCounts", 93, false},
		// A record dated in the future set the previous change's moment a month
		// ahead: the trigger's own backup, queued by a POST answered 500, was
		// refused and waited out as another's, and a second one queued.
		{"FutureDatedPreviousChangeQueuesTwice", 1685, false},
		// A wait interrupted on a reused backup that then failed; the next apply
		// switched the wait off and let the change go ahead on the failed backup.
		{"WaitSwitchedOffOnAFailedBackup", 1836, false},
		// A success whose record carries an error, read by a refresh, was saved as
		// failed but planned from the state as a success: the change went ahead.
		{"ContradictorySuccessFromTheState", 2903, false},
		// A trigger not identified when its POST's answer was lost: a refresh
		// found its backup good, and the replacement of the tainted trigger took a
		// second backup instead of adopting it.
		{"ReplacementOfAnUnidentifiedTrigger", 2219, false},
		// A guard's stopped destroy stood until a time the provider held to the
		// nanosecond and the checker guessed from when the destroy stopped: a
		// destroy in between was judged by one and run by the other. Both now
		// read counts_until as the state shows it, in whole seconds.
		{"DestroyRecordStandsAsShown", 1850, false},
		// A trigger recorded without its backup on one machine, looked for on
		// another whose clock ran 3 minutes ahead: the time the first recorded was
		// read on the second's clock, and a failed backup queued before the trigger
		// passed for its own.
		{"UnidentifiedTriggerReadOnAnotherMachine", 968, true},
		// A POST processed and answered 500, behind a listing that lags: one look
		// did not show its backup, the trigger was sent again once that backup had
		// ended, and the change queued two. The look now lasts as after a 202.
		{"ProcessedErrorBehindALaggingListing", 7569, true},
		// A trigger recorded without its backup on a machine whose clock ran
		// 3 minutes ahead, looked for on one on true time: its start, read on
		// the second machine's clock, refused its own backup, and a second
		// one was queued. The service's clock is now the one that counts.
		{"RecordedTriggerFromAMachineAhead", 5002, true},
		// The mock re-dated every record when its clock offset changed, so
		// that a record's times moved after the provider kept them: a
		// service stamps its records once.
		{"ServiceClockChangeKeepsRecordTimes", 5056, true},
		// A trigger recorded without its backup, looked for after the
		// service's clock moved 29 minutes, on a machine 20 minutes ahead:
		// another's backup passed for its own on both local clocks.
		{"RecordedTriggerAfterTheServiceClockMoved", 7527, true},
		// The service's clock set back 13 minutes, then a POST answered 500:
		// the newest backup, stamped before, was dated ahead of the service's
		// clock. Hours later it no longer was, and passed for the trigger's
		// own. It is now recorded as never its own (Rule.Misdated). (Its change
		// had reuse_within; the checker grants reuse's stated limit only to a
		// backup the provider reports as reused.)
		{"ClockSetBackBeforeALostAnswer", 6014, true},
		// The stated limit of reuse_within: a backup stamped while the
		// service's clock ran 28 (12) minutes ahead, reused once that clock
		// was set right, reads that much younger. The checker grants it.
		{"ReuseOfARecordStampedAhead", 4961, true},
		{"ReuseOfARecordStampedAheadTrigger", 7141, true},
		// A trigger that reused a backup in progress timed out, and its
		// replacement adopted that backup: it reported it as its own
		// (reused = false), which the stricter checker refuses.
		{"AdoptedReuseStaysReused", 117, true},
		// A backup stamped 15s ahead of a service clock just set back was
		// refused as misdated, then taken as the trigger's own a few looks
		// later, once the service's clock had passed its date.
		{"MisdatedStaysRefusedWhileLooking", 2055, true},
		// A replacement could not read the replaced trigger's backup (a
		// listing answered 500) and queued a second one for the same change.
		{"UnreadableReplacedBackupIsKept", 40743, true},
		// A checker's false alarm: a backup stamped by a service clock set back
		// since, dated within the allowance of the change's start, passed for
		// a lost answer's own, a limit the guide states.
		{"StampedBeforeASetBackWithinTheAllowance", 15216, true},
		// A Ctrl-C'd wait (a warning: the apply stops before its dependents)
		// recorded its change as gone ahead, so the next change reused a
		// backup started before that change really went ahead (a), or one
		// over and failed (false success).
		{"InterruptedWaitIsNotAhead", 11359, true},
		{"InterruptedWaitIsNotAheadFailedReuse", 13104, true},
		// A backup found misdated, later read as older than the trigger (the
		// service's clock behind), was left out of the record; the next
		// apply took it as the trigger's own.
		{"MisdatedKeptWhenItReadsOlder", 49961, true},
		// A checker's false alarm: a destroy on a machine where a stopped
		// destroy's record did not stand failed before its apply, and the
		// checker gave the next destroy, which rightly followed that record, a
		// change of its own.
		{"StoppedDestroyOutlivesAFailedPlan", 49336, true},
		// The checker's own slip in that fix: a killed attempt that stopped
		// before its apply gave the change back, though its retry applied.
		{"StoppedDestroyRetryApplies", 9668, true},
		// A trigger not identified on a runner 3 minutes ahead gave its
		// replacement's replacement a floor on that runner's clock: its own
		// backup read as older than the previous change, and a second was queued.
		{"WentAheadOnTheServiceClock", 27924, true},
		// A replacement's POST, answered 500 but processed, queued a backup in
		// the second the replaced one ended and its change went ahead: refused
		// as that change's, and sent again, so one change queued two.
		{"BackupInTheSecondThePreviousEnded", 49863, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v := runSimulation(t, tc.seed, simSequenceSteps, tc.runnerClocks); len(v) > 0 {
				t.Fatal(v[0].report)
			}
		})
	}
}
