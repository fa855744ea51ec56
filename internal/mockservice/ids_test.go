package mockservice

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

func TestNewIsDeterministicAndWellFormed(t *testing.T) {
	t.Parallel()
	a := rand.New(rand.NewPCG(1, 2))
	b := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		x, y := newID(accountPrefix, a.IntN), newID(accountPrefix, b.IntN)
		if x != y {
			t.Fatalf("same seed gave %q and %q", x, y)
		}
		if !accountIDFormat.MatchString(x) {
			t.Fatalf("newID gave malformed id %q", x)
		}
	}
	if !regexp.MustCompile(`^bkp_[A-Za-z0-9]{16}$`).MatchString(newID(backupPrefix, a.IntN)) {
		t.Fatal("backup id malformed")
	}
}
