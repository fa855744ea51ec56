package provider

import "testing"

// The message says what is wrong with the value and how to write one.
func TestTimeoutProblem(t *testing.T) {
	t.Parallel()
	const form = `timeouts.create must be a duration: a number followed by a unit (ns, us, ms, s, m or h), such as "30m", "1h" or "1h30m"; got `
	const positive = `. Write a number followed by a unit (ns, us, ms, s, m or h), such as "30m", "1h" or "1h30m".`
	for _, tc := range []struct{ value, want string }{
		{"30m", ""},
		{"1h30m", ""},
		{"250ms", ""},
		{"0s", `timeouts.create must be positive; got "0s"` + positive},
		{"0", `timeouts.create must be positive; got "0"` + positive},
		{"-5m", `timeouts.create must be positive; got "-5m"` + positive},
		{"soon", form + `"soon".`},
		{"", form + `"".`},
		{"1d", form + `"1d".`},
		{"1.5d", form + `"1.5d".`},
		{"1d12h", form + `"1d12h".`},
		{"1d30m", form + `"1d30m".`},
		{"2w", form + `"2w".`},
		{"1 day", form + `"1 day".`},
		{"-1d", form + `"-1d".`},
		{"30", form + `"30".`},
		{"5min", form + `"5min".`},
		{"1H", form + `"1H".`},
		{"30 m", form + `"30 m".`},
		{"9999999h", form + `"9999999h".`},
	} {
		if got := timeoutProblem("timeouts.create", tc.value); got != tc.want {
			t.Errorf("timeoutProblem(%q):\n got %s\nwant %s", tc.value, got, tc.want)
		}
	}
}
