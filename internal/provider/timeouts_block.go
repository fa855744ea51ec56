package provider

import (
	actiontimeouts "github.com/hashicorp/terraform-plugin-framework-timeouts/action/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	actionschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The timeouts blocks are built here, not by timeouts.Block, whose validators disagree with
// validateTimeoutsBlock (it accepts "-1.5h"); names and types are the library's.

// resourceTimeoutsBlock is a resource's timeouts block with the one
// optional duration name (create, delete).
func resourceTimeoutsBlock(name, description string) schema.Block {
	return schema.SingleNestedBlock{
		Attributes: map[string]schema.Attribute{
			name: schema.StringAttribute{Optional: true, Description: description},
		},
		CustomType: timeouts.Type{ObjectType: types.ObjectType{AttrTypes: map[string]attr.Type{name: types.StringType}}},
	}
}

// actionTimeoutsBlock is an action's timeouts block: invoke.
func actionTimeoutsBlock(description string) actionschema.Block {
	return actionschema.SingleNestedBlock{
		Attributes: map[string]actionschema.Attribute{
			"invoke": actionschema.StringAttribute{Optional: true, Description: description},
		},
		CustomType: actiontimeouts.Type{ObjectType: types.ObjectType{AttrTypes: map[string]attr.Type{"invoke": types.StringType}}},
	}
}
