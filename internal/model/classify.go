package model

// classify.go: which side of the SR domain boundary each (interface, VLAN) is on. The data plane's
// ports map is written from this, and `seg6x show interfaces` prints it, so both say the same.

import (
	"fmt"
	"slices"
	"strings"
)

// VLANAny stands for every VLAN of an interface that has no entry of its own (and untagged frames,
// unless VLAN 0 has one).
const VLANAny = -1

// Sides of the boundary.
const (
	SideFabric = "fabric" // local SIDs are processed
	SideAccess = "access" // tenant traffic: SIDs, locators and SRHs are refused
	SideBridge = "bridge" // a port of a bridge with a followed VXLAN device: its frames are bridged
)

// PortClass says how frames from one (interface, VLAN) are treated.
type PortClass struct {
	Dev     string `json:"dev"`
	Ifindex int    `json:"ifindex"`
	VLAN    int    `json:"vlan"`             // 0 untagged, 1-4094, or VLANAny
	Side    string `json:"side"`             // SideFabric or SideAccess
	Tenant  string `json:"tenant,omitempty"` // the tenant whose traffic is encapsulated ("" none)
	Why     string `json:"why"`              // what made it so
	// SideBridge: the bridge (its ifindex is the fast path's bridge id) and whether it learns
	// source MACs on this port.
	Bridge        string `json:"bridge,omitempty"`
	BridgeIfindex int    `json:"bridge_ifindex,omitempty"`
	Learning      bool   `json:"learning,omitempty"`
}

// EffectiveRole is the side of an interface's frames that no tenant port claims: fabric or access.
func EffectiveRole(it Interface, tenants []Tenant) (side, why string) {
	switch it.Role {
	case RoleFabric:
		return SideFabric, "role fabric"
	case RoleAccess:
		return SideAccess, "role access"
	}
	for _, t := range tenants {
		if t.Origin == OriginKernel {
			continue
		}
		for _, p := range t.Ports {
			if p.Dev == it.Name {
				return SideAccess, "role auto: tenant " + t.Name + " has a port on it"
			}
		}
	}
	return SideFabric, "role auto: no tenant port on it"
}

// Classify lists the classes of every port: each tenant port, and each interface's other VLANs
// (VLANAny; plus VLAN 0 of a fabric interface, so untagged fabric frames take one lookup).
//
// An interface that is a port of the bridge of a followed VXLAN device is a bridge port, whatever
// else is configured on it: the kernel's bridge takes its frames before any IP processing, so the
// fast path does too (VXLAN encapsulation, or the kernel).
//
// A tenant port is access. The one exception is a port the kernel mirror made on an interface of role
// auto: the kernel itself accepts SIDs from every interface, so seg6x does too there (fabric, with the
// kernel's tenant table as headend) until the operator declares the interface's role.
func Classify(ifaces []Interface, tenants []Tenant, vxlans []VXLAN) []PortClass {
	byName := map[string]Interface{}
	for _, it := range ifaces {
		byName[it.Name] = it
	}
	var out []PortClass
	bridged := map[string]bool{}
	for _, v := range vxlans {
		for _, p := range v.Ports {
			it, ok := byName[p.Name]
			if !ok || bridged[p.Name] {
				continue
			}
			bridged[p.Name] = true
			out = append(out, PortClass{Dev: p.Name, Ifindex: it.Ifindex, VLAN: VLANAny, Side: SideBridge,
				Bridge: v.Bridge, BridgeIfindex: v.BridgeIfindex, Learning: p.Learning,
				Why: fmt.Sprintf("port of bridge %s (VXLAN device %s)", v.Bridge, v.Dev)})
		}
	}
	tenantVLAN := map[string]map[int]bool{}
	for _, t := range tenants {
		for _, p := range t.Ports {
			if bridged[p.Dev] {
				continue
			}
			pc := PortClass{Dev: p.Dev, Ifindex: p.Ifindex, VLAN: int(p.VLAN), Side: SideAccess, Tenant: t.Name,
				Why: "tenant port"}
			if it, ok := byName[p.Dev]; t.Origin == OriginKernel && (!ok || it.Role == "" || it.Role == RoleAuto) {
				pc.Side, pc.Why = SideFabric, "kernel mirror tenant port on an interface of role auto (as the kernel: SIDs accepted)"
			}
			if tenantVLAN[p.Dev] == nil {
				tenantVLAN[p.Dev] = map[int]bool{}
			}
			tenantVLAN[p.Dev][int(p.VLAN)] = true
			out = append(out, pc)
		}
	}
	for _, it := range ifaces {
		if bridged[it.Name] {
			continue
		}
		side, why := EffectiveRole(it, tenants)
		out = append(out, PortClass{Dev: it.Name, Ifindex: it.Ifindex, VLAN: VLANAny, Side: side, Why: why})
		if side == SideFabric && !tenantVLAN[it.Name][0] {
			out = append(out, PortClass{Dev: it.Name, Ifindex: it.Ifindex, VLAN: 0, Side: side, Why: why})
		}
	}
	slices.SortFunc(out, func(a, b PortClass) int {
		if c := strings.Compare(a.Dev, b.Dev); c != 0 {
			return c
		}
		return vlanOrder(a.VLAN) - vlanOrder(b.VLAN)
	})
	return out
}

// vlanOrder sorts untagged first and "every other VLAN" last.
func vlanOrder(v int) int {
	if v == VLANAny {
		return 1 << 16
	}
	return v
}
