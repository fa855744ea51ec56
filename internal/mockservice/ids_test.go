package mockservice

import (
	"math/rand/v2"
	"testing"

	"github.com/backup-service/terraform-provider-backup/internal/ids"
)

func TestNewIsDeterministicAndWellFormed(t *testing.T) {
	t.Parallel()
	a := rand.New(rand.NewPCG(1, 2))
	b := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		x, y := newID(ids.AccountPrefix, a.IntN), newID(ids.AccountPrefix, b.IntN)
		if x != y {
			t.Fatalf("same seed gave %q and %q", x, y)
		}
		if !ids.IsAccountID(x) {
			t.Fatalf("newID gave malformed id %q", x)
		}
	}
	if !ids.IsBackupID(newID(ids.BackupPrefix, a.IntN)) {
		t.Fatal("backup id malformed")
	}
}
