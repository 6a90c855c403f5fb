package dataplane

// encode.go: the exact contents of the BPF map entries for the store's data plane entries
// (state/dataplane.go): port entries, LPM keys of the domain's prefixes, route keys, the prebuilt
// outer IPv6 + SRH header of each policy, SID entries. Flags and codes are bpf2go's constants.

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

func portKey(k state.PortKey) Seg6xPortKey { return Seg6xPortKey{Ifindex: k.Ifindex, Vlan: k.VLAN} }

func portVal(v state.PortSpec) Seg6xPortVal {
	out := Seg6xPortVal{TableId: v.TableID, Plens4: v.Plens4, Plens6: v.Plens6, MssClamp: v.MSSClamp}
	for _, f := range []struct {
		set  bool
		flag Seg6xPortFlags
	}{{v.SIDs, Seg6xPortFlagsPORT_F_SIDS}, {v.Boundary, Seg6xPortFlagsPORT_F_BOUNDARY}, {v.Tenant, Seg6xPortFlagsPORT_F_TENANT},
		{v.SIDSources, Seg6xPortFlagsPORT_F_SID_SOURCES}, {v.KernelFallback, Seg6xPortFlagsPORT_F_KERNEL_FALLBACK},
		{v.Bridge, Seg6xPortFlagsPORT_F_BRIDGE}, {v.BridgeLearning, Seg6xPortFlagsPORT_F_LEARNING}} {
		if f.set {
			out.Flags |= uint32(f.flag)
		}
	}
	if v.Gateway4.IsValid() {
		b := v.Gateway4.As4()
		out.Gw4 = binary.NativeEndian.Uint32(b[:]) // network order in memory
	}
	if v.Gateway6.IsValid() {
		out.Gw6 = v.Gateway6.As16()
	}
	return out
}

// lpmKey is an IPv6 prefix as a key of the domain's LPM tries.
func lpmKey(p netip.Prefix) Seg6xLpm6Key {
	return Seg6xLpm6Key{Prefixlen: uint32(p.Bits()), Addr: p.Addr().As16()}
}

func route4Key(k state.RouteKey) Seg6xRoute4Key {
	return Seg6xRoute4Key{TableId: k.TableID, Plen: uint8(k.Prefix.Bits()), Addr: k.Prefix.Addr().As4()}
}

func route6Key(k state.RouteKey) Seg6xRoute6Key {
	return Seg6xRoute6Key{TableId: k.TableID, Plen: uint8(k.Prefix.Bits()), Addr: k.Prefix.Addr().As16()}
}

// SIDEntry is the sids map entry of a local SID.
func SIDEntry(v state.SIDSpec) Seg6xSidEntry {
	sd := v.SID
	e := Seg6xSidEntry{Id: sd.ID, Table: v.Table, Policy: v.Policy}
	if b := model.BehaviorNamed(sd.Action); b != nil {
		e.Action = b.Code
	}
	if sd.VLAN != 0 {
		e.Flags |= uint8(Seg6xSidFlagsSID_F_VLAN)
		e.Vlan = sd.VLAN
	}
	if sd.HasFlavor(model.FlavorNextCSID) {
		e.Flags |= uint8(Seg6xSidFlagsSID_F_NEXT_CSID)
		e.LbBytes, e.NfBytes = sd.LBLen/8, sd.NFLen/8
	}
	for f, bit := range map[string]Seg6xSidFlags{model.FlavorPSP: Seg6xSidFlagsSID_F_PSP,
		model.FlavorUSP: Seg6xSidFlagsSID_F_USP, model.FlavorUSD: Seg6xSidFlagsSID_F_USD} {
		if sd.HasFlavor(f) {
			e.Flags |= uint8(bit)
		}
	}
	if v.Bind != 0 { // a plugin SID: its program slot; policy is its configuration's slot
		e.Plugin, e.Policy = uint16(v.Plugin), v.Bind
	}
	switch {
	case sd.NH4.IsValid():
		a := sd.NH4.As4()
		copy(e.Nh[:], a[:])
	case sd.NH6.IsValid():
		e.Nh = sd.NH6.As16()
	}
	return e
}

// OuterHeader builds the IPv6 header and SRH a policy prepends. Per packet the data plane only
// patches the payload length, traffic class and flow label.
//
// H.Encaps: SRH with all n SIDs, Segment List[0] = last SID, segments left = last entry = n-1, and
// the destination is the first SID. H.Encaps.Red: the first SID is only in the destination; the SRH
// holds the other n-1 (segments left stays n-1) and is left out entirely when n = 1.
func OuterHeader(p state.PolicySpec) (Seg6xEncapPolicy, error) {
	var pol Seg6xEncapPolicy
	n := len(p.Segs)
	if n == 0 || n > model.MaxSegments {
		return pol, fmt.Errorf("policy %d: %d SIDs", p.ID, n)
	}
	if !p.Src.IsValid() {
		return pol, fmt.Errorf("policy %d: no source address", p.ID)
	}
	inner := uint8(4) // IPPROTO_IPIP
	if p.Inner6 {
		inner = 41 // IPPROTO_IPV6
	}
	listed := p.Segs // in SRH order reversed below
	if p.Mode == model.ModeEncapRed {
		listed = p.Segs[1:]
	}
	h := pol.Hdr[:0]
	h = append(h, 0x60, 0, 0, 0, 0, 0, 0, 0)
	hopLimit := p.HopLimit
	if hopLimit == 0 {
		hopLimit = model.DefaultHopLimit
	}
	h[7] = hopLimit
	s16 := p.Src.As16()
	d16 := p.Segs[0].As16()
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
