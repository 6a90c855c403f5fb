package reference

// values.go: the values a key takes where the model has a table or a set of named constants for them,
// read from internal/state's exported values (never copied here as text). The test checks each value
// against state.Validate, and that Validate refuses one not listed.

import (
	"fmt"

	"github.com/seg6x/seg6x/internal/state"
)

// Allowed are the values a key takes.
type Allowed struct {
	Values []string
	Note   string // what else it takes, or where more is said
}

// allowed are the keys with a known set of values, by path.
func allowed() map[string]Allowed {
	encap := []string{state.ModeEncap, state.ModeEncapRed}
	return map[string]Allowed{
		"interfaces[].mode": {Values: []string{state.ModeNative, state.ModeGeneric, state.ModeTC}},
		"interfaces[].role": {Values: []string{state.RoleAuto, state.RoleFabric, state.RoleAccess}},
		"tenants[].mss_clamp": {Values: []string{state.MSSClampOff, state.MSSClampAuto},
			Note: fmt.Sprintf("or an MSS from %d to %d", state.MinMSS, state.MaxMSS)},
		"tenants[].vpn.encap":      {Values: encap},
		"policies[].mode":          {Values: encap},
		"routes[].mode":            {Values: []string{state.ModeEncap, state.ModeEncapRed, state.ModePass}},
		"sids[].action":            {Values: state.Actions, Note: "what each takes: [endpoint behaviors](#endpoint-behaviors)"},
		"sids[].flavors":           {Values: flavors(), Note: "which action takes which: [endpoint behaviors](#endpoint-behaviors)"},
		"bgp.neighbors[].families": {Values: []string{state.FamilyVPNv4, state.FamilyVPNv6, state.FamilyRTC}},
	}
}

// flavors are the flavors some behavior takes, in the order of the behaviors table.
func flavors() []string {
	var out []string
	seen := map[string]bool{}
	for _, b := range state.Behaviors {
		for _, f := range b.Flavors {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}
