//go:build benchnoopread

package provider

// This build's backup_trigger Read does nothing: make bench measures with it
// what refreshing costs when the provider's reads cost nothing.
func init() { benchNoopRead = true }
