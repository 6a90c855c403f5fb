package model

// origins.go: who owns an object. Every tenant (with its routes) and every local SID belongs to the
// front end that made it; a change may only touch objects of its own origin, and a config file's
// apply leaves every other origin's objects alone. Interfaces, options and the domain belong to the
// API and config files.

// Origin names the front end that owns an object.
type Origin string

// The origins.
const (
	OriginConfig Origin = ""       // the seg6x API, CLI and config files
	OriginKernel Origin = "kernel" // the kernel mirror: made from the kernel's seg6 routes
	OriginBGP    Origin = "bgp"    // learned over BGP (RFC 9252 VPN routes)
	OriginVPN    Origin = "vpn"    // a tenant's service SID, allocated for its vpn: section (vpnsid.go)
)

// originOwners says, per origin, who owns its objects and where they are changed.
var originOwners = map[Origin]string{
	OriginConfig: "conflicts with an object set through the seg6x API or config",
	OriginKernel: "owned by the kernel mirror (change it with ip route in the kernel)",
	OriginBGP:    "owned by BGP (change it where the route is advertised)",
	OriginVPN:    "the service SID of a tenant's vpn: section (change the tenant's vpn.locator or vpn.sid)",
}

// Known reports whether o is an origin seg6x has.
func (o Origin) Known() bool {
	_, ok := originOwners[o]
	return ok
}

// String names the origin as show prints it ("api" for OriginConfig: the API, CLI and config files).
func (o Origin) String() string {
	if o == OriginConfig {
		return "api"
	}
	return string(o)
}

// Owned refuses a change asked by origin by to an object of another origin (have).
func Owned(by, have Origin, obj string) error {
	if by == have {
		return nil
	}
	if !by.Known() {
		return FieldErr(obj, "", "unknown origin %q", string(by))
	}
	return FieldErr(obj, "", "%s", originOwners[have])
}
