package state

// encode.go: turns a validated, resolved state into the exact contents of the BPF maps (its "image"),
// including the prebuilt outer IPv6 + SRH header of each policy.

import (
	"fmt"

	"github.com/seg6x/seg6x/internal/dataplane"
)

// Image is what the maps of a data plane hold for one state.
type Image struct {
	TenantPorts map[dataplane.Seg6xTenantKey]dataplane.Seg6xTenantVal
	Encap4      map[dataplane.Seg6xEncap4Key]dataplane.Seg6xEncapVal
	Encap6      map[dataplane.Seg6xEncap6Key]dataplane.Seg6xEncapVal
	Policies    map[uint32]dataplane.Seg6xEncapPolicy
	SIDs        map[[16]byte]dataplane.Seg6xSidEntry
	TxPorts     map[uint32]uint32
}

// sid_action values (enum sid_action in bpf/structs.h).
var actionCode = map[string]uint8{
	"End": 1, "End.X": 2, "End.T": 3, "End.DX4": 4, "End.DX6": 5, "End.DT4": 6, "End.DT6": 7, "End.DT46": 8,
}

const sidFlagVLAN = 1 // SID_F_VLAN

// BuildImage computes the map contents of a state whose IDs and resolved fields are filled in.
func BuildImage(s *State) (*Image, error) {
	im := &Image{
		TenantPorts: map[dataplane.Seg6xTenantKey]dataplane.Seg6xTenantVal{},
		Encap4:      map[dataplane.Seg6xEncap4Key]dataplane.Seg6xEncapVal{},
		Encap6:      map[dataplane.Seg6xEncap6Key]dataplane.Seg6xEncapVal{},
		Policies:    map[uint32]dataplane.Seg6xEncapPolicy{},
		SIDs:        map[[16]byte]dataplane.Seg6xSidEntry{},
		TxPorts:     map[uint32]uint32{},
	}
	for _, it := range s.Interfaces {
		im.TxPorts[uint32(it.Ifindex)] = uint32(it.Ifindex)
	}
	tenantID := map[string]*Tenant{}
	for i := range s.Tenants {
		t := &s.Tenants[i]
		tenantID[t.Name] = t
		for _, p := range t.Ports {
			im.TenantPorts[dataplane.Seg6xTenantKey{Ifindex: uint32(p.Ifindex), Vlan: p.VLAN}] =
				dataplane.Seg6xTenantVal{TenantId: t.ID}
		}
	}
	for i := range s.Routes {
		r := &s.Routes[i]
		t := tenantID[r.Tenant]
		if t == nil {
			return nil, fmt.Errorf("%s: unknown tenant", routeObj(r))
		}
		pol, err := OuterHeader(r)
		if err != nil {
			return nil, err
		}
		im.Policies[r.ID] = pol
		val := dataplane.Seg6xEncapVal{PolicyId: r.ID}
		if r.Prefix.Addr().Is4() {
			k := dataplane.Seg6xEncap4Key{Prefixlen: 32 + uint32(r.Prefix.Bits()), TenantId: t.ID}
			k.Addr = r.Prefix.Addr().As4()
			im.Encap4[k] = val
		} else {
			k := dataplane.Seg6xEncap6Key{Prefixlen: 32 + uint32(r.Prefix.Bits()), TenantId: t.ID}
			k.Addr = r.Prefix.Addr().As16()
			im.Encap6[k] = val
		}
	}
	for i := range s.SIDs {
		sd := &s.SIDs[i]
		e := dataplane.Seg6xSidEntry{Id: sd.ID, Action: actionCode[sd.Action], Table: sd.Table}
		if sd.Tenant != "" {
			if t := tenantID[sd.Tenant]; t != nil {
				e.Table = t.Table
			}
		}
		if sd.VLAN != 0 {
			e.Flags |= sidFlagVLAN
			e.Vlan = sd.VLAN
		}
		switch {
		case sd.NH4.IsValid():
			a := sd.NH4.As4()
			copy(e.Nh[:], a[:])
		case sd.NH6.IsValid():
			e.Nh = sd.NH6.As16()
		}
		im.SIDs[sd.SID.As16()] = e
	}
	return im, nil
}

// OuterHeader builds the IPv6 header and SRH a policy prepends. Per packet the data plane only
// patches the payload length, traffic class and flow label.
//
// H.Encaps: SRH with all n SIDs, Segment List[0] = last SID, segments left = last entry = n-1, and
// the destination is the first SID. H.Encaps.Red: the first SID is only in the destination; the SRH
// holds the other n-1 (segments left stays n-1) and is left out entirely when n = 1.
func OuterHeader(r *Route) (dataplane.Seg6xEncapPolicy, error) {
	var pol dataplane.Seg6xEncapPolicy
	n := len(r.Segs)
	if n == 0 || n > MaxSegments {
		return pol, fmt.Errorf("%s: %d SIDs", routeObj(r), n)
	}
	src := r.UsedSrc
	if !src.IsValid() {
		src = r.Src
	}
	if !src.IsValid() {
		return pol, fmt.Errorf("%s: no source address", routeObj(r))
	}
	inner := uint8(4) // IPPROTO_IPIP
	if r.Prefix.Addr().Is6() {
		inner = 41 // IPPROTO_IPV6
	}
	listed := r.Segs // in SRH order reversed below
	if r.Mode == ModeEncapRed {
		listed = r.Segs[1:]
	}
	h := pol.Hdr[:0]
	h = append(h, 0x60, 0, 0, 0, 0, 0, 0, 0)
	hopLimit := r.HopLimit
	if hopLimit == 0 {
		hopLimit = DefaultHopLimit
	}
	h[7] = hopLimit
	s16 := src.As16()
	d16 := r.Segs[0].As16()
	h = append(h, s16[:]...)
	h = append(h, d16[:]...)
	if len(listed) == 0 {
		h[6] = inner
	} else {
		h[6] = 43 // IPPROTO_ROUTING
		m := len(listed)
		h = append(h, inner, uint8(2*m), 4, uint8(n-1), uint8(m-1), 0, 0, 0)
		for j := m - 1; j >= 0; j-- {
			a := listed[j].As16()
			h = append(h, a[:]...)
		}
	}
	pol.HdrLen = uint16(len(h))
	return pol, nil
}
