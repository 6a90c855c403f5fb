package state

// validate.go: checks a whole desired state before anything is written, so a bad entry never
// leaves the data plane half changed.

import (
	"fmt"
	"regexp"
	"slices"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,32}$`)

func routeObj(r *Route) string   { return fmt.Sprintf("route %s tenant %s", r.Prefix, r.Tenant) }
func sidObj(s *SID) string       { return fmt.Sprintf("sid %s", s.SID) }
func tenantObj(t *Tenant) string { return fmt.Sprintf("tenant %q", t.Name) }

// IsDecap reports whether action decapsulates (and so may push a VLAN on egress).
func IsDecap(action string) bool {
	switch action {
	case "End.DX4", "End.DX6", "End.DT4", "End.DT6", "End.DT46":
		return true
	}
	return false
}

// Validate returns every problem in s (nil when there is none). It also fills defaults in place.
func Validate(s *State) error {
	var errs Errors
	add := func(err error) { errs = append(errs, err) }

	if s.Options.NextHopCacheMs > MaxNextHopCacheMs {
		add(fieldErr("options", "nexthop_cache_ms", "%d is more than %d", s.Options.NextHopCacheMs, MaxNextHopCacheMs))
	}
	ifaces := map[string]bool{}
	for i := range s.Interfaces {
		it := &s.Interfaces[i]
		obj := fmt.Sprintf("interface %q", it.Name)
		if it.Name == "" {
			add(fieldErr("interface", "name", "missing"))
		}
		if ifaces[it.Name] {
			add(fieldErr(obj, "", "listed twice"))
		}
		ifaces[it.Name] = true
		if it.Mode != "" && it.Mode != "native" && it.Mode != "generic" {
			add(fieldErr(obj, "mode", "%q is not native or generic", it.Mode))
		}
	}

	tenants := map[string]*Tenant{}
	ports := map[Port]string{}
	for i := range s.Tenants {
		t := &s.Tenants[i]
		obj := tenantObj(t)
		if !nameRE.MatchString(t.Name) {
			add(fieldErr(obj, "name", "want 1-32 of A-Z a-z 0-9 _ . -"))
		}
		if tenants[t.Name] != nil {
			add(fieldErr(obj, "", "defined twice"))
		}
		tenants[t.Name] = t
		for _, p := range t.Ports {
			if p.Dev == "" {
				add(fieldErr(obj, "dev", "missing"))
			}
			if p.VLAN > 4094 {
				add(fieldErr(obj, "vlan", "%d is not a VLAN ID (0 = untagged, 1-4094)", p.VLAN))
			}
			k := Port{Dev: p.Dev, VLAN: p.VLAN}
			if other, ok := ports[k]; ok {
				add(fieldErr(obj, "port", "dev %s vlan %d already belongs to tenant %q", p.Dev, p.VLAN, other))
			}
			ports[k] = t.Name
		}
	}

	type rkey struct {
		tenant string
		prefix string
	}
	routes := map[rkey]bool{}
	for i := range s.Routes {
		r := &s.Routes[i]
		obj := routeObj(r)
		if tenants[r.Tenant] == nil {
			add(fieldErr(obj, "tenant", "unknown tenant %q", r.Tenant))
		}
		if !r.Prefix.IsValid() {
			add(fieldErr(obj, "prefix", "missing or not a prefix"))
		} else if r.Prefix != r.Prefix.Masked() {
			add(fieldErr(obj, "prefix", "host bits set; did you mean %s", r.Prefix.Masked()))
		}
		k := rkey{r.Tenant, r.Prefix.String()}
		if routes[k] {
			add(fieldErr(obj, "", "defined twice"))
		}
		routes[k] = true
		if r.Mode == "" {
			r.Mode = ModeEncap
		}
		if r.Mode != ModeEncap && r.Mode != ModeEncapRed {
			add(fieldErr(obj, "mode", "%q is not encap or encap.red", r.Mode))
		}
		switch {
		case len(r.Segs) == 0:
			add(fieldErr(obj, "segs", "no SIDs; give 1 to %d", MaxSegments))
		case len(r.Segs) > MaxSegments:
			add(fieldErr(obj, "segs", "%d SIDs, at most %d", len(r.Segs), MaxSegments))
		}
		for j, sid := range r.Segs {
			if !sid.Is6() || sid.Is4In6() || sid.IsUnspecified() || sid.IsMulticast() || sid.IsLoopback() {
				add(fieldErr(obj, fmt.Sprintf("segs[%d]", j), "%v is not a unicast IPv6 address", sid))
			}
		}
		if r.Src.IsValid() && (!r.Src.Is6() || r.Src.Is4In6() || r.Src.IsUnspecified() || r.Src.IsMulticast()) {
			add(fieldErr(obj, "src", "%v is not a unicast IPv6 address", r.Src))
		}
		if r.HopLimit == 0 {
			r.HopLimit = DefaultHopLimit
		}
	}

	sids := map[string]bool{}
	for i := range s.SIDs {
		sd := &s.SIDs[i]
		obj := sidObj(sd)
		if !sd.SID.Is6() || sd.SID.Is4In6() || sd.SID.IsUnspecified() || sd.SID.IsMulticast() {
			add(fieldErr(obj, "sid", "not a unicast IPv6 address"))
		}
		if sids[sd.SID.String()] {
			add(fieldErr(obj, "", "duplicate SID"))
		}
		sids[sd.SID.String()] = true
		validateSIDParams(sd, tenants, add)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// validateSIDParams checks that a SID has exactly the parameters its action takes.
func validateSIDParams(sd *SID, tenants map[string]*Tenant, add func(error)) {
	obj := sidObj(sd)
	if !slices.Contains(Actions, sd.Action) {
		add(fieldErr(obj, "action", "%q is not one of %v", sd.Action, Actions))
		return
	}
	needNH4 := sd.Action == "End.DX4"
	needNH6 := sd.Action == "End.X" || sd.Action == "End.DX6"
	needTable := sd.Action == "End.T" || sd.Action == "End.DT4" || sd.Action == "End.DT6" || sd.Action == "End.DT46"
	if sd.Tenant != "" {
		t := tenants[sd.Tenant]
		switch {
		case !IsDecap(sd.Action) || !needTable:
			add(fieldErr(obj, "tenant", "only End.DT4/End.DT6/End.DT46 take a tenant"))
		case t == nil:
			add(fieldErr(obj, "tenant", "unknown tenant %q", sd.Tenant))
		case t.Table == 0:
			add(fieldErr(obj, "tenant", "tenant %q has no table", sd.Tenant))
		case sd.Table != 0 && sd.Table != t.Table:
			add(fieldErr(obj, "table", "%d differs from tenant %q's table %d", sd.Table, sd.Tenant, t.Table))
		}
	}
	switch {
	case needNH4 && !(sd.NH4.IsValid() && sd.NH4.Is4()):
		add(fieldErr(obj, "nh4", "%s needs an IPv4 next hop", sd.Action))
	case !needNH4 && sd.NH4.IsValid():
		add(fieldErr(obj, "nh4", "%s takes no nh4", sd.Action))
	}
	switch {
	case needNH6 && !(sd.NH6.IsValid() && sd.NH6.Is6() && !sd.NH6.Is4In6()):
		add(fieldErr(obj, "nh6", "%s needs an IPv6 next hop", sd.Action))
	case !needNH6 && sd.NH6.IsValid():
		add(fieldErr(obj, "nh6", "%s takes no nh6", sd.Action))
	}
	switch {
	case needTable && sd.Table == 0 && sd.Tenant == "":
		add(fieldErr(obj, "table", "%s needs a routing table (table N or tenant NAME)", sd.Action))
	case !needTable && sd.Table != 0:
		add(fieldErr(obj, "table", "%s takes no table", sd.Action))
	}
	if sd.VLAN != 0 {
		if !IsDecap(sd.Action) {
			add(fieldErr(obj, "vlan", "%s does not decapsulate; only End.DX*/End.DT* push a VLAN", sd.Action))
		} else if sd.VLAN > 4094 {
			add(fieldErr(obj, "vlan", "%d is not a VLAN ID (1-4094)", sd.VLAN))
		}
	}
}
