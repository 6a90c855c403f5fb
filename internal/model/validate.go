package model

// validate.go: checks of each object on its own and of a whole desired state, run before anything
// is written, so a bad entry never leaves the data plane half changed.

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,32}$`)

// RouteObj names route r (in a diff, one line per route).
func RouteObj(r *Route) string { return RouteName(r.Prefix, r.Tenant) }

// RouteName names the route for prefix p of tenant: made with one allocation.
func RouteName(p netip.Prefix, tenant string) string {
	if !p.IsValid() {
		return "route " + p.String() + " tenant " + tenant // AppendTo writes nothing for the zero Prefix
	}
	var buf [96]byte // the longest: an IPv6 prefix, a 32-character tenant name
	b := append(p.AppendTo(append(buf[:0], "route "...)), " tenant "...)
	return string(append(b, tenant...))
}

// SIDObj and TenantObj name a SID and a tenant in errors and diffs.
func SIDObj(s *SID) string       { return "sid " + s.Name() }
func TenantObj(t *Tenant) string { return fmt.Sprintf("tenant %q", t.Name) }

// Validate returns every problem in a whole desired state (a config file): each object on its own,
// duplicates, and references between objects. It also fills defaults in place.
func Validate(s *State) error {
	var errs Errors
	add := func(err error) { errs = append(errs, err) }

	ValidateOptions(&s.Options, add)
	ValidateDomain(&s.Domain, add)
	if s.BGP != nil {
		ValidateBGP(s.BGP, add)
	}
	ifaces := map[string]bool{}
	for i := range s.Interfaces {
		it := &s.Interfaces[i]
		ValidateInterface(it, add)
		if ifaces[it.Name] {
			add(FieldErr(fmt.Sprintf("interface %q", it.Name), "", "listed twice"))
		}
		ifaces[it.Name] = true
	}
	tenants := map[string]*Tenant{}
	ports := map[Port]string{}
	for i := range s.Tenants {
		t := &s.Tenants[i]
		ValidateTenant(t, add)
		if tenants[t.Name] != nil {
			add(FieldErr(TenantObj(t), "", "defined twice"))
		}
		tenants[t.Name] = t
		for _, p := range t.Ports {
			k := Port{Dev: p.Dev, VLAN: p.VLAN}
			if other, ok := ports[k]; ok && other != t.Name {
				add(FieldErr(TenantObj(t), "port", "dev %s vlan %d already belongs to tenant %q", p.Dev, p.VLAN, other))
			}
			ports[k] = t.Name
		}
	}
	policies := map[string]bool{}
	for i := range s.Policies {
		p := &s.Policies[i]
		ValidateNamedPolicy(p, add)
		if policies[p.Name] {
			add(FieldErr(PolicyObj(p.Name), "", "defined twice"))
		}
		policies[p.Name] = true
	}
	type rkey struct {
		tenant string
		prefix string
	}
	routes := map[rkey]bool{}
	for i := range s.Routes {
		r := &s.Routes[i]
		ValidateRoute(r, add)
		if tenants[r.Tenant] == nil {
			add(FieldErr(RouteObj(r), "tenant", "unknown tenant %q", r.Tenant))
		}
		if r.Policy != "" && !policies[r.Policy] {
			add(FieldErr(RouteObj(r), "policy", "unknown policy %q", r.Policy))
		}
		k := rkey{r.Tenant, r.Prefix.String()}
		if routes[k] {
			add(FieldErr(RouteObj(r), "", "defined twice"))
		}
		routes[k] = true
	}
	plugins := map[string]bool{}
	for i := range s.Plugins {
		p := &s.Plugins[i]
		ValidatePluginName(p, add)
		if plugins[p.Name] {
			add(FieldErr(PluginObj(p), "", "defined twice"))
		}
		plugins[p.Name] = true
	}
	sids := map[string]bool{}
	for i := range s.SIDs {
		sd := &s.SIDs[i]
		if sids[sd.SID.String()] {
			add(FieldErr(SIDObj(sd), "", "duplicate SID"))
		}
		sids[sd.SID.String()] = true
		ValidateSID(sd, func(name string) *Tenant { return tenants[name] }, add)
		if sd.Plugin != "" && !plugins[sd.Plugin] {
			add(FieldErr(SIDObj(sd), "plugin", "unknown plugin %q (plugins)", sd.Plugin))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// ValidateOptions checks the instance-wide options.
func ValidateOptions(o *Options, add func(error)) {
	if o.NextHopCacheMs > MaxNextHopCacheMs {
		add(FieldErr("options", "nexthop_cache_ms", "%d is more than %d", o.NextHopCacheMs, MaxNextHopCacheMs))
	}
}

// ValidateInterface checks an interface on its own (name, mode, role) and normalizes its mode.
func ValidateInterface(it *Interface, add func(error)) {
	obj := fmt.Sprintf("interface %q", it.Name)
	if it.Name == "" {
		add(FieldErr("interface", "name", "missing"))
	}
	it.Mode = NormalizeMode(it.Mode)
	if it.Mode != ModeNative && it.Mode != ModeGeneric && it.Mode != ModeTC {
		add(FieldErr(obj, "mode", "%q is not xdp (native), generic or tc", it.Mode))
	}
	if it.Role == "" {
		it.Role = RoleAuto
	}
	if it.Role != RoleAuto && it.Role != RoleFabric && it.Role != RoleAccess {
		add(FieldErr(obj, "role", "%q is not auto, fabric or access", it.Role))
	}
}

// ValidateDomain checks the domain's prefixes: IPv6, no host bits, no duplicates, within the limit.
func ValidateDomain(d *Domain, add func(error)) {
	for _, f := range []struct {
		name string
		ps   []netip.Prefix
	}{{"locators", d.Locators}, {"sources", d.Sources}} {
		if len(f.ps) > MaxDomainPrefixes {
			add(FieldErr("domain", f.name, "%d prefixes, at most %d", len(f.ps), MaxDomainPrefixes))
		}
		seen := map[netip.Prefix]bool{}
		for i, p := range f.ps {
			field := fmt.Sprintf("%s[%d]", f.name, i)
			switch {
			case !p.IsValid():
				add(FieldErr("domain", field, "missing or not a prefix"))
			case !p.Addr().Is6() || p.Addr().Is4In6():
				add(FieldErr("domain", field, "%s is not an IPv6 prefix", p))
			case p != p.Masked():
				add(FieldErr("domain", field, "host bits set; did you mean %s", p.Masked()))
			case seen[p]:
				add(FieldErr("domain", field, "%s listed twice", p))
			}
			seen[p] = true
		}
	}
}

// VLANProblem is what is wrong with v as a VLAN ID (1-4094, 0: untagged), the one message every front end
// gives; "" when it is one.
func VLANProblem(v string) string {
	n, err := strconv.ParseUint(v, 10, 32)
	if err == nil && n <= 4094 {
		return ""
	}
	return v + " is not a VLAN ID (1-4094; 0: untagged)"
}

// kernelTables are the routing tables the kernel reserves (RT_TABLE_DEFAULT, MAIN, LOCAL): a tenant's
// table is its VRF, never one of them (except a tenant the kernel mirror makes of the kernel's own
// seg6 routes, which are often in main).
var kernelTables = map[uint32]string{253: "default", 254: "main", 255: "local"}

// ZeroTable is what a tenant's table written as 0 gets told (the CLI's and the file's words; over
// the API 0 is the same as no table): the kernel has no table 0.
const ZeroTable = "0 is not a table (the kernel has none); for a tenant without a table leave table out"

// ValidateTenant checks a tenant on its own: name, table, ports, gateway, MSS clamping, vpn: section.
func ValidateTenant(t *Tenant, add func(error)) {
	obj := TenantObj(t)
	if !nameRE.MatchString(t.Name) {
		add(FieldErr(obj, "name", "want 1-32 of A-Z a-z 0-9 _ . -"))
	}
	if name, ok := kernelTables[t.Table]; ok && t.Origin != OriginKernel { // the mirror's are the kernel's own
		add(FieldErr(obj, "table", "%d is the kernel's %s table; a tenant needs one of its own (1-252 or 256 and up; none: leave it out)", t.Table, name))
	}
	seen := map[Port]bool{}
	for _, p := range t.Ports {
		if p.Dev == "" {
			add(FieldErr(obj, "dev", "missing"))
		}
		if why := VLANProblem(strconv.Itoa(int(p.VLAN))); why != "" {
			add(FieldErr(obj, "vlan", "%s", why))
		}
		k := Port{Dev: p.Dev, VLAN: p.VLAN}
		if seen[k] {
			add(FieldErr(obj, "port", "dev %s vlan %d listed twice", p.Dev, p.VLAN))
		}
		seen[k] = true
	}
	var fam [2]int
	for _, a := range t.Gateway {
		switch {
		case !a.IsValid() || a.IsUnspecified() || a.IsMulticast() || a.IsLoopback() || a.Is4In6() || a.Zone() != "":
			add(FieldErr(obj, "gateway", "%s is not a unicast address", a))
		case a.Is4():
			fam[0]++
		default:
			fam[1]++
		}
	}
	if fam[0] > 1 || fam[1] > 1 {
		add(FieldErr(obj, "gateway", "at most one IPv4 and one IPv6 address"))
	}
	if t.VPN != nil {
		ValidateVPN(t, add)
	}
	if v, err := MSSClampValue(t.MSSClamp); err != nil {
		add(FieldErr(obj, "mss_clamp", "%v", err))
	} else {
		t.MSSClamp = mssClampString(v) // one spelling per setting: off is the default, left out
	}
}

// The data plane's mss_clamp values for off and auto (enum mss_clamp in bpf/structs.h; a test in
// internal/dataplane checks them against the compiled program).
const (
	MSSClampOffValue  uint16 = 0
	MSSClampAutoValue uint16 = 0xFFFF
)

// MSSClampValue is the data plane's value of a tenant's MSS clamping (mss_clamp in struct port_val):
// MSSClampOffValue, MSSClampAutoValue, else the largest MSS.
func MSSClampValue(s string) (uint16, error) {
	switch s {
	case "", MSSClampOff:
		return MSSClampOffValue, nil
	case MSSClampAuto:
		return MSSClampAutoValue, nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n < MinMSS || n > MaxMSS {
		return 0, fmt.Errorf("%q: want off, auto or an MSS of %d-%d bytes", s, MinMSS, MaxMSS)
	}
	return uint16(n), nil
}

func mssClampString(v uint16) string {
	switch v {
	case MSSClampOffValue:
		return ""
	case MSSClampAutoValue:
		return MSSClampAuto
	}
	return strconv.Itoa(int(v))
}

// ValidateRoute checks a route on its own (ValidateRouteAs with its name made here).
func ValidateRoute(r *Route, add func(error)) { ValidateRouteAs(r, RouteObj(r), add) }

// ValidateRouteAs is ValidateRoute with the route's name (RouteObj) already made.
func ValidateRouteAs(r *Route, obj string, add func(error)) {
	if r.Tenant == "" {
		add(FieldErr(obj, "tenant", "missing"))
	}
	if !r.Prefix.IsValid() {
		add(FieldErr(obj, "prefix", "missing or not a prefix"))
	} else if r.Prefix != r.Prefix.Masked() {
		add(FieldErr(obj, "prefix", "host bits set; did you mean %s", r.Prefix.Masked()))
	}
	if r.Policy != "" {
		// A named policy (policies.go) gives the lists, mode, source and hop limit.
		if r.Mode != "" || len(r.Segs) > 0 || r.USIDs != nil || r.Src.IsValid() || r.HopLimit != 0 {
			add(FieldErr(obj, "policy", "a route naming a policy takes no mode, segs, usids, src or hoplimit (the policy's)"))
		}
		return
	}
	if r.Mode == "" {
		r.Mode = ModeEncap
	}
	if r.Mode != ModeEncap && r.Mode != ModeEncapRed && r.Mode != ModePass {
		add(FieldErr(obj, "mode", "%q is not encap, encap.red or pass", r.Mode))
	}
	if r.Mode == ModePass {
		if len(r.Segs) > 0 || r.USIDs != nil || r.Src.IsValid() {
			add(FieldErr(obj, "segs", "a pass route takes no segs, usids or src"))
		}
		r.HopLimit = 0
		return
	}
	if usidSegs(obj, "", &r.USIDs, &r.Segs, add) {
		validatePolicy(obj, r.Segs, r.Src, add)
	}
	if r.HopLimit == 0 {
		r.HopLimit = DefaultHopLimit
	}
}

// usidSegs makes a segment list written as uSIDs (*u, normalized in a copy: not the caller's) the
// segment list *segs; segs given as well must be its containers. at prefixes the fields reported
// (a policy's "lists[i]."). False when the uSIDs are wrong (reported): segs is then not checked.
func usidSegs(obj, at string, u **USIDList, segs *[]netip.Addr, add func(error)) bool {
	if *u == nil {
		return true
	}
	*u = (*u).Clone()
	out := (*u).Check(obj, func(err error) {
		if fe, isField := err.(*FieldError); isField {
			fe.Field = at + fe.Field
		}
		add(err)
	})
	switch {
	case out == nil:
		return false
	case len(*segs) > 0 && !slices.Equal(*segs, out):
		add(FieldErr(obj, at+"segs", "%v are not the containers of usids %s (%v); give one of segs and usids", *segs, *u, out))
	default:
		*segs = out
	}
	return true
}

// validatePolicy checks the segment list and source of an SR policy (a route's, a binding SID's).
func validatePolicy(obj string, segs []netip.Addr, src netip.Addr, add func(error)) {
	validateSegs(obj, "segs", segs, add)
	validateSrc(obj, src, add)
}

// validateSegs checks a segment list, reported as field.
func validateSegs(obj, field string, segs []netip.Addr, add func(error)) {
	switch {
	case len(segs) == 0:
		add(FieldErr(obj, field, "no SIDs; give 1 to %d", MaxSegments))
	case len(segs) > MaxSegments:
		add(FieldErr(obj, field, "%d SIDs, at most %d", len(segs), MaxSegments))
	}
	for j, sid := range segs {
		if !sid.Is6() || sid.Is4In6() || sid.IsUnspecified() || sid.IsMulticast() || sid.IsLoopback() {
			add(FieldErr(obj, fmt.Sprintf("%s[%d]", field, j), "%v is not a unicast IPv6 address", sid))
		}
	}
}

// validateSrc checks an outer source address (invalid: the kernel's choice).
func validateSrc(obj string, src netip.Addr, add func(error)) {
	if src.IsValid() && (!src.Is6() || src.Is4In6() || src.IsUnspecified() || src.IsMulticast()) {
		add(FieldErr(obj, "src", "%v is not a unicast IPv6 address", src))
	}
}

// ValidateSID checks a SID on its own and its tenant reference (tenant looks a tenant up by name).
func ValidateSID(sd *SID, tenant func(string) *Tenant, add func(error)) {
	if !sd.SID.Is6() || sd.SID.Is4In6() || sd.SID.IsUnspecified() || sd.SID.IsMulticast() {
		add(FieldErr(SIDObj(sd), "sid", "not a unicast IPv6 address"))
	}
	if sd.Bits >= 128 {
		sd.Bits = 0
	}
	if p := sd.Prefix(); p.Masked() != p {
		add(FieldErr(SIDObj(sd), "sid", "host bits set beyond /%d; did you mean %s", p.Bits(), p.Masked()))
	}
	ValidateSIDParams(sd, tenant, add)
	validateFlavors(sd, add)
}

// validateFlavors checks a SID's flavors against its behavior (and puts them in one order), and the
// NEXT-C-SID lengths as the kernel takes them (defaults filled in).
func validateFlavors(sd *SID, add func(error)) {
	obj := SIDObj(sd)
	b := BehaviorNamed(sd.Action)
	if b == nil {
		return // reported by ValidateSIDParams
	}
	var fl []string
	for _, f := range sd.Flavors {
		f = strings.ToLower(strings.TrimSpace(f))
		switch {
		case slices.Contains(fl, f):
		case len(b.Flavors) == 0:
			add(FieldErr(obj, "flavors", "%s takes no flavors (%s)", sd.Action, flavoredBehaviors()))
		case !slices.Contains(b.Flavors, f):
			add(FieldErr(obj, "flavors", "%q: %s takes %s", f, sd.Action, strings.Join(b.Flavors, ", ")))
		default:
			fl = append(fl, f)
		}
	}
	slices.Sort(fl)
	sd.Flavors = fl
	if !sd.HasFlavor(FlavorNextCSID) {
		if sd.LBLen != 0 || sd.NFLen != 0 {
			add(FieldErr(obj, "lblen", "lblen and nflen are the lengths of the next-csid flavor, which %s does not have", sd.Action))
		}
		return
	}
	if sd.LBLen == 0 {
		sd.LBLen = DefaultLBLen
	}
	if sd.NFLen == 0 {
		sd.NFLen = DefaultNFLen
	}
	for _, x := range []struct {
		name string
		v    uint8
	}{{"lblen", sd.LBLen}, {"nflen", sd.NFLen}} {
		if x.v%8 != 0 || x.v > 120 {
			add(FieldErr(obj, x.name, "%d: a multiple of 8 from 8 to 120", x.v))
		}
	}
	if int(sd.LBLen)+int(sd.NFLen) > 128 {
		add(FieldErr(obj, "nflen", "lblen %d + nflen %d is more than 128 bits", sd.LBLen, sd.NFLen))
	}
}

// ValidateSIDParams checks that a SID has exactly the parameters its action takes (tenant: looks a
// tenant up by name; nil leaves the tenant reference unchecked).
func ValidateSIDParams(sd *SID, tenant func(string) *Tenant, add func(error)) {
	obj := SIDObj(sd)
	b := BehaviorNamed(sd.Action)
	if b == nil {
		add(FieldErr(obj, "action", "%q is not one of %v", sd.Action, Actions))
		return
	}
	needNH4, needNH6, needTable := b.Needs == ParamNH4, b.Needs == ParamNH6, b.Needs == ParamTable
	if sd.Tenant != "" {
		if !b.TakesTenant() {
			add(FieldErr(obj, "tenant", "%s takes no tenant; only %s do", sd.Action, strings.Join(tenantBehaviors(), "/")))
		} else if tenant != nil { // nil: the reference is checked later
			t := tenant(sd.Tenant)
			switch {
			case t == nil:
				add(FieldErr(obj, "tenant", "unknown tenant %q", sd.Tenant))
			case t.Table == 0:
				add(FieldErr(obj, "tenant", "tenant %q has no table", sd.Tenant))
			case sd.Table != 0 && sd.Table != t.Table:
				add(FieldErr(obj, "table", "%d differs from tenant %q's table %d", sd.Table, sd.Tenant, t.Table))
			}
		}
	}
	switch {
	case needNH4 && !(sd.NH4.IsValid() && sd.NH4.Is4()):
		add(FieldErr(obj, "nh4", "%s needs an IPv4 next hop", sd.Action))
	case !needNH4 && sd.NH4.IsValid():
		add(FieldErr(obj, "nh4", "%s takes no nh4", sd.Action))
	}
	switch {
	case needNH6 && !(sd.NH6.IsValid() && sd.NH6.Is6() && !sd.NH6.Is4In6()):
		add(FieldErr(obj, "nh6", "%s needs an IPv6 next hop", sd.Action))
	case !needNH6 && sd.NH6.IsValid():
		add(FieldErr(obj, "nh6", "%s takes no nh6", sd.Action))
	}
	switch {
	case needTable && sd.Table == 0 && sd.Tenant == "":
		add(FieldErr(obj, "table", "%s needs a routing table (table N or tenant NAME)", sd.Action))
	case !needTable && b.Needs != ParamPlugin && sd.Table != 0:
		add(FieldErr(obj, "table", "%s takes no table", sd.Action))
	}
	switch {
	case b.Needs == ParamPlugin && sd.Plugin == "":
		add(FieldErr(obj, "plugin", "action plugin needs the name of a loaded plugin (seg6x plugin load NAME FILE)"))
	case b.Needs == ParamPlugin:
		validatePluginSettings(obj, sd.Config, add)
	case sd.Plugin != "" || len(sd.Config) > 0:
		add(FieldErr(obj, "plugin", "%s runs no plugin; only action plugin takes plugin and config", sd.Action))
	}
	switch {
	case b.Needs == ParamSegs:
		validatePolicy(obj, sd.Segs, sd.Src, add)
	case len(sd.Segs) > 0:
		add(FieldErr(obj, "segs", "%s takes no segs; only End.B6.Encaps and End.B6.Encaps.Red do", sd.Action))
	case sd.Src.IsValid():
		add(FieldErr(obj, "src", "%s takes no src; only End.B6.Encaps and End.B6.Encaps.Red do", sd.Action))
	}
	if sd.VLAN != 0 {
		if !b.Decap {
			add(FieldErr(obj, "vlan", "%s does not decapsulate; only decap behaviors push a VLAN", sd.Action))
		} else if why := VLANProblem(strconv.Itoa(int(sd.VLAN))); why != "" {
			add(FieldErr(obj, "vlan", "%s", why))
		}
	}
}

// flavoredBehaviors says which behaviors take which flavors, e.g. "End takes next-csid; End.X takes ...".
func flavoredBehaviors() string {
	var out []string
	for i := range Behaviors {
		if b := &Behaviors[i]; len(b.Flavors) > 0 {
			out = append(out, b.Name+" takes "+strings.Join(b.Flavors, ", "))
		}
	}
	return strings.Join(out, "; ")
}

// tenantBehaviors names the behaviors whose table may be given as a tenant.
func tenantBehaviors() []string {
	var out []string
	for i := range Behaviors {
		if Behaviors[i].TakesTenant() {
			out = append(out, Behaviors[i].Name)
		}
	}
	return out
}
