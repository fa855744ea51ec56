package client

import "context"

// Logger receives the client's diagnostics; fields never hold the API key.
type Logger interface {
	Debug(ctx context.Context, msg string, fields map[string]any)
	Warn(ctx context.Context, msg string, fields map[string]any)
}

// NopLogger discards everything.
type NopLogger struct{}

func (NopLogger) Debug(context.Context, string, map[string]any) {}
func (NopLogger) Warn(context.Context, string, map[string]any)  {}
