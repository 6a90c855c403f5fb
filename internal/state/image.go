package state

// image.go: what the data plane holds for the objects of the running state, in the model's terms
// (dataplane.go): tenant and bridge port entries (route table version + prefix-length bitmaps), routes,
// policies, SIDs with their tables resolved, the VXLAN entries (vxlanimage.go); and the whole image used to reconcile a data plane. The data plane
// encodes them (internal/dataplane).

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
)

// setPlens sets the prefix-length bitmaps of v from route counts per length.
func setPlens(v *PortSpec, plens *[2][129]uint32) {
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

// tenantSpec is the tenant part of a port entry: the route table version and its prefix lengths, the
// gateway addresses and MSS clamping of tenant t.
func tenantSpec(tableID uint32, plens *[2][129]uint32, t *model.Tenant) PortSpec {
	v := PortSpec{Tenant: true, TableID: tableID, KernelFallback: t.KernelFallback}
	for _, a := range t.Gateway {
		if a.Is4() {
			v.Gateway4 = a
		} else {
			v.Gateway6 = a
		}
	}
	v.MSSClamp, _ = model.MSSClampValue(t.MSSClamp) // validated before
	setPlens(&v, plens)
	return v
}

// portImage computes the port entries for interfaces and tenants (Classify), with each tenant's part
// of the entry from tenantPart, and whether fabric ports check the sources of packets to local SIDs.
func portImage(ifaces []model.Interface, tenants []model.Tenant, vxlans []model.VXLAN, tenantPart func(name string) PortSpec, checkSources bool) map[PortKey]PortSpec {
	im := map[PortKey]PortSpec{}
	for _, pc := range model.Classify(ifaces, tenants, vxlans) {
		var v PortSpec
		if pc.Side == model.SideBridge {
			// Every VLAN, and VLAN 0 as well: an untagged frame (the common case) finds its entry in
			// one lookup instead of missing its own first.
			bs := PortSpec{Bridge: true, BridgeLearning: pc.Learning, TableID: uint32(pc.BridgeIfindex)}
			im[PortKey{Ifindex: uint32(pc.Ifindex), VLAN: VLANAnyKey}] = bs
			im[PortKey{Ifindex: uint32(pc.Ifindex), VLAN: 0}] = bs
			continue
		}
		if pc.Tenant != "" {
			v = tenantPart(pc.Tenant)
		}
		if pc.Side == model.SideFabric {
			v.SIDs = true
			v.SIDSources = checkSources
		} else {
			v.Boundary = true
		}
		k := PortKey{Ifindex: uint32(pc.Ifindex), VLAN: VLANAnyKey}
		if pc.VLAN != model.VLANAny {
			k.VLAN = uint16(pc.VLAN)
		}
		im[k] = v
	}
	return im
}

// policySpec is the data plane's form of policy p.
func policySpec(p *policy) PolicySpec {
	return PolicySpec{ID: p.id, Inner6: p.inner6, Mode: p.mode, Segs: p.segs, Src: p.usedSrc, HopLimit: p.hopLimit}
}

// sidSpec is sd with its table resolved (a tenant's table through tenantTable).
func sidSpec(sd model.SID, tenantTable func(string) uint32, pluginCfg map[uint32][]byte, plugins map[string]*pluginRT,
	pluginPolicies map[uint32][]pluginPolicy) SIDSpec {
	v := SIDSpec{SID: sd, Table: sd.Table, Policy: sd.Policy}
	if sd.Tenant != "" {
		v.Table = tenantTable(sd.Tenant)
	}
	if sd.Bind != 0 {
		v.Plugin, v.Bind, v.Config = sd.PluginSlot, sd.Bind, pluginCfg[sd.Bind]
		if pr := plugins[sd.Plugin]; pr != nil {
			v.Digest, v.Counters = pr.Digest, pr.obj.Counters
		}
		for _, pp := range pluginPolicies[sd.Bind] {
			v.Policies = append(v.Policies, pp.ID)
		}
	}
	return v
}

func (r *runtime) tenantTable(name string) uint32 {
	if t := r.tenants[name]; t != nil {
		return t.Table
	}
	return 0
}

// image is every data plane entry of the running state.
func (r *runtime) image() *Image {
	im := &Image{
		SIDSpace:   append([]netip.Prefix(nil), r.domain.Locators...),
		SIDSources: append([]netip.Prefix(nil), r.domain.Sources...),
		Policies:   make(map[uint32]PolicySpec, len(r.polByID)),
		SIDs:       make(map[netip.Prefix]SIDSpec, len(r.sids)),
		Routes:     make(map[RouteKey]uint32, r.nroutes[0]+r.nroutes[1]),
	}
	im.Interfaces = r.ifaceList()
	slices.SortFunc(im.Interfaces, func(a, b model.Interface) int { return strings.Compare(a.Name, b.Name) })
	for _, it := range im.Interfaces {
		im.TxPorts = append(im.TxPorts, uint32(it.Ifindex))
	}
	for id, p := range r.polByID {
		im.Policies[id] = policySpec(p)
	}
	im.Groups = make(map[uint32]GroupSpec, 2*len(r.named))
	for _, n := range r.named {
		for fam := range 2 {
			im.Groups[n.groups[fam].id&^model.GroupFlag] = GroupSpec{Buckets: n.buckets(fam)}
		}
	}
	im.VX = vxlanImage(r.vxlanList())
	im.Ports = portImage(r.ifaceList(), r.tenantList(), r.vxlanList(), func(name string) PortSpec {
		t := r.tenants[name]
		return tenantSpec(t.tableID, &t.plens, &t.Tenant)
	}, len(r.domain.Sources) > 0)
	for _, t := range r.tenants {
		for pfx, id := range t.routes.all {
			im.Routes[RouteKey{TableID: t.tableID, Prefix: pfx}] = id
		}
	}
	for _, sd := range r.sids {
		im.SIDs[sd.Prefix()] = sidSpec(sd, r.tenantTable, r.pluginCfg, r.plugins, r.pluginPolicies)
	}
	im.Plugins = make(map[uint32]PluginSpec, len(r.plugins))
	for _, pr := range r.plugins {
		im.Plugins[pr.slot] = pluginSpec(pr)
	}
	return im
}
