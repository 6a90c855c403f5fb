package reference

// values.go: the values a key takes where the model has a table or a set of named constants for them,
// read from internal/state's exported values (never copied here as text). The test checks each value
// against state.Validate, and that Validate refuses one not listed.

import (
	"fmt"

	"github.com/seg6x/seg6x/internal/model"
)

// Allowed are the values a key takes.
type Allowed struct {
	Values []string
	Note   string // what else it takes, or where more is said
}

// allowed are the keys with a known set of values, by path.
func allowed() map[string]Allowed {
	encap := []string{model.ModeEncap, model.ModeEncapRed}
	return map[string]Allowed{
		"interfaces[].mode": {Values: []string{model.ModeNative, model.ModeGeneric, model.ModeTC}},
		"interfaces[].role": {Values: []string{model.RoleAuto, model.RoleFabric, model.RoleAccess}},
		"tenants[].mss_clamp": {Values: []string{model.MSSClampOff, model.MSSClampAuto},
			Note: fmt.Sprintf("or an MSS from %d to %d", model.MinMSS, model.MaxMSS)},
		"tenants[].vpn.encap":      {Values: encap},
		"policies[].mode":          {Values: encap},
		"routes[].mode":            {Values: []string{model.ModeEncap, model.ModeEncapRed, model.ModePass}},
		"sids[].action":            {Values: model.Actions, Note: "what each takes: [endpoint behaviors](#endpoint-behaviors)"},
		"sids[].flavors":           {Values: flavors(), Note: "which action takes which: [endpoint behaviors](#endpoint-behaviors)"},
		"bgp.neighbors[].families": {Values: []string{model.FamilyVPNv4, model.FamilyVPNv6, model.FamilyRTC}},
	}
}

// flavors are the flavors some behavior takes, in the order of the behaviors table.
func flavors() []string {
	var out []string
	seen := map[string]bool{}
	for _, b := range model.Behaviors {
		for _, f := range b.Flavors {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}
