// Package model is seg6x's object model: the objects (options, the SR domain, interfaces, tenants and
// their ports, encap routes, local SIDs, named policies, the BGP section, the kernel's VXLAN overlays)
// and who owns them, their parsing and their YAML and JSON forms, the checks of each object and of a
// whole desired state, the table of endpoint behaviors, uSID lists, the diff a commit reports and the
// errors it ends with. It knows nothing of the running state, the data plane or the saved state: the
// store (internal/state) commits changes to these objects, and every front end speaks them.
package model

// model.go: the objects and their serialised form (YAML for config files, JSON for show and state),
// and the parsing of prefixes and SIDs as every front end writes them.

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// State is the whole desired (or running) configuration of one seg6x instance.
type State struct {
	Options    Options     `yaml:"options,omitempty" json:"options"`
	Domain     Domain      `yaml:"domain,omitempty" json:"domain"`
	Interfaces []Interface `yaml:"interfaces,omitempty" json:"interfaces"`
	Tenants    []Tenant    `yaml:"tenants,omitempty" json:"tenants"`
	Policies   []Policy    `yaml:"policies,omitempty" json:"policies,omitempty"` // named, weighted (policies.go)
	Routes     []Route     `yaml:"routes,omitempty" json:"routes"`
	SIDs       []SID       `yaml:"sids,omitempty" json:"sids"`
	// Plugins are the operators' functions SIDs of action plugin run (plugins.go).
	Plugins []Plugin `yaml:"plugins,omitempty" json:"plugins,omitempty"`
	BGP     *BGP     `yaml:"bgp,omitempty" json:"bgp,omitempty"` // the daemon's BGP speaker (bgp.go)
	// VXLANs are the kernel's VXLAN devices the mirror follows (vxlan.go): shown, never configured here.
	VXLANs []VXLAN `yaml:"-" json:"vxlans,omitempty"`
}

// Options are instance-wide settings of the data plane program.
type Options struct {
	// NextHopCacheMs lets the data plane reuse a FIB result for the same lookup (destination,
	// source, table, ingress) for this long (per CPU), skipping most per-packet FIB lookups. A running
	// daemon invalidates every cached result on any route, rule, link or neighbor change; without
	// one, a change takes up to this long to reach the fast path. 0: the default of whoever loads
	// the program (the daemon's --nexthop-cache-ms, 1000 unless set; off for the CLI without a
	// daemon).
	NextHopCacheMs uint32 `yaml:"nexthop_cache_ms,omitempty" json:"nexthop_cache_ms,omitempty"`
}

// MaxNextHopCacheMs bounds Options.NextHopCacheMs.
const MaxNextHopCacheMs = 10000

// Domain describes the SR domain this node is part of (RFC 8402 8.2, RFC 8754 5.1): its SID space,
// which access ports refuse as a destination, and optionally the outer sources from which fabric
// packets may address local SIDs.
type Domain struct {
	// Locators are the prefixes of the domain's SID space (every node's locators, or a block that
	// covers them). A tenant packet addressed inside one is dropped (DROP_BOUNDARY_LOCATOR).
	Locators []netip.Prefix `yaml:"locators,omitempty" json:"locators,omitempty"`
	// Sources, when set, are the only outer sources from which a fabric packet may address a local
	// SID; others are dropped (DROP_SID_SOURCE). Empty: any source.
	Sources []netip.Prefix `yaml:"sources,omitempty" json:"sources,omitempty"`
}

// MaxDomainPrefixes bounds Domain.Locators and Domain.Sources (MAX_DOMAIN_PREFIXES in bpf/consts.h).
const MaxDomainPrefixes = 1024

// Interface is a netdev with the seg6x XDP program attached.
type Interface struct {
	// Name is the netdev (eth0) the program is attached to.
	Name string `yaml:"name" json:"name"`
	// Mode is the hook: xdp (= native, the default: XDP in the driver, for network nodes), generic (XDP
	// on skbs, for drivers without XDP) or tc (tcx ingress, for hypervisors: GSO aggregates of
	// VMs are encapsulated and decapsulated whole).
	Mode string `yaml:"mode,omitempty" json:"mode,omitempty"`
	// Role is the interface's side of the SR domain boundary: fabric (local SIDs are processed),
	// access (never: tenant traffic only) or auto (the default: access when a tenant port of the API
	// or a config file is on it, fabric otherwise). A tenant port is always access for its VLAN.
	Role    string `yaml:"role,omitempty" json:"role,omitempty"`
	Ifindex int    `yaml:"-" json:"ifindex,omitempty"` // resolved when applied
	// XDPFeatures is what the driver says it can do with XDP (read when shown; dataplane.XDPFeatures).
	XDPFeatures string `yaml:"-" json:"xdp_features,omitempty"`
	// MultiBuffer is what the program does with its multi-buffer frames (read when shown;
	// dataplane.MultiBufMarks): rx-whole, tx-via-daemon, both (comma-separated) or neither.
	MultiBuffer string `yaml:"-" json:"multi_buffer,omitempty"`
}

// Interface modes (hooks); "xdp" is accepted for native.
const (
	ModeNative  = "native"
	ModeGeneric = "generic"
	ModeTC      = "tc"
)

// NormalizeMode returns the stored name of an interface mode: "" and "xdp" are native.
func NormalizeMode(m string) string {
	if m == "" || m == "xdp" {
		return ModeNative
	}
	return m
}

// Interface roles.
const (
	RoleAuto   = "auto"
	RoleFabric = "fabric"
	RoleAccess = "access"
)

// Tenant is a VRF: a routing table and the (interface, VLAN) ports its traffic arrives on.
type Tenant struct {
	// Name identifies the tenant: 1 to 32 letters, digits, '.', '_' or '-'.
	Name string `yaml:"name" json:"name"`
	// Table is the kernel routing table of the tenant's VRF (1-252 or 256 and up; left out: none):
	// where the SIDs that name the tenant (End.DT*) and its VPN service SID look decapsulated packets up.
	Table uint32 `yaml:"table,omitempty" json:"table,omitempty"`
	Ports []Port `yaml:"ports,omitempty" json:"ports"`
	// KernelFallback says the kernel holds the same routes (the kernel mirror sets it): a packet the
	// fast path cannot encapsulate (no room in the frame) goes to the kernel instead of being dropped.
	KernelFallback bool `yaml:"kernel_fallback,omitempty" json:"kernel_fallback,omitempty"`
	// Gateway holds the tenant's gateway addresses, at most one IPv4 and one IPv6 (the address its
	// hosts route through): the source of the ICMP errors the fast path sends them (a packet too big
	// for its tunnel). A too-big packet of a family without one is dropped unanswered (DROP_TOO_BIG).
	Gateway []netip.Addr `yaml:"gateway,omitempty" json:"gateway,omitempty"`
	// MSSClamp lowers the MSS option of the tenant's TCP SYNs at the headend: "off" (the default),
	// "auto" (to fit the tunnel each SYN takes: its MTU minus the IP and TCP headers) or a number (the
	// largest MSS let through, for both IPv4 and IPv6).
	MSSClamp string `yaml:"mss_clamp,omitempty" json:"mss_clamp,omitempty"`
	// VPN makes the tenant an SRv6 L3VPN over BGP (bgp.go): its service SID, what it advertises and learns.
	VPN    *VPN   `yaml:"vpn,omitempty" json:"vpn,omitempty"`
	ID     uint32 `yaml:"-" json:"id,omitempty"`     // data plane route table id, assigned when applied
	Origin Origin `yaml:"-" json:"origin,omitempty"` // the front end that owns it (origins.go)
}

// MSS clamping modes of a tenant (Tenant.MSSClamp), besides a number.
const (
	MSSClampOff  = "off"
	MSSClampAuto = "auto"
	// MinMSS and MaxMSS bound a fixed MSS (TCP_MIN_MSS of the kernel; 65535 means auto in the map).
	MinMSS = 88
	MaxMSS = 65534
)

// Port is where a tenant's traffic enters: an interface and a VLAN ID (0 = untagged).
type Port struct {
	// Dev is the interface the traffic arrives on.
	Dev string `yaml:"dev" json:"dev"`
	// VLAN is the traffic's 802.1Q VLAN ID: 1-4094, or 0 (the default) for untagged traffic.
	VLAN    uint16 `yaml:"vlan,omitempty" json:"vlan"`
	Ifindex int    `yaml:"-" json:"ifindex,omitempty"`
}

// Route sends a tenant's traffic for Prefix into an SR policy (H.Encaps or H.Encaps.Red).
type Route struct {
	// Tenant names the tenant whose traffic the route steers.
	Tenant string `yaml:"tenant" json:"tenant"`
	// Prefix is the destination the route matches, IPv4 or IPv6, without host bits.
	Prefix netip.Prefix `yaml:"prefix" json:"prefix"`
	// Mode is encap (H.Encaps, the default), encap.red (H.Encaps.Red) or pass.
	Mode string `yaml:"mode,omitempty" json:"mode"`
	// Segs is the segment list: 1 to 16 SIDs, in the order the packet visits them.
	Segs []netip.Addr `yaml:"segs,omitempty" json:"segs"`
	// Policy names a named policy (policies.go) whose weighted lists the route's flows are spread over,
	// instead of mode, segs, src and hoplimit.
	Policy string `yaml:"policy,omitempty" json:"policy,omitempty"`
	// USIDs is the segment list written as uSIDs (usidlist.go), instead of segs: its containers
	// become Segs when the route is checked. It is kept to be shown and written back as given.
	USIDs *USIDList `yaml:"usids,omitempty" json:"usids,omitempty"`
	// Src is the outer IPv6 source (default: the kernel's choice of source towards Segs[0]).
	Src      netip.Addr `yaml:"src,omitempty" json:"src,omitempty"`
	HopLimit uint8      `yaml:"hoplimit,omitempty" json:"hoplimit,omitempty"` // outer hop limit; default 64
	ID       uint32     `yaml:"-" json:"id,omitempty"`                        // policy and counter index
	UsedSrc  netip.Addr `yaml:"-" json:"used_src,omitempty"`                  // Src, or the one the kernel chose
	// Origin is the front end that owns the route (origins.go): its tenant's, or BGP's for a route
	// learned into a tenant of the API.
	Origin Origin `yaml:"-" json:"origin,omitempty"`
	// Filled in by show (FillPaths), from the kernel's route towards Segs[0] at that moment:
	Egress    string `yaml:"-" json:"egress,omitempty"`     // the interface (or why it is unknown)
	TunnelMTU int    `yaml:"-" json:"tunnel_mtu,omitempty"` // its MTU minus the outer IPv6 + SRH
}

// SID is a local segment identifier and the endpoint behavior bound to it.
type SID struct {
	// SID is the local SID: an IPv6 address, or a prefix ADDR/LEN whose every address is this SID.
	SID    netip.Addr `yaml:"sid" json:"sid"`
	Action string     `yaml:"action" json:"action"`                     // its endpoint behavior (behaviors.go)
	NH4    netip.Addr `yaml:"nh4,omitempty" json:"nh4,omitempty"`       // End.DX4: the IPv4 next hop
	NH6    netip.Addr `yaml:"nh6,omitempty" json:"nh6,omitempty"`       // End.X, End.DX6: the IPv6 next hop
	Table  uint32     `yaml:"table,omitempty" json:"table,omitempty"`   // End.T, End.DT*: a routing table
	Tenant string     `yaml:"tenant,omitempty" json:"tenant,omitempty"` // End.DT*: a tenant, for its table
	VLAN   uint16     `yaml:"vlan,omitempty" json:"vlan,omitempty"`     // decap: 802.1Q VLAN ID to push
	// Segs is the segment list of a binding SID's SR policy (End.B6.Encaps*): 1 to 16 SIDs, in the
	// order the packet visits them.
	Segs []netip.Addr `yaml:"segs,omitempty" json:"segs,omitempty"`
	// Src is the outer IPv6 source of a binding SID's policy (default: the kernel's choice, as for a
	// route).
	Src netip.Addr `yaml:"src,omitempty" json:"src,omitempty"`
	// Bits, when not 0 or 128, makes the SID a prefix: every address in SID/Bits is this SID (a uSID
	// locator's uN, a service SID with argument bits). In YAML and the API it is written SID/Bits.
	Bits uint8 `yaml:"-" json:"bits,omitempty"`
	// Flavors are the flavors the behavior runs with: next-csid (RFC 9800), psp, usp, usd (RFC 8986)
	// (Behavior.Flavors).
	Flavors []string `yaml:"flavors,omitempty" json:"flavors,omitempty"`
	// NEXT-C-SID: the locator block and node function lengths in bits (the kernel's lblen and
	// nflen; 32 and 16 when not given).
	LBLen uint8 `yaml:"lblen,omitempty" json:"lblen,omitempty"`
	// NFLen is the node function length (see LBLen).
	NFLen uint8  `yaml:"nflen,omitempty" json:"nflen,omitempty"`
	ID    uint32 `yaml:"-" json:"id,omitempty"`
	// Plugin names the loaded plugin a SID of action plugin runs (plugins).
	Plugin string `yaml:"plugin,omitempty" json:"plugin,omitempty"`
	// Config holds the plugin's settings for this SID, KEY: VALUE, the keys its struct
	// seg6x_plugin_config names (`seg6x plugin show NAME`; a member of an array or struct is
	// "rules.0.dport"). Checked against the plugin when applied.
	Config map[string]string `yaml:"config,omitempty" json:"config,omitempty"`
	// Bind is a plugin SID's configuration slot in the data plane, and PluginSlot its plugin's
	// program slot (both set by the store; a new configuration gets a new bind).
	Bind       uint32 `yaml:"-" json:"bind,omitempty"`
	PluginSlot uint32 `yaml:"-" json:"-"`
	// Policy is the id of a binding SID's policy (shared with routes of the same list), set by the store.
	Policy uint32 `yaml:"-" json:"policy,omitempty"`
	Origin Origin `yaml:"-" json:"origin,omitempty"` // the front end that owns it (origins.go)
}

// Route modes.
const (
	ModeEncap    = "encap"
	ModeEncapRed = "encap.red"
	// ModePass hands matching traffic to the kernel untouched: a more specific route that must not
	// be encapsulated by a covering one (the kernel mirror installs one per non-seg6 kernel route).
	ModePass = "pass"
)

// DefaultHopLimit is the outer hop limit when a route gives none.
const DefaultHopLimit = 64

// MaxSegments is the longest segment list (MAX_SEGMENTS in bpf/consts.h).
const MaxSegments = 16

// ParsePrefix reads a prefix, or a single address as its host prefix (/32, /128). Host bits are
// kept: Validate reports them ("did you mean").
func ParsePrefix(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a prefix or an address", s)
		}
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return p, fmt.Errorf("%q is not a prefix", s)
	}
	return p, nil
}

// Flavor names (SID.Flavors).
const (
	// FlavorNextCSID: RFC 9800 NEXT-C-SID on End (uN) and End.X (uA).
	FlavorNextCSID = "next-csid"
	// FlavorPSP, FlavorUSP, FlavorUSD: RFC 8986 4.16 penultimate segment pop, ultimate segment pop,
	// ultimate segment decapsulation.
	FlavorPSP = "psp"
	FlavorUSP = "usp"
	FlavorUSD = "usd"
)

// NEXT-C-SID lengths when a SID gives none (the kernel's and RFC 9800's usual 32-bit block, 16-bit
// uSIDs).
const (
	DefaultLBLen = 32
	DefaultNFLen = 16
)

// Prefix is the addresses the SID covers: SID/Bits, or SID/128.
func (s SID) Prefix() netip.Prefix {
	if s.Bits == 0 || s.Bits >= 128 {
		return netip.PrefixFrom(s.SID, 128)
	}
	return netip.PrefixFrom(s.SID, int(s.Bits))
}

// Name is how the SID is written: its address, or SID/Bits for a prefix.
func (s SID) Name() string {
	if p := s.Prefix(); p.Bits() < 128 {
		return p.String()
	}
	return s.SID.String()
}

// HasFlavor says whether the SID runs with flavor f.
func (s SID) HasFlavor(f string) bool { return slices.Contains(s.Flavors, f) }

// ParseSID reads a SID as written in YAML, the API and the CLI: an address, or a prefix ADDR/LEN.
// A whole address (or ADDR/128) has bits 0.
func ParseSID(v string) (addr netip.Addr, bits uint8, err error) {
	p, err := ParsePrefix(v)
	if err != nil || p.Bits() == p.Addr().BitLen() {
		return p.Addr(), 0, err
	}
	return p.Addr(), uint8(p.Bits()), nil
}
