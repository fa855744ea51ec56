// Package mockservice is an in-memory Backup Service that follows the API
// document and the project's API contract: organizations, keys, accounts,
// the backup state machine, audit logs, cursor pagination, a per-key rate
// limit and RFC 7807 errors. Tests start it with httptest; the backup-mock
// command serves it on a loopback port. Faults can be switched on per server
// and its counters inspected, so that tests can check what a client did.
package mockservice
