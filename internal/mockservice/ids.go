package mockservice

import "github.com/backup-service/terraform-provider-backup/internal/ids"

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// newID builds an identifier with prefix from a source of random numbers, so
// that a seeded source gives the same ids every time.
func newID(prefix string, intn func(n int) int) string {
	b := make([]byte, len(prefix)+ids.SuffixLength)
	copy(b, prefix)
	for i := len(prefix); i < len(b); i++ {
		b[i] = alphabet[intn(len(alphabet))]
	}
	return string(b)
}
