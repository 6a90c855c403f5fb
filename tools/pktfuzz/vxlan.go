package pktfuzz

// vxlan.go: frames for the VXLAN fast path: frames bridged from the bridge port (to remote,
// local, unknown and broadcast MACs, tagged, any size up to beyond the device's MTU, ARP) and VXLAN
// over IPv6 to the local VTEP (from remotes and others, right and wrong flags, VNIs, lengths and
// checksums, inner frames of every kind), before the usual mutations.

import (
	"encoding/binary"
	"net/netip"

	"github.com/seg6x/seg6x/tools/pktcheck"
)

// VXTarget is the VXLAN device the frames aim at.
type VXTarget struct {
	Bridge     string // the bridge port frames are bridged from
	Fabric     string // where VXLAN arrives
	Local      netip.Addr
	Port       uint16
	VNI        uint32
	Remotes    []netip.Addr // VTEPs the device takes VXLAN from
	Others     []netip.Addr // sources that are no remote
	RemoteMACs [][6]byte    // MACs behind remotes
	LocalMACs  [][6]byte    // MACs behind local ports
}

func (g *Gen) macOf(sets ...[][6]byte) []byte {
	switch n := g.r.Intn(10); {
	case n == 0:
		return []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	case n == 1:
		return []byte{0x02, 0x00, 0x5e, 0, byte(g.r.Intn(256)), byte(g.r.Intn(256))}
	case n == 2:
		return []byte{0x33, 0x33, 0, 0, 0, byte(g.r.Intn(256))}
	}
	set := sets[g.r.Intn(len(sets))]
	if len(set) == 0 {
		return g.bytes(6)
	}
	m := set[g.r.Intn(len(set))]
	return m[:]
}

// bridgedFrame is an Ethernet frame between tenant MACs: to a remote MAC mostly, from a local one.
func (g *Gen) bridgedFrame(toRemote bool) []byte {
	v := g.t.VX
	dsts, srcs := v.RemoteMACs, v.LocalMACs
	if !toRemote {
		dsts, srcs = v.LocalMACs, v.RemoteMACs
	}
	dst := g.macOf(dsts, dsts, dsts, v.LocalMACs, v.RemoteMACs)
	src := g.macOf(srcs, srcs, srcs, srcs, dsts)
	var tags []uint16
	if g.chance(0.2) {
		tags = g.tags()
	}
	var etype uint16
	var l3 []byte
	switch k := g.r.Intn(20); {
	case k < 10:
		etype, l3 = 0x0800, g.tenant4()
	case k < 16:
		etype, l3 = 0x86DD, g.tenant6()
	case k < 18:
		etype, l3 = 0x0806, append([]byte{0, 1, 8, 0, 6, 4, 0, byte(1 + g.r.Intn(2))}, g.bytes(20)...)
	default:
		etype, l3 = uint16(g.r.Intn(65536)), g.bytes(g.r.Intn(200))
	}
	if g.chance(0.1) { // up to and beyond a 1500-byte device MTU
		l3 = append(l3, g.bytes(1400+g.r.Intn(200)-len(l3)%1400)...)
	}
	h := append(append([]byte{}, dst...), src...)
	for _, vid := range tags {
		h = binary.BigEndian.AppendUint16(h, 0x8100)
		h = binary.BigEndian.AppendUint16(h, vid)
	}
	return append(binary.BigEndian.AppendUint16(h, etype), l3...)
}

// vxlanPacket is VXLAN over IPv6 (from the Ethernet header) to the local VTEP, mostly well formed.
func (g *Gen) vxlanPacket() []byte {
	v := g.t.VX
	src := v.Remotes[g.r.Intn(len(v.Remotes))]
	if g.chance(0.1) && len(v.Others) > 0 {
		src = v.Others[g.r.Intn(len(v.Others))]
	}
	dst, port, vni := v.Local, v.Port, v.VNI
	if g.chance(0.05) {
		dst = g.addr6()
	}
	if g.chance(0.05) {
		port = uint16(g.r.Intn(65536))
	}
	if g.chance(0.05) {
		vni = uint32(g.r.Intn(1 << 24))
	}
	inner := g.bridgedFrame(false)
	if g.chance(0.05) {
		inner = inner[:g.r.Intn(len(inner))]
	}
	u := make([]byte, 16, 16+len(inner))
	binary.BigEndian.PutUint16(u[0:], uint16(g.r.Intn(65536)))
	binary.BigEndian.PutUint16(u[2:], port)
	binary.BigEndian.PutUint16(u[4:], uint16(16+len(inner)))
	u[8] = 0x08
	if g.chance(0.05) {
		u[8+g.r.Intn(8)] ^= byte(1 + g.r.Intn(255))
	}
	binary.BigEndian.PutUint32(u[12:], vni<<8|binary.BigEndian.Uint32(u[12:])&0xFF)
	u = append(u, inner...)
	s, d := src.As16(), dst.As16()
	switch k := g.r.Intn(20); {
	case k == 0: // zero: refused over IPv6
	case k == 1:
		binary.BigEndian.PutUint16(u[6:], uint16(g.r.Intn(65536)))
	default:
		binary.BigEndian.PutUint16(u[6:], pktcheck.UDP6Checksum(s[:], d[:], u))
	}
	if g.chance(0.05) {
		binary.BigEndian.PutUint16(u[4:], uint16(g.r.Intn(len(u)+16)))
	}
	ip := make([]byte, 40, 40+len(u))
	binary.BigEndian.PutUint32(ip, 6<<28|uint32(g.r.Intn(256))<<20)
	binary.BigEndian.PutUint16(ip[4:], uint16(len(u)))
	ip[6], ip[7] = 17, byte(1+g.r.Intn(255))
	copy(ip[8:], s[:])
	copy(ip[24:], d[:])
	return append(ip, u...)
}

// vxlanFrame is one frame for the VXLAN fast path, and the device it arrives on.
func (g *Gen) vxlanFrame() Frame {
	v := g.t.VX
	if g.chance(0.5) {
		return Frame{Dev: v.Bridge, Data: g.bridgedFrame(true), Kind: "bridged"}
	}
	h := []byte{0x02, 0, 0, 0, 0x01, 0x00, 0x02, 0, 0, 0, byte(g.r.Intn(256)), 0x02, 0x86, 0xdd}
	return Frame{Dev: v.Fabric, Data: append(h, g.vxlanPacket()...), Kind: "vxlan"}
}
