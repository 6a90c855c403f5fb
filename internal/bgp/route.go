// Package bgp is seg6x's BGP front end: SRv6 L3VPN routes (RFC 9252) exchanged through an embedded
// GoBGP (github.com/osrg/gobgp/v4).
package bgp

// route.go: one SRv6 L3VPN route as seg6x exports and imports it (VPNRoute), and its translation to and
// from GoBGP's path: a VPNv4 or VPNv6 NLRI (route distinguisher, prefix, label), an IPv6 next hop
// (RFC 8950 for VPNv4), route-target extended communities and the Prefix-SID attribute's SRv6 L3
// Service TLV (the service SID, its endpoint behavior and the SID Structure sub-sub-TLV).

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/osrg/gobgp/v4/pkg/apiutil"
	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"
)

// Service behaviors a VPN route may carry (seg6x's names, as in state.SID.Action).
const (
	EndDT4  = "End.DT4"
	EndDT6  = "End.DT6"
	EndDT46 = "End.DT46"
)

// opaqueBehavior is the endpoint behavior 0xFFFF ("opaque"): FRR 8.4 sends it for every VPN SID (and
// re-encodes reflected routes with it); the route's family then says which decapsulation is meant.
const opaqueBehavior = 0xFFFF

// implicitNull is the label of a route whose SID is not transposed (RFC 9252 section 4).
const implicitNull = 3

var behaviorCodes = map[string]gobgp.SRBehavior{EndDT4: gobgp.END_DT4, EndDT6: gobgp.END_DT6, EndDT46: gobgp.END_DT46}

// SIDStructure is the layout of a service SID (RFC 9252 section 3.2.1): locator block and node, then
// function and argument lengths in bits.
type SIDStructure struct {
	Block, Node, Function, Argument uint8
}

func (s SIDStructure) bits() int {
	return int(s.Block) + int(s.Node) + int(s.Function) + int(s.Argument)
}

// VPNRoute is one tenant prefix reachable through a PE's service SID.
type VPNRoute struct {
	RD        string       // route distinguisher: "ASN:N" or "IPv4:N"
	Prefix    netip.Prefix // the tenant's prefix: IPv4 (VPNv4) or IPv6 (VPNv6)
	RTs       []string     // route targets, "ASN:N" or "IPv4:N"
	NextHop   netip.Addr   // the advertising PE's fabric address (IPv6; sending ::, each session's local address)
	SID       netip.Addr   // the whole service SID (any transposition undone)
	Behavior  string       // EndDT4, EndDT6 or EndDT46
	Structure SIDStructure // zero: not advertised
}

// Family is the route's BGP address family (VPNv4 or VPNv6).
func (r *VPNRoute) Family() gobgp.Family {
	if r.Prefix.Addr().Is4() {
		return gobgp.RF_IPv4_VPN
	}
	return gobgp.RF_IPv6_VPN
}

// Validate checks that the route can be advertised as it is.
func (r *VPNRoute) Validate() error {
	if !r.Prefix.IsValid() || r.Prefix.Addr().Is4In6() || r.Prefix != r.Prefix.Masked() {
		return fmt.Errorf("prefix %q: want a network address with its length, such as 198.18.1.0/24", r.Prefix)
	}
	if _, err := gobgp.ParseRouteDistinguisher(toGoBGP(r.RD)); err != nil {
		return fmt.Errorf("route distinguisher %q: %v", r.RD, err)
	}
	if len(r.RTs) == 0 {
		return errors.New("no route target: a VPN route without one is imported by nobody")
	}
	for _, rt := range r.RTs {
		if _, err := gobgp.ParseRouteTarget(toGoBGP(rt)); err != nil {
			return fmt.Errorf("route target %q: %v", rt, err)
		}
	}
	if !r.NextHop.Is6() || r.NextHop.Is4In6() || r.NextHop.IsLinkLocalUnicast() {
		return fmt.Errorf("next hop %s: want the PE's global IPv6 fabric address (:: for each session's own)", r.NextHop)
	}
	if why := unusableSID(r.SID); why != "" { // sidcheck.go
		return errors.New(why)
	}
	switch {
	case r.Behavior == EndDT46:
	case r.Behavior == EndDT4 && r.Prefix.Addr().Is4(), r.Behavior == EndDT6 && r.Prefix.Addr().Is6():
	case r.Behavior == EndDT4 || r.Behavior == EndDT6:
		return fmt.Errorf("behavior %s does not decapsulate the family of %s", r.Behavior, r.Prefix)
	default:
		return fmt.Errorf("behavior %q: want %s, %s or %s", r.Behavior, EndDT4, EndDT6, EndDT46)
	}
	if r.Structure.bits() > 128 {
		return fmt.Errorf("SID structure %d/%d/%d/%d is longer than 128 bits", r.Structure.Block, r.Structure.Node,
			r.Structure.Function, r.Structure.Argument)
	}
	return nil
}

// ToPath builds the GoBGP path that advertises r. With transpose, the SID's function bits travel in
// the label (transposition offset block+node, length function, which must be 1-20 bits), as FRR, Cisco
// and Juniper PEs send them; without, the whole SID is in the TLV and the label is implicit null.
func ToPath(r VPNRoute, transpose bool) (*apiutil.Path, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	sid, label := r.SID, uint32(implicitNull)
	var tl, to uint8
	if transpose {
		if r.Structure.Function == 0 {
			return nil, errors.New("transposition needs the SID structure's function length")
		}
		tl, to = r.Structure.Function, r.Structure.Block+r.Structure.Node
		var err error
		if sid, label, err = transposeOut(r.SID, to, tl); err != nil {
			return nil, err
		}
	}
	rd, _ := gobgp.ParseRouteDistinguisher(toGoBGP(r.RD))
	nlri, err := gobgp.NewLabeledVPNIPAddrPrefix(r.Prefix, *gobgp.NewMPLSLabelStack(label), rd)
	if err != nil {
		return nil, err
	}
	fam := r.Family()
	mp, err := gobgp.NewPathAttributeMpReachNLRI(fam, []gobgp.PathNLRI{{NLRI: nlri}}, r.NextHop)
	if err != nil {
		return nil, err
	}
	var ecs []gobgp.ExtendedCommunityInterface
	for _, s := range r.RTs {
		rt, _ := gobgp.ParseRouteTarget(toGoBGP(s))
		ecs = append(ecs, rt)
	}
	st := r.Structure
	psid := gobgp.NewPathAttributePrefixSID(gobgp.NewSRv6ServiceTLV(gobgp.TLVTypeSRv6L3Service,
		gobgp.NewSRv6InformationSubTLV(sid, behaviorCodes[r.Behavior],
			gobgp.NewSRv6SIDStructureSubSubTLV(st.Block, st.Node, st.Function, st.Argument, tl, to))))
	return &apiutil.Path{Family: fam, Nlri: nlri, Attrs: []gobgp.PathAttributeInterface{
		gobgp.NewPathAttributeOrigin(gobgp.BGP_ORIGIN_ATTR_TYPE_IGP), mp,
		gobgp.NewPathAttributeExtendedCommunities(ecs), psid,
	}}, nil
}

// FromPath reads a received VPNv4 or VPNv6 path back into a VPNRoute: the SID with its transposed
// bits restored, the behavior (the family's when the advertiser sent the opaque 0xFFFF), the route
// targets sorted. A path without an SRv6 L3 Service TLV is not an SRv6 VPN route.
func FromPath(p *apiutil.Path) (VPNRoute, error) {
	var r VPNRoute
	v, ok := p.Nlri.(*gobgp.LabeledVPNIPAddrPrefix)
	if !ok {
		return r, fmt.Errorf("not a VPN route (%T)", p.Nlri)
	}
	r.RD, r.Prefix = fromGoBGP(v.RD.String()), v.Prefix
	var info *gobgp.SRv6InformationSubTLV
	for _, a := range p.Attrs {
		switch a := a.(type) {
		case *gobgp.PathAttributeMpReachNLRI:
			r.NextHop = a.Nexthop
		case *gobgp.PathAttributeExtendedCommunities:
			for _, ec := range a.Value {
				if _, sub := ec.GetTypes(); sub == gobgp.EC_SUBTYPE_ROUTE_TARGET {
					r.RTs = append(r.RTs, fromGoBGP(ec.String()))
				}
			}
		case *gobgp.PathAttributePrefixSID:
			if info == nil {
				info = l3Service(a)
			}
		}
	}
	if info == nil {
		return r, errors.New("no SRv6 L3 Service TLV (not an SRv6 VPN route)")
	}
	sid, ok := netip.AddrFromSlice(info.SID)
	if !ok || !sid.Is6() {
		return r, fmt.Errorf("SID of %d bytes", len(info.SID))
	}
	var tl, to uint8
	for _, ss := range info.SubSubTLVs {
		if s, ok := ss.(*gobgp.SRv6SIDStructureSubSubTLV); ok {
			r.Structure = SIDStructure{s.LocatorBlockLength, s.LocatorNodeLength, s.FunctionLength, s.ArgumentLength}
			tl, to = s.TranspositionLength, s.TranspositionOffset
		}
	}
	if tl > 0 {
		if len(v.Labels.Labels) == 0 {
			return r, errors.New("transposed SID without a label")
		}
		var err error
		if sid, err = transposeIn(sid, v.Labels.Labels[0], to, tl); err != nil {
			return r, err
		}
	}
	r.SID = sid
	switch beh := uint16(info.EndpointBehavior); {
	case beh == opaqueBehavior && r.Prefix.Addr().Is4():
		r.Behavior = EndDT4
	case beh == opaqueBehavior:
		r.Behavior = EndDT6
	default:
		for name, code := range behaviorCodes {
			if uint16(code) == beh {
				r.Behavior = name
			}
		}
		if r.Behavior == "" {
			return r, fmt.Errorf("endpoint behavior %d is not a layer-3 VPN decapsulation (want End.DT4/DT6/DT46)", beh)
		}
	}
	slices.Sort(r.RTs)
	if err := r.Validate(); err != nil {
		return r, err
	}
	return r, nil
}

// l3Service returns the first SRv6 SID Information sub-TLV of a Prefix-SID's SRv6 L3 Service TLV.
func l3Service(a *gobgp.PathAttributePrefixSID) *gobgp.SRv6InformationSubTLV {
	for _, tlv := range a.TLVs {
		svc, ok := tlv.(*gobgp.SRv6ServiceTLV)
		if !ok || svc.Type != gobgp.TLVTypeSRv6L3Service {
			continue
		}
		for _, st := range svc.SubTLVs {
			if info, ok := st.(*gobgp.SRv6InformationSubTLV); ok {
				return info
			}
		}
	}
	return nil
}
