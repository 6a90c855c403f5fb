package dataplane

// encode_vxlan.go: the exact contents of the VXLAN map entries (bpf/vxlan.h) for the store's VXLAN
// entries (state/vxlanimage.go). Fields the program compares with packet bytes are kept in network
// order (ports, VNI as the VXLAN header's second word, the outer IPv6 header's first word).

import (
	"encoding/binary"

	"github.com/seg6x/seg6x/internal/state"
)

// be16 / be32 are v in network order as a native integer (how the program reads packet fields).
func be16(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

func be32(v uint32) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return binary.NativeEndian.Uint32(b[:])
}

// vniWord is a VNI as the VXLAN header's second word.
func vniWord(vni uint32) uint32 { return be32(vni << 8) }

func vxDev(d state.VXDevSpec) Seg6xVxDev {
	out := Seg6xVxDev{Local: d.Local.As16(), Ifindex: d.Ifindex, Bridge: d.Bridge, Vni: vniWord(d.VNI),
		Flow: be32(6<<28 | uint32(d.TOS&^3)<<20 | d.Label&0xFFFFF), Port: be16(d.Port), SportLo: d.SrcPortLow,
		SportSpan: d.SrcPortSpan, Mtu: d.MTU, Ttl: d.HopLimit}
	if d.Learning {
		out.Flags |= uint8(Seg6xVxDevFlagsVX_F_LEARNING)
	}
	if d.PortLearning {
		out.Flags |= uint8(Seg6xVxDevFlagsVX_F_PORT_LEARNING)
	}
	return out
}

func vxRxKey(k state.VXRxKey) Seg6xVxRxKey {
	out := Seg6xVxRxKey{Local: k.Local.As16(), Port: be16(k.Port), Vni: vniWord(k.VNI)}
	if k.VNI == state.VXVNIAny {
		out.Vni = state.VXVNIAny
	}
	return out
}

func vxRemoteKey(k state.VXRemoteKey) Seg6xVxRemoteKey {
	return Seg6xVxRemoteKey{Dev: k.Dev, Addr: k.Remote.As16()}
}

func vxMACKey(k state.VXMACKey) Seg6xVxMacKey { return Seg6xVxMacKey{Bridge: k.Bridge, Mac: k.MAC} }

func vxMAC(m state.VXMACSpec) Seg6xVxMac {
	out := Seg6xVxMac{Ifindex: m.Ifindex, Mtu: m.MTU}
	switch m.Kind {
	case state.VXMACLocal:
		out.Kind = uint8(Seg6xVxMacKindVX_MAC_LOCAL)
	case state.VXMACNode:
		out.Kind = uint8(Seg6xVxMacKindVX_MAC_NODE)
	case state.VXMACTunnel:
		out.Kind = uint8(Seg6xVxMacKindVX_MAC_TUNNEL)
		out.Port, out.Vni = be16(m.Port), vniWord(m.VNI)
		if m.Remote.IsValid() {
			out.Flags |= uint8(Seg6xVxMacFlagsVX_MAC_F_REMOTE)
			out.Remote = m.Remote.As16()
		}
	}
	if m.Dynamic {
		out.Flags |= uint8(Seg6xVxMacFlagsVX_MAC_F_DYNAMIC)
	}
	return out
}
