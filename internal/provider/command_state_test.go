package provider

import (
	"strings"
	"testing"

	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// Two triggers of one account replaced in one command are both kept for
// their replacements, whatever the order of the Deletes.
func TestCommandStateKeepsEveryReplacedTriggerOfAnAccount(t *testing.T) {
	s := &commandState{replaced: map[string][]replacedTrigger{}}
	s.remember("acc_0123456789abcdef", "a", workflow.Record{Phase: workflow.PhaseSucceeded, BackupID: "bkp_a"}, 0)
	s.remember("acc_0123456789abcdef", "b", workflow.Record{Phase: workflow.PhaseSucceeded, BackupID: "bkp_b"}, 0)
	for _, want := range []string{"bkp_b", "bkp_a"} {
		got, ok := s.take("acc_0123456789abcdef", strings.TrimPrefix(want, "bkp_"))
		if !ok || got.Record.BackupID != want {
			t.Fatalf("take %s = %+v, %v", want, got, ok)
		}
	}
	if _, ok := s.take("acc_0123456789abcdef", "a"); ok {
		t.Fatal("taken twice")
	}
}
