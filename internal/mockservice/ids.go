package mockservice

import "regexp"

// Prefixes of the service's ids; each is followed by idSuffixLength letters or digits.
const (
	accountPrefix      = "acc_"
	backupPrefix       = "bkp_"
	auditLogPrefix     = "log_"
	organizationPrefix = "org_"
	idSuffixLength     = 16
)

// accountIDFormat is the format the service answers 422 to any other account id with.
var accountIDFormat = regexp.MustCompile(`^acc_[A-Za-z0-9]{16}$`)

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// newID builds an identifier with prefix from a source of random numbers, so
// that a seeded source gives the same ids every time.
func newID(prefix string, intn func(n int) int) string {
	b := make([]byte, len(prefix)+idSuffixLength)
	copy(b, prefix)
	for i := len(prefix); i < len(b); i++ {
		b[i] = alphabet[intn(len(alphabet))]
	}
	return string(b)
}
