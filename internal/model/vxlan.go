package model

// vxlan.go: the kernel's VXLAN overlays: a VXLAN device with an IPv6 underlay, the bridge it
// is a port of, and the two forwarding tables the fast path needs from them (the device's own: MAC ->
// remote VTEP; the bridge's: MAC -> local port). Only the kernel mirror makes them (origin kernel):
// the kernel (ip link, bridge fdb, FRR's EVPN) is where they are configured, seg6x follows. One
// object per device, its tables inside, replaced whole by each commit; the store keeps them
// (internal/state: ops_vxlan.go; the state file without the MAC tables: savedVXLAN) and the data plane
// writes them into its VXLAN maps (internal/dataplane/encode_vxlan.go).

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// VXLAN is one VXLAN device of the kernel and what the fast path needs of it and of its bridge.
type VXLAN struct {
	Dev     string `json:"dev"`
	Ifindex int    `json:"ifindex,omitempty"`
	VNI     uint32 `json:"vni"`
	// Local is the underlay source (the device's local address); Port the UDP destination port.
	Local netip.Addr `json:"local"`
	Port  uint16     `json:"port"`
	// SrcPortLow and SrcPortHigh bound the UDP source ports (both 0: the namespace's local port range).
	SrcPortLow  uint16 `json:"src_port_low,omitempty"`
	SrcPortHigh uint16 `json:"src_port_high,omitempty"`
	TTL         uint8  `json:"ttl,omitempty"`      // outer hop limit (0: the route's or interface's)
	TOS         uint8  `json:"tos,omitempty"`      // outer traffic class (its ECN bits always come from the inner packet)
	Label       uint32 `json:"label,omitempty"`    // outer flow label
	Learning    bool   `json:"learning,omitempty"` // the device learns remote VTEPs from what it receives
	// PortLearning: the bridge learns source MACs on the device's port.
	PortLearning bool `json:"port_learning,omitempty"`
	MTU          int  `json:"mtu,omitempty"`
	// Bridge is the bridge the device is a port of.
	Bridge        string `json:"bridge"`
	BridgeIfindex int    `json:"bridge_ifindex,omitempty"`
	// Ports are the bridge's other ports that forward (the VXLAN device aside): frames from those of
	// them seg6x is attached to are encapsulated by the fast path.
	Ports []BridgePort `json:"ports,omitempty"`
	// Remotes is the default remote list (the all-zeros MAC entries): where broadcast, unknown
	// unicast and multicast go, by head-end replication (the kernel's job).
	Remotes []netip.Addr `json:"remotes,omitempty"`
	// RemoteMACs are the device's own forwarding entries: a MAC behind a remote VTEP.
	RemoteMACs []RemoteMAC `json:"remote_macs,omitempty"`
	// LocalMACs are the bridge's entries for its other ports: a MAC behind a local port.
	LocalMACs []LocalMAC `json:"local_macs,omitempty"`
	// TunnelMACs are the bridge's entries for the device's port that the device has no entry of
	// its own for: frames to them go to the default remotes.
	TunnelMACs []TunnelMAC `json:"tunnel_macs,omitempty"`
	Origin     Origin      `json:"origin,omitempty"`
}

// RemoteMAC is a MAC address behind a remote VTEP.
type RemoteMAC struct {
	MAC    string     `json:"mac"`
	Remote netip.Addr `json:"remote"`
	VNI    uint32     `json:"vni,omitempty"`  // 0: the device's
	Port   uint16     `json:"port,omitempty"` // 0: the device's
	// Bridged: the bridge's table sends the MAC to the VXLAN device too (without it the bridge floods).
	Bridged bool `json:"bridged,omitempty"`
	// Dynamic: learned (by the device or, when Bridged, the bridge): the entry ages out unless frames
	// from the MAC reach the kernel.
	Dynamic bool `json:"dynamic,omitempty"`
}

// TunnelMAC is a MAC the bridge has learned (or was given) on the VXLAN device's port.
type TunnelMAC struct {
	MAC     string `json:"mac"`
	Dynamic bool   `json:"dynamic,omitempty"`
}

// BridgePort is one port of the bridge besides the VXLAN device.
type BridgePort struct {
	Name     string `json:"name"`
	Ifindex  int    `json:"ifindex,omitempty"`
	MTU      int    `json:"mtu,omitempty"`
	Learning bool   `json:"learning,omitempty"` // the bridge learns source MACs on it
}

// LocalMAC is a MAC address behind a local port of the bridge.
type LocalMAC struct {
	MAC     string `json:"mac"`
	Port    string `json:"port"`
	Ifindex int    `json:"ifindex,omitempty"`
	VLAN    uint16 `json:"vlan,omitempty"`
	// Local: the node's own address on that port (frames to it are the node's, not forwarded).
	Local bool `json:"local,omitempty"`
	// Dynamic: learned by the bridge: it ages out unless frames from the MAC reach the kernel.
	Dynamic bool `json:"dynamic,omitempty"`
}

// Limits of one VXLAN object (bounds for what a mirror or a bad message can make the store hold).
const (
	MaxVXLANRemotes = 1024
	MaxVXLANMACs    = 1 << 16
	maxVNI          = 1<<24 - 1
)

// VXLANObj names a VXLAN object in errors and diffs.
func VXLANObj(v *VXLAN) string { return fmt.Sprintf("vxlan %q", v.Dev) }

// ValidateVXLAN checks one VXLAN object.
func ValidateVXLAN(v *VXLAN, add func(error)) {
	obj := VXLANObj(v)
	bad := func(field, format string, args ...any) { add(FieldErr(obj, field, format, args...)) }
	if v.Dev == "" {
		bad("dev", "a VXLAN device needs its name")
	}
	if v.VNI > maxVNI {
		bad("vni", "%d is beyond 24 bits", v.VNI)
	}
	if !v.Local.Is6() || v.Local.Is4In6() || !v.Local.IsGlobalUnicast() || v.Local.IsLinkLocalUnicast() {
		bad("local", "%v is not an IPv6 unicast underlay address", v.Local)
	}
	if v.Port == 0 {
		bad("port", "the UDP destination port is 0")
	}
	if v.SrcPortHigh != 0 && v.SrcPortLow >= v.SrcPortHigh {
		bad("src_port_low", "source port range %d-%d is empty", v.SrcPortLow, v.SrcPortHigh)
	}
	if v.Label > 0xFFFFF {
		bad("label", "%d is beyond 20 bits", v.Label)
	}
	if v.Bridge == "" {
		bad("bridge", "the device is no bridge port")
	}
	if len(v.Remotes) > MaxVXLANRemotes {
		bad("remotes", "%d remotes: at most %d", len(v.Remotes), MaxVXLANRemotes)
	}
	for _, r := range v.Remotes {
		if !vtepAddr(r) {
			bad("remotes", "%v is not an IPv6 unicast VTEP address", r)
		}
	}
	if n := len(v.RemoteMACs) + len(v.LocalMACs) + len(v.TunnelMACs); n > MaxVXLANMACs {
		bad("remote_macs", "%d MACs: at most %d", n, MaxVXLANMACs)
		return
	}
	for _, p := range v.Ports {
		if p.Name == "" || p.Name == v.Dev || p.Name == v.Bridge {
			bad("ports", "%q is no other port of bridge %s", p.Name, v.Bridge)
		}
	}
	seen := map[string]string{}
	mac := func(field, m string, vlan uint16, what string) {
		hw, err := net.ParseMAC(m)
		switch {
		case err != nil || len(hw) != 6:
			bad(field, "%q is not an Ethernet MAC address", m)
			return
		case hw[0]&1 != 0:
			bad(field, "%s is a multicast MAC", m)
		}
		k := fmt.Sprintf("%d %s", vlan, hw)
		if prev, ok := seen[k]; ok {
			bad(field, "%s is %s and %s", m, prev, what)
		}
		seen[k] = what
	}
	for _, r := range v.RemoteMACs {
		mac("remote_macs", r.MAC, 0, "behind "+r.Remote.String())
		if !vtepAddr(r.Remote) {
			bad("remote_macs", "%s: %v is not an IPv6 unicast VTEP address", r.MAC, r.Remote)
		}
		if r.VNI > maxVNI {
			bad("remote_macs", "%s: VNI %d is beyond 24 bits", r.MAC, r.VNI)
		}
	}
	for _, m := range v.TunnelMACs {
		mac("tunnel_macs", m.MAC, 0, "on the VXLAN port")
	}
	for _, l := range v.LocalMACs {
		if l.Port == "" || l.Port == v.Dev && !l.Local { // the device's own address is the node's
			bad("local_macs", "%s: %q is no local port", l.MAC, l.Port)
		}
		if l.VLAN > 4094 {
			bad("local_macs", "%s: VLAN %d", l.MAC, l.VLAN)
		}
		if !l.Local {
			mac("local_macs", l.MAC, l.VLAN, "on port "+l.Port)
		} else if _, err := net.ParseMAC(l.MAC); err != nil {
			bad("local_macs", "%q is not an Ethernet MAC address", l.MAC)
		}
	}
}

func vtepAddr(a netip.Addr) bool {
	return a.Is6() && !a.Is4In6() && a.IsGlobalUnicast() && !a.IsLinkLocalUnicast()
}

// CloneVXLAN copies v's lists (objects in the store share nothing with their callers).
func CloneVXLAN(v VXLAN) VXLAN {
	v.Remotes = slices.Clone(v.Remotes)
	v.RemoteMACs = slices.Clone(v.RemoteMACs)
	v.LocalMACs = slices.Clone(v.LocalMACs)
	v.TunnelMACs = slices.Clone(v.TunnelMACs)
	v.Ports = slices.Clone(v.Ports)
	return v
}

// NormalizeVXLAN writes MACs in one form and sorts the lists, so equal tables compare equal.
func NormalizeVXLAN(v *VXLAN) {
	canon := func(m string) string {
		if hw, err := net.ParseMAC(m); err == nil {
			return hw.String()
		}
		return m
	}
	for i := range v.RemoteMACs {
		v.RemoteMACs[i].MAC = canon(v.RemoteMACs[i].MAC)
	}
	for i := range v.LocalMACs {
		v.LocalMACs[i].MAC = canon(v.LocalMACs[i].MAC)
	}
	for i := range v.TunnelMACs {
		v.TunnelMACs[i].MAC = canon(v.TunnelMACs[i].MAC)
	}
	slices.SortFunc(v.TunnelMACs, func(a, b TunnelMAC) int { return strings.Compare(a.MAC, b.MAC) })
	slices.SortFunc(v.Ports, func(a, b BridgePort) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(v.Remotes, netip.Addr.Compare)
	v.Remotes = slices.Compact(v.Remotes)
	slices.SortFunc(v.RemoteMACs, func(a, b RemoteMAC) int { return strings.Compare(a.MAC, b.MAC) })
	slices.SortFunc(v.LocalMACs, func(a, b LocalMAC) int {
		if a.VLAN != b.VLAN {
			return int(a.VLAN) - int(b.VLAN)
		}
		if c := strings.Compare(a.MAC, b.MAC); c != 0 {
			return c
		}
		return strings.Compare(a.Port, b.Port)
	})
}

// SameVXLAN reports whether two VXLAN objects hold the same (normalized) configuration and tables.
func SameVXLAN(a, b VXLAN) bool {
	return a.Dev == b.Dev && a.Ifindex == b.Ifindex && a.VNI == b.VNI && a.Local == b.Local && a.Port == b.Port &&
		a.SrcPortLow == b.SrcPortLow && a.SrcPortHigh == b.SrcPortHigh && a.TTL == b.TTL && a.TOS == b.TOS && a.Label == b.Label &&
		a.Learning == b.Learning && a.PortLearning == b.PortLearning && a.MTU == b.MTU && a.Bridge == b.Bridge &&
		a.BridgeIfindex == b.BridgeIfindex && slices.Equal(a.Ports, b.Ports) &&
		slices.Equal(a.Remotes, b.Remotes) && slices.Equal(a.RemoteMACs, b.RemoteMACs) &&
		slices.Equal(a.LocalMACs, b.LocalMACs) && slices.Equal(a.TunnelMACs, b.TunnelMACs) && a.Origin == b.Origin
}
