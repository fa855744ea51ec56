package ids

import (
	"math/rand/v2"
	"testing"
)

func TestIsAccountID(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"acc_0123456789abcdef":  true,
		"acc_ABCDEFGHIJKLMNOP":  true,
		"acc_0123456789abcde":   false, // 15
		"acc_0123456789abcdef0": false, // 17
		"ACC_0123456789abcdef":  false,
		"acc_0123456789abcde-":  false,
		"bkp_0123456789abcdef":  false,
		"":                      false,
		"acc_0123456789abcdéf":  false,
	}
	for in, want := range cases {
		if got := IsAccountID(in); got != want {
			t.Errorf("IsAccountID(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestNewIsDeterministicAndWellFormed(t *testing.T) {
	t.Parallel()
	a := rand.New(rand.NewPCG(1, 2))
	b := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		x, y := New(AccountPrefix, a.IntN), New(AccountPrefix, b.IntN)
		if x != y {
			t.Fatalf("same seed gave %q and %q", x, y)
		}
		if !IsAccountID(x) {
			t.Fatalf("New gave malformed id %q", x)
		}
	}
	if !IsBackupID(New(BackupPrefix, a.IntN)) {
		t.Fatal("backup id malformed")
	}
}
