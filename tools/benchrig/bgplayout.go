package benchrig

// bgplayout.go: the routes `seg6x-bench bgp` injects. Route i of N belongs to tenant i%T (each tenant
// a VPN of its own: route target 65000:777+t, VLAN 77+t on ta0, table 777+t) and is the (i/T)-th /32
// of the tenant's /15 (131,072 per tenant: 198.18.0.0/15 for the first, 10.0.0.0/15, 10.2.0.0/15, ...
// for the others, so no two tenants share a prefix), advertised by PE (i/T)%pes with that PE's RD and
// service SID in the tenant's VPN. With one tenant (up to 131,072 routes, the default) the routes are
// the ones the benchmark always injected.

import (
	"fmt"
	"net/netip"

	"github.com/seg6x/seg6x/internal/bgp"
)

const (
	bgpBenchVLAN      = 77
	bgpBenchPerTenant = 1 << 17 // the /32s of 198.18.0.0/15
	bgpBenchMaxTenant = 64      // VLANs 77..140, tables 777..840
)

type bgpLayout struct {
	routes, pes, tenants int
}

// newBGPLayout checks the counts; tenants 0 is as many as the routes need.
func newBGPLayout(routes, pes, tenants int) (bgpLayout, error) {
	if tenants == 0 {
		tenants = (routes + bgpBenchPerTenant - 1) / bgpBenchPerTenant
	}
	switch {
	case routes < 1:
		return bgpLayout{}, fmt.Errorf("--routes %d: at least 1", routes)
	case tenants < 1 || tenants > bgpBenchMaxTenant:
		return bgpLayout{}, fmt.Errorf("--tenants %d: 1 to %d", tenants, bgpBenchMaxTenant)
	case routes > tenants*bgpBenchPerTenant:
		return bgpLayout{}, fmt.Errorf("--routes %d: at most %d per tenant (%d with %d tenants)", routes, bgpBenchPerTenant,
			tenants*bgpBenchPerTenant, tenants)
	case pes < 1 || pes > 0xfe00:
		return bgpLayout{}, fmt.Errorf("--pes %d: 1 to %d", pes, 0xfe00)
	}
	return bgpLayout{routes: routes, pes: pes, tenants: tenants}, nil
}

func (l bgpLayout) tenant(i int) int { return i % l.tenants }
func (l bgpLayout) pe(i int) int     { return i / l.tenants % l.pes }

func (l bgpLayout) tenantName(t int) string { return fmt.Sprintf("bgpbench%d", t) }
func (l bgpLayout) vlan(t int) uint8        { return uint8(bgpBenchVLAN + t) }
func (l bgpLayout) rt(t int) string         { return fmt.Sprintf("65000:%d", 777+t) }

// prefix is route i's /32.
func (l bgpLayout) prefix(i int) netip.Prefix {
	j, t := i/l.tenants, l.tenant(i)
	a := [4]byte{198, 18 + byte(j>>16), byte(j >> 8), byte(j)}
	if t > 0 {
		a[0], a[1] = 10, byte(2*(t-1)+j>>16)
	}
	return netip.PrefixFrom(netip.AddrFrom4(a), 32)
}

// sid is route i's service SID (its PE's in its tenant's VPN), inside fc00:2::/48, which the rig
// routes out of fab0.
func (l bgpLayout) sid(i int) netip.Addr {
	return netip.AddrFrom16([16]byte{0xfc, 0, 0, 2, 0, 0, byte((0x100 + l.pe(i)) >> 8), byte(0x100 + l.pe(i)),
		14: byte((1 + l.tenant(i)) >> 8), 15: byte(1 + l.tenant(i))})
}

// route is route i as the injector announces it.
func (l bgpLayout) route(i int) bgp.VPNRoute {
	pe, t := l.pe(i), l.tenant(i)
	return bgp.VPNRoute{RD: fmt.Sprintf("198.18.254.%d:%d", pe%250, 1+t), Prefix: l.prefix(i), RTs: []string{l.rt(t)},
		NextHop: netip.AddrFrom16([16]byte{0xfc, 0, 0, 9, 14: byte((1 + pe) >> 8), 15: byte(1 + pe)}), SID: l.sid(i),
		Behavior: bgp.EndDT4, Structure: bgp.SIDStructure{Block: 32, Node: 16, Function: 16}}
}
