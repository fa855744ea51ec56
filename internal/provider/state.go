package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// Reading and writing state: decode, the workflow.Record kept in private state (workflow.Key), conversions of Go values.

// decode reads a configuration, plan or state into a model; false when it could not.
func decode[T any](ctx context.Context, from interface {
	Get(context.Context, any) diag.Diagnostics
}, diags *diag.Diagnostics) (T, bool) {
	var m T
	diags.Append(from.Get(ctx, &m)...)
	return m, !diags.HasError()
}

// privateGetter is the part of private state a record is read from.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// privateSetter is the part of private state a record is saved to.
type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// saveRecord stores the record under its key.
func saveRecord(ctx context.Context, private privateSetter, r workflow.Record, diags *diag.Diagnostics) {
	diags.Append(private.SetKey(ctx, workflow.Key, workflow.Encode(r))...)
}

// timeOf is a state's time; zero for null (diags gets any error).
func timeOf(v timetypes.RFC3339, diags *diag.Diagnostics) time.Time {
	t, _ := knownTime(v, diags)
	return t
}

// knownTime is v's time when v is set and known (diags gets any error).
func knownTime(v timetypes.RFC3339, diags *diag.Diagnostics) (time.Time, bool) {
	if v.IsNull() || v.IsUnknown() {
		return time.Time{}, false
	}
	t, ds := v.ValueRFC3339Time()
	diags.Append(ds...)
	return t, !ds.HasError()
}

func stringOrNull(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// timeValue renders a timestamp as RFC 3339 in UTC, null when zero.
func timeValue(t time.Time) timetypes.RFC3339 {
	if t.IsZero() {
		return timetypes.NewRFC3339Null()
	}
	return timetypes.NewRFC3339TimeValue(t.UTC())
}

func timePtrValue(t *time.Time) timetypes.RFC3339 {
	if t == nil {
		return timetypes.NewRFC3339Null()
	}
	return timeValue(*t)
}
