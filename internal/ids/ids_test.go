package ids

import "testing"

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
