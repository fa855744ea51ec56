//go:build benchpagedread

package provider

// This build refreshes every backup_trigger by paging its account's
// backups, as the provider did before finished triggers checked only their
// account: make bench measures the "before" of refresh at scale with it.
func init() { benchPagedRead = true }
