package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// tfLogger hands the client's logs to tflog, with the API key masked in
// messages and field values in case any text ever carried it.
type tfLogger struct{ key string }

func newTFLogger(key string) tfLogger { return tfLogger{key: key} }

func (l tfLogger) mask(ctx context.Context) context.Context {
	if l.key == "" {
		return ctx
	}
	ctx = tflog.MaskAllFieldValuesStrings(ctx, l.key)
	return tflog.MaskMessageStrings(ctx, l.key)
}

func (l tfLogger) Debug(ctx context.Context, msg string, fields map[string]any) {
	tflog.Debug(l.mask(ctx), msg, fields)
}

func (l tfLogger) Warn(ctx context.Context, msg string, fields map[string]any) {
	tflog.Warn(l.mask(ctx), msg, fields)
}
