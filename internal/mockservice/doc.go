// Package mockservice is an in-memory Backup Service that follows the API
// document and the project's API contract: organizations, keys, accounts,
// the backup state machine, audit logs, cursor pagination, a per-key rate
// limit and RFC 7807 errors. Tests start it with httptest; the backup-mock
// command serves it on a loopback port. Faults can be switched on per server
// and its counters inspected, so that tests can check what a client did:
// by Go methods, or by the admin API under /_mock/, which wants the
// server's admin token. Requests whose Host is not a loopback name are
// refused (421), against DNS rebinding.
package mockservice
