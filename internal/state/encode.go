package state

// encode.go: the exact contents of the BPF map entries for the objects of the running state: tenant
// port entries (route table version + prefix-length bitmaps), route keys, the prebuilt outer IPv6 +
// SRH header of each policy, SID entries; and the whole image used to reconcile pinned maps.

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/seg6x/seg6x/internal/dataplane"
)

// plensVal sets the prefix-length bitmaps of v from route counts per length.
func plensVal(v *dataplane.Seg6xPortVal, plens *[2][129]uint32) {
	for n := 0; n <= 32; n++ {
		if plens[0][n] > 0 {
			v.Plens4 |= 1 << n
		}
	}
	for n := 0; n <= 128; n++ {
		if plens[1][n] > 0 {
			v.Plens6[n/64] |= 1 << (n % 64)
		}
	}
}

// PORT_F_* and PORT_VLAN_ANY (the key of an interface's entry for every VLAN without its own), as
// bpf2go generated them from bpf/structs.h.
const (
	portFlagSIDs           = uint32(dataplane.Seg6xPortFlagsPORT_F_SIDS)
	portFlagBoundary       = uint32(dataplane.Seg6xPortFlagsPORT_F_BOUNDARY)
	portFlagTenant         = uint32(dataplane.Seg6xPortFlagsPORT_F_TENANT)
	portFlagSIDSources     = uint32(dataplane.Seg6xPortFlagsPORT_F_SID_SOURCES)
	portFlagKernelFallback = uint32(dataplane.Seg6xPortFlagsPORT_F_KERNEL_FALLBACK)
	portVLANAny            = uint16(dataplane.Seg6xPortVlanPORT_VLAN_ANY)
	sidFlagVLAN            = uint8(dataplane.Seg6xSidFlagsSID_F_VLAN)
)

// tenantVal is the tenant part of a port entry: the route table version and its prefix lengths, the
// gateway addresses and MSS clamping of tenant t.
func tenantVal(tableID uint32, plens *[2][129]uint32, t *Tenant) dataplane.Seg6xPortVal {
	v := dataplane.Seg6xPortVal{TableId: tableID, Flags: portFlagTenant}
	if t.KernelFallback {
		v.Flags |= portFlagKernelFallback
	}
	for _, a := range t.Gateway {
		if a.Is4() {
			b := a.As4()
			v.Gw4 = binary.NativeEndian.Uint32(b[:]) // network order in memory
		} else {
			v.Gw6 = a.As16()
		}
	}
	v.MssClamp, _ = MSSClampValue(t.MSSClamp) // validated before
	plensVal(&v, plens)
	return v
}

type portKeyT = dataplane.Seg6xPortKey
type portValT = dataplane.Seg6xPortVal

// portImage computes the ports map for interfaces and tenants (Classify), with each tenant's part of
// the entry from tenantPart, and whether fabric ports check the sources of packets to local SIDs.
func portImage(ifaces []Interface, tenants []Tenant, tenantPart func(name string) portValT, checkSources bool) map[portKeyT]portValT {
	im := map[portKeyT]portValT{}
	for _, pc := range Classify(ifaces, tenants) {
		var v portValT
		if pc.Tenant != "" {
			v = tenantPart(pc.Tenant)
		}
		if pc.Side == SideFabric {
			v.Flags |= portFlagSIDs
			if checkSources {
				v.Flags |= portFlagSIDSources
			}
		} else {
			v.Flags |= portFlagBoundary
		}
		k := portKeyT{Ifindex: uint32(pc.Ifindex), Vlan: portVLANAny}
		if pc.VLAN != VLANAny {
			k.Vlan = uint16(pc.VLAN)
		}
		im[k] = v
	}
	return im
}

// lpmKey is an IPv6 prefix as a key of the domain's LPM tries.
func lpmKey(p netip.Prefix) dataplane.Seg6xLpm6Key {
	return dataplane.Seg6xLpm6Key{Prefixlen: uint32(p.Bits()), Addr: p.Addr().As16()}
}

func lpmImage(ps []netip.Prefix) map[dataplane.Seg6xLpm6Key]uint8 {
	im := make(map[dataplane.Seg6xLpm6Key]uint8, len(ps))
	for _, p := range ps {
		im[lpmKey(p)] = 1
	}
	return im
}

func route4Key(table uint32, p netip.Prefix) dataplane.Seg6xRoute4Key {
	return dataplane.Seg6xRoute4Key{TableId: table, Plen: uint8(p.Bits()), Addr: p.Addr().As4()}
}

func route6Key(table uint32, p netip.Prefix) dataplane.Seg6xRoute6Key {
	return dataplane.Seg6xRoute6Key{TableId: table, Plen: uint8(p.Bits()), Addr: p.Addr().As16()}
}

func sidEntry(sd SID, tenantTable func(string) uint32) dataplane.Seg6xSidEntry {
	e := dataplane.Seg6xSidEntry{Id: sd.ID, Table: sd.Table}
	if b := BehaviorNamed(sd.Action); b != nil {
		e.Action = b.Code
	}
	if sd.Tenant != "" {
		e.Table = tenantTable(sd.Tenant)
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
	return e
}

// OuterHeader builds the IPv6 header and SRH a policy prepends. Per packet the data plane only
// patches the payload length, traffic class and flow label.
//
// H.Encaps: SRH with all n SIDs, Segment List[0] = last SID, segments left = last entry = n-1, and
// the destination is the first SID. H.Encaps.Red: the first SID is only in the destination; the SRH
// holds the other n-1 (segments left stays n-1) and is left out entirely when n = 1.
func outerHeader(p *policy) (dataplane.Seg6xEncapPolicy, error) {
	var pol dataplane.Seg6xEncapPolicy
	n := len(p.segs)
	if n == 0 || n > MaxSegments {
		return pol, fmt.Errorf("policy %d: %d SIDs", p.id, n)
	}
	if !p.usedSrc.IsValid() {
		return pol, fmt.Errorf("policy %d: no source address", p.id)
	}
	inner := uint8(4) // IPPROTO_IPIP
	if p.inner6 {
		inner = 41 // IPPROTO_IPV6
	}
	listed := p.segs // in SRH order reversed below
	if p.mode == ModeEncapRed {
		listed = p.segs[1:]
	}
	h := pol.Hdr[:0]
	h = append(h, 0x60, 0, 0, 0, 0, 0, 0, 0)
	hopLimit := p.hopLimit
	if hopLimit == 0 {
		hopLimit = DefaultHopLimit
	}
	h[7] = hopLimit
	s16 := p.usedSrc.As16()
	d16 := p.segs[0].As16()
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

// Image is what the maps of a data plane hold for one running state.
type Image struct {
	Ports      map[portKeyT]portValT
	SIDSpace   map[dataplane.Seg6xLpm6Key]uint8
	SIDSources map[dataplane.Seg6xLpm6Key]uint8
	Routes4    map[dataplane.Seg6xRoute4Key]dataplane.Seg6xEncapVal
	Routes6    map[dataplane.Seg6xRoute6Key]dataplane.Seg6xEncapVal
	Policies   map[uint32]dataplane.Seg6xEncapPolicy
	SIDs       map[[16]byte]dataplane.Seg6xSidEntry
	TxPorts    map[uint32]uint32
}

func (r *runtime) tenantTable(name string) uint32 {
	if t := r.tenants[name]; t != nil {
		return t.Table
	}
	return 0
}

// image computes every map entry of the running state.
func (r *runtime) image() (*Image, error) {
	im := &Image{
		SIDSpace:   lpmImage(r.domain.Locators),
		SIDSources: lpmImage(r.domain.Sources),
		Routes4:    make(map[dataplane.Seg6xRoute4Key]dataplane.Seg6xEncapVal, r.nroutes[0]),
		Routes6:    make(map[dataplane.Seg6xRoute6Key]dataplane.Seg6xEncapVal, r.nroutes[1]),
		Policies:   map[uint32]dataplane.Seg6xEncapPolicy{},
		SIDs:       map[[16]byte]dataplane.Seg6xSidEntry{},
		TxPorts:    map[uint32]uint32{},
	}
	for _, it := range r.ifaces {
		im.TxPorts[uint32(it.Ifindex)] = uint32(it.Ifindex)
	}
	for id, p := range r.polByID {
		h, err := outerHeader(p)
		if err != nil {
			return nil, err
		}
		im.Policies[id] = h
	}
	im.Ports = portImage(r.ifaceList(), r.tenantList(), func(name string) portValT {
		t := r.tenants[name]
		return tenantVal(t.tableID, &t.plens, &t.Tenant)
	}, len(r.domain.Sources) > 0)
	for _, t := range r.tenants {
		for pfx, pol := range t.routes {
			if pfx.Addr().Is4() {
				im.Routes4[route4Key(t.tableID, pfx)] = dataplane.Seg6xEncapVal{PolicyId: pol.id}
			} else {
				im.Routes6[route6Key(t.tableID, pfx)] = dataplane.Seg6xEncapVal{PolicyId: pol.id}
			}
		}
	}
	for addr, sd := range r.sids {
		im.SIDs[addr.As16()] = sidEntry(sd, r.tenantTable)
	}
	return im, nil
}
