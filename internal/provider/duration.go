package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// durationType is timetypes.GoDurationType whose values refuse a string
// that does not parse in this provider's words, as timeouts are: the
// library's message shows a literal `\n\n` and offers "-1.5h" as an example.
type durationType struct{ timetypes.GoDurationType }

func (t durationType) String() string { return "provider.durationType" }

func (t durationType) Equal(o attr.Type) bool { _, ok := o.(durationType); return ok }

func (t durationType) ValueType(context.Context) attr.Value { return duration{} }

func (t durationType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return duration{timetypes.GoDuration{StringValue: in}}, nil
}

func (t durationType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return duration{timetypes.GoDuration{StringValue: s}}, nil
}

// duration is a value of durationType.
type duration struct{ timetypes.GoDuration }

func (d duration) Type(context.Context) attr.Type { return durationType{} }

func (d duration) Equal(o attr.Value) bool {
	other, ok := o.(duration)
	return ok && d.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals is timetypes' check, which takes only its own values.
func (d duration) StringSemanticEquals(ctx context.Context, n basetypes.StringValuable) (bool, diag.Diagnostics) {
	other, ok := n.(duration)
	if !ok {
		return false, nil
	}
	return d.GoDuration.StringSemanticEquals(ctx, other.GoDuration)
}

func (d duration) ValidateAttribute(_ context.Context, req xattr.ValidateAttributeRequest, resp *xattr.ValidateAttributeResponse) {
	if d.IsNull() || d.IsUnknown() {
		return
	}
	if _, err := time.ParseDuration(d.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%s must be a duration: %s; got %q.", req.Path, durationForm, d.ValueString()))
	}
}

// durationNull is a null duration.
func durationNull() duration { return duration{timetypes.NewGoDurationNull()} }
