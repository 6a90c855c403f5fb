package model

// bgp.go: the BGP section of the state (the node's SRv6 L3VPN speaker, RFC 9252, run by the daemon)
// and a tenant's vpn: section (route distinguisher, route targets, locator, what it advertises), with
// their checks. The data plane only sees the service SID each vpn: tenant gets (internal/state's
// vpnsid.go); the rest is read by the daemon's BGP front end (internal/bgp).

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// BGP is the node's BGP speaker. Present: `seg6x daemon` runs it; absent: no BGP.
type BGP struct {
	// ASN is this node's AS number.
	ASN uint32 `yaml:"asn" json:"asn"`
	// RouterID is the BGP identifier: an IPv4 address, unique in the fleet.
	RouterID netip.Addr `yaml:"router_id" json:"router_id"`
	// ListenPort is where it accepts sessions: 0 is 179, -1 none (it only connects out).
	ListenPort int32 `yaml:"listen_port,omitempty" json:"listen_port,omitempty"`
	// NextHop is the fabric address advertised as the next hop of this node's VPN routes, and the outer
	// source of the tenant traffic it encapsulates on learned routes; unset: each session's local
	// address, and the kernel's choice of source. (Traffic goes to the route's SID; the next hop only
	// has to resolve.)
	NextHop netip.Addr `yaml:"next_hop,omitempty" json:"next_hop,omitempty"`
	// Locator is the default locator of the tenants' service SIDs (a tenant's vpn.locator overrides it).
	Locator netip.Prefix `yaml:"locator,omitempty" json:"locator,omitempty"`
	// BlockBits and FunctionBits give the SID structure (RFC 9252 3.2.1) of the service SIDs: the
	// locator is block + node; the function follows it. Defaults: 32 (at most the locator's length), 16.
	BlockBits uint8 `yaml:"block_bits,omitempty" json:"block_bits,omitempty"`
	// FunctionBits is the length of the function (see BlockBits).
	FunctionBits uint8 `yaml:"function_bits,omitempty" json:"function_bits,omitempty"`
	// Transposition sends the function bits of each SID in the MPLS label field (RFC 9252 section 4),
	// as FRR does by default; received routes are decoded either way.
	Transposition bool `yaml:"transposition,omitempty" json:"transposition,omitempty"`
	// SIDsInDomain accepts learned routes only when their service SID lies inside one of the SR
	// domain's locators (domain.locators); by default any SID that passes the other checks is used.
	SIDsInDomain    bool            `yaml:"sids_in_domain,omitempty" json:"sids_in_domain,omitempty"`
	GracefulRestart GracefulRestart `yaml:"graceful_restart,omitempty" json:"graceful_restart"`
	Neighbors       []Neighbor      `yaml:"neighbors,omitempty" json:"neighbors"`
}

// GracefulRestart (RFC 4724): when on, a peer keeps this node's routes for RestartTime seconds
// while it restarts, and this node keeps a restarting peer's routes (stale) until it is back or the time
// is up; when off, a lost session withdraws its routes at once.
type GracefulRestart struct {
	// Enabled turns graceful restart on (default: off).
	Enabled bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// RestartTime is in seconds (at most 4095; default 120).
	RestartTime uint16 `yaml:"restart_time,omitempty" json:"restart_time,omitempty"`
}

// Neighbor is one BGP session (usually to a route reflector).
type Neighbor struct {
	// Address is the peer's IPv4 or IPv6 address.
	Address netip.Addr `yaml:"address" json:"address"`
	ASN     uint32     `yaml:"asn" json:"asn"` // the peer's AS number; equal to ours: iBGP
	// Password turns on TCP-MD5 (RFC 2385) for the session.
	Password string `yaml:"password,omitempty" json:"password,omitempty"`
	// LocalAddress is the source of the session (default: the kernel's choice).
	LocalAddress netip.Addr `yaml:"local_address,omitempty" json:"local_address,omitempty"`
	// Port is the peer's TCP port (default 179).
	Port uint16 `yaml:"port,omitempty" json:"port,omitempty"`
	// Families to negotiate: vpnv4, vpnv6, rtc (route target constraint, RFC 4684: the peer sends only
	// the VPN routes of route targets this node imports, and this node sends only the routes of route
	// targets the peer asked for). Default: vpnv4 and vpnv6; add rtc where every PE behind the peer
	// speaks it (a peer that is not sent a route target's membership is not sent its routes).
	Families []string `yaml:"families,omitempty" json:"families,omitempty"`
	// Description is free text about the peer, shown with the session.
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
}

// BGP address families of a neighbor.
const (
	FamilyVPNv4 = "vpnv4"
	FamilyVPNv6 = "vpnv6"
	FamilyRTC   = "rtc"
)

// VPN is a tenant's SRv6 L3VPN service: what it advertises and which routes it learns.
type VPN struct {
	RD       string   `yaml:"rd" json:"rd"`                                   // route distinguisher: ASN:N or IPv4:N
	ImportRT []string `yaml:"import_rt,omitempty" json:"import_rt,omitempty"` // routes carrying one of these become the tenant's
	ExportRT []string `yaml:"export_rt,omitempty" json:"export_rt,omitempty"` // attached to the tenant's routes
	// Locator is where the tenant's service SID is allocated (default: bgp.locator).
	Locator netip.Prefix `yaml:"locator,omitempty" json:"locator,omitempty"`
	// SID fixes the service SID (inside the locator); unset, the node allocates the lowest free
	// function of the locator and keeps it (across restarts and config applies) while the locator stays.
	SID netip.Addr `yaml:"sid,omitempty" json:"sid,omitempty"`
	// Behavior of the service SID: End.DT46 (the default), End.DT4 or End.DT6 (the tenant then
	// advertises and learns only that family).
	Behavior string `yaml:"behavior,omitempty" json:"behavior,omitempty"`
	// Advertise lists the tenant prefixes sent to the peers.
	Advertise []netip.Prefix `yaml:"advertise,omitempty" json:"advertise,omitempty"`
	// AdvertiseKernel also sends the kernel's routes of the tenant's table (Tenant.Table).
	AdvertiseKernel bool `yaml:"advertise_kernel,omitempty" json:"advertise_kernel,omitempty"`
	// Encap is how learned routes encapsulate: encap (H.Encaps, the default) or encap.red.
	Encap string `yaml:"encap,omitempty" json:"encap,omitempty"`
	// ImportMoreSpecific installs a learned prefix that lies inside a prefix the tenant holds itself
	// (a route of its kernel table: connected or static); by default such a prefix is refused, so a
	// peer cannot take part of the PE's own site away from it.
	ImportMoreSpecific bool `yaml:"import_more_specific,omitempty" json:"import_more_specific,omitempty"`
	// ServiceSID is the SID in use (allocated or fixed), shown, never set.
	ServiceSID netip.Addr `yaml:"-" json:"service_sid,omitempty"`
}

// Defaults of the BGP section.
const (
	DefaultBGPPort      = 179
	DefaultBlockBits    = 32
	DefaultFunctionBits = 16
	DefaultRestartTime  = 120
	maxRestartTime      = 4095 // 12 bits (RFC 4724)
	maxTransposeBits    = 20   // an MPLS label
	maxPasswordLen      = 80   // TCP-MD5 key
)

// BGPObj names the BGP section in errors and diffs.
func BGPObj() string { return "bgp" }

// ValidateBGP checks the BGP section and fills its defaults.
func ValidateBGP(b *BGP, add func(error)) {
	obj := BGPObj()
	if b.ASN == 0 {
		add(FieldErr(obj, "asn", "missing (1-4294967295)"))
	}
	if !b.RouterID.Is4() || b.RouterID.IsUnspecified() {
		add(FieldErr(obj, "router_id", "want an IPv4 address (unique per node), got %q", addrString(b.RouterID)))
	}
	if b.ListenPort < -1 || b.ListenPort > 65535 {
		add(FieldErr(obj, "listen_port", "%d: want 1-65535, 0 (179) or -1 (no listener)", b.ListenPort))
	}
	if b.NextHop.IsValid() && (!b.NextHop.Is6() || b.NextHop.Is4In6() || !b.NextHop.IsGlobalUnicast()) {
		add(FieldErr(obj, "next_hop", "%s: want a global IPv6 address of this node's fabric side", b.NextHop))
	}
	if b.FunctionBits == 0 {
		b.FunctionBits = DefaultFunctionBits
	}
	if b.Transposition && b.FunctionBits > maxTransposeBits {
		add(FieldErr(obj, "function_bits", "%d: transposition carries at most %d bits in the label", b.FunctionBits, maxTransposeBits))
	}
	if b.Locator.IsValid() {
		validateLocator(obj, "locator", b.Locator, b.FunctionBits, add)
	}
	if b.BlockBits == 0 {
		b.BlockBits = DefaultBlockBits
		if b.Locator.IsValid() && b.Locator.Bits() < DefaultBlockBits {
			b.BlockBits = uint8(b.Locator.Bits())
		}
	}
	if b.Locator.IsValid() && int(b.BlockBits) > b.Locator.Bits() {
		add(FieldErr(obj, "block_bits", "%d is longer than the locator %s", b.BlockBits, b.Locator))
	}
	if b.GracefulRestart.RestartTime == 0 {
		b.GracefulRestart.RestartTime = DefaultRestartTime
	}
	if b.GracefulRestart.RestartTime > maxRestartTime {
		add(FieldErr(obj, "graceful_restart.restart_time", "%d is more than %d seconds", b.GracefulRestart.RestartTime, maxRestartTime))
	}
	seen := map[netip.Addr]bool{}
	for i := range b.Neighbors {
		n := &b.Neighbors[i]
		nobj := fmt.Sprintf("bgp neighbor %s", addrString(n.Address))
		if !n.Address.IsValid() || n.Address.IsUnspecified() || n.Address.IsMulticast() || n.Address.Is4In6() {
			add(FieldErr(nobj, "address", "want the peer's unicast IP address"))
		}
		if seen[n.Address] {
			add(FieldErr(nobj, "", "listed twice"))
		}
		seen[n.Address] = true
		if n.ASN == 0 {
			add(FieldErr(nobj, "asn", "missing (the peer's AS; ours for iBGP)"))
		}
		if len(n.Password) > maxPasswordLen {
			add(FieldErr(nobj, "password", "longer than %d characters", maxPasswordLen))
		}
		if n.LocalAddress.IsValid() && (n.LocalAddress.Is4() != n.Address.Is4() || n.LocalAddress.IsUnspecified()) {
			add(FieldErr(nobj, "local_address", "%s: want an address of the peer's family", n.LocalAddress))
		}
		if len(n.Families) == 0 {
			n.Families = []string{FamilyVPNv4, FamilyVPNv6}
		}
		fams := map[string]bool{}
		for _, f := range n.Families {
			if f != FamilyVPNv4 && f != FamilyVPNv6 && f != FamilyRTC {
				add(FieldErr(nobj, "families", "%q: want vpnv4, vpnv6 or rtc", f))
			}
			if fams[f] {
				add(FieldErr(nobj, "families", "%q listed twice", f))
			}
			fams[f] = true
		}
	}
}

// validateLocator checks a locator that service SIDs with functions of fbits bits are allocated from.
func validateLocator(obj, field string, l netip.Prefix, fbits uint8, add func(error)) {
	switch {
	case !l.Addr().Is6() || l.Addr().Is4In6():
		add(FieldErr(obj, field, "%s: a locator is an IPv6 prefix", l))
	case l != l.Masked():
		add(FieldErr(obj, field, "%s: host bits set (want %s)", l, l.Masked()))
	case l.Bits()+int(fbits) > 128:
		add(FieldErr(obj, field, "%s: no room for a %d-bit function", l, fbits))
	}
}

// ValidateVPN checks a tenant's vpn: section and fills its defaults.
func ValidateVPN(t *Tenant, add func(error)) {
	v := t.VPN
	obj := TenantObj(t)
	if err := checkExtCommunity(v.RD); err != nil {
		add(FieldErr(obj, "vpn.rd", "%q: %v", v.RD, err))
	}
	for _, l := range [][]string{v.ImportRT, v.ExportRT} {
		for _, rt := range l {
			if err := checkExtCommunity(rt); err != nil {
				add(FieldErr(obj, "vpn.import_rt/export_rt", "%q: %v", rt, err))
			}
		}
	}
	if t.Table == 0 {
		add(FieldErr(obj, "vpn", "the tenant needs a table: its service SID decapsulates into it"))
	}
	if len(v.ImportRT) == 0 && len(v.ExportRT) == 0 {
		add(FieldErr(obj, "vpn", "no import_rt or export_rt: it would neither learn nor be learned"))
	}
	if v.Behavior == "" {
		v.Behavior = "End.DT46"
	}
	var fam [2]bool // serves IPv4, IPv6
	switch v.Behavior {
	case "End.DT4":
		fam[0] = true
	case "End.DT6":
		fam[1] = true
	case "End.DT46":
		fam = [2]bool{true, true}
	default:
		add(FieldErr(obj, "vpn.behavior", "%q: want End.DT46, End.DT4 or End.DT6", v.Behavior))
	}
	if v.Encap == "" {
		v.Encap = ModeEncap
	}
	if v.Encap != ModeEncap && v.Encap != ModeEncapRed {
		add(FieldErr(obj, "vpn.encap", "%q: want encap or encap.red", v.Encap))
	}
	if v.Locator.IsValid() {
		validateLocator(obj, "vpn.locator", v.Locator, 0, add)
	}
	if v.SID.IsValid() {
		switch {
		case !v.SID.Is6() || v.SID.Is4In6() || !v.SID.IsGlobalUnicast():
			add(FieldErr(obj, "vpn.sid", "%s: want a global IPv6 address", v.SID))
		case v.Locator.IsValid() && !v.Locator.Contains(v.SID):
			add(FieldErr(obj, "vpn.sid", "%s is outside the locator %s", v.SID, v.Locator))
		}
	}
	seen := map[netip.Prefix]bool{}
	for _, p := range v.Advertise {
		switch {
		case !p.IsValid() || p.Addr().Is4In6() || p != p.Masked():
			add(FieldErr(obj, "vpn.advertise", "%s: want a network address with its length", p))
		case !fam[0] && !p.Addr().Is6(), !fam[1] && p.Addr().Is6():
			add(FieldErr(obj, "vpn.advertise", "%s: %s serves only the other family", p, v.Behavior))
		case seen[p]:
			add(FieldErr(obj, "vpn.advertise", "%s listed twice", p))
		}
		seen[p] = true
	}
	if v.AdvertiseKernel && t.Table == 0 {
		add(FieldErr(obj, "vpn.advertise_kernel", "the tenant has no kernel table (set table)"))
	}
}

// checkExtCommunity checks a route distinguisher or route target: ASN:N (a 2-byte ASN with a 4-byte
// number, or a 4-byte ASN with a 2-byte number) or IPv4:N (2-byte number).
func checkExtCommunity(s string) error {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return fmt.Errorf("want ASN:N or IPv4:N")
	}
	admin, num := s[:i], s[i+1:]
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil {
		return fmt.Errorf("%q is not a number (0-4294967295)", num)
	}
	if a, err := netip.ParseAddr(admin); err == nil {
		if !a.Is4() {
			return fmt.Errorf("the administrator is an IPv4 address or an ASN")
		}
		if n > 0xFFFF {
			return fmt.Errorf("with an IPv4 administrator the number is at most 65535")
		}
		return nil
	}
	asn, err := strconv.ParseUint(admin, 10, 32)
	if err != nil {
		return fmt.Errorf("%q is not an ASN or IPv4 address", admin)
	}
	if asn > 0xFFFF && n > 0xFFFF {
		return fmt.Errorf("with a 4-byte ASN the number is at most 65535")
	}
	return nil
}

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// CloneBGP deep-copies a BGP section (nil stays nil).
func CloneBGP(b *BGP) *BGP {
	if b == nil {
		return nil
	}
	c := *b
	c.Neighbors = slices.Clone(b.Neighbors)
	for i := range c.Neighbors {
		c.Neighbors[i].Families = slices.Clone(b.Neighbors[i].Families)
	}
	return &c
}

// CloneVPN deep-copies a vpn: section (nil stays nil).
func CloneVPN(v *VPN) *VPN {
	if v == nil {
		return nil
	}
	c := *v
	c.ImportRT, c.ExportRT, c.Advertise = slices.Clone(v.ImportRT), slices.Clone(v.ExportRT), slices.Clone(v.Advertise)
	return &c
}
