package testsupport

// packets.go: byte builders for test and benchmark frames: Ethernet (with an 802.1Q tag), IPv4 and
// IPv6 headers, the SRH, UDP, and the checksums over them. Each writes exactly the fields named and
// zeroes the rest, so a caller that needs a field wrong on purpose changes the bytes afterwards.

import (
	"encoding/binary"
	"net/netip"

	"github.com/seg6x/seg6x/tools/pktcheck"
)

// Ethernet is an Ethernet header from src to dst with etype, behind an 802.1Q tag (priority 0) when
// vlan is not 0.
func Ethernet(dst, src []byte, vlan, etype uint16) []byte {
	b := append(append(make([]byte, 0, 18), dst[:6]...), src[:6]...)
	if vlan != 0 {
		b = binary.BigEndian.AppendUint16(b, 0x8100)
		b = binary.BigEndian.AppendUint16(b, vlan&0x0FFF)
	}
	return binary.BigEndian.AppendUint16(b, etype)
}

// IPv4 is an IPv4 header without options; TOS and the fragment fields are 0.
type IPv4 struct {
	Src, Dst   netip.Addr
	TTL, Proto uint8
	ID         uint16
}

// Packet is the header, with its total length and checksum, followed by payload.
func (h IPv4) Packet(payload []byte) []byte {
	b := make([]byte, 20, 20+len(payload))
	b[0], b[8], b[9] = 0x45, h.TTL, h.Proto
	binary.BigEndian.PutUint16(b[2:], uint16(20+len(payload)))
	binary.BigEndian.PutUint16(b[4:], h.ID)
	copy(b[12:], h.Src.AsSlice())
	copy(b[16:], h.Dst.AsSlice())
	FixIPv4Checksum(b)
	return append(b, payload...)
}

// FixIPv4Checksum writes the header checksum of the IPv4 packet ip (header length from its IHL).
func FixIPv4Checksum(ip []byte) {
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], pktcheck.Checksum(ip[:int(ip[0]&0x0F)*4]))
}

// IPv6 is a fixed IPv6 header.
type IPv6 struct {
	Src, Dst             netip.Addr
	NextHeader, HopLimit uint8
	FlowLabel            uint32 // the low 28 bits of the first word: traffic class and flow label
}

// Packet is the header, with its payload length, followed by payload.
func (h IPv6) Packet(payload []byte) []byte {
	b := make([]byte, 40, 40+len(payload))
	binary.BigEndian.PutUint32(b, 6<<28|h.FlowLabel&0x0FFFFFFF)
	binary.BigEndian.PutUint16(b[4:], uint16(len(payload)))
	b[6], b[7] = h.NextHeader, h.HopLimit
	copy(b[8:], h.Src.AsSlice())
	copy(b[24:], h.Dst.AsSlice())
	return append(b, payload...)
}

// SRH is a segment routing header without TLVs; list is in packet order (Segment List[0], the last
// segment, first).
func SRH(nextHeader uint8, list []netip.Addr, segmentsLeft uint8) []byte {
	b := []byte{nextHeader, uint8(2 * len(list)), 4, segmentsLeft, uint8(len(list) - 1), 0, 0, 0}
	for _, s := range list {
		b = append(b, s.AsSlice()...)
	}
	return b
}

// UDP is a UDP datagram carrying data, with checksum 0 (none, which IPv4 allows); see L4Checksum.
func UDP(sport, dport uint16, data []byte) []byte {
	b := make([]byte, 8, 8+len(data))
	binary.BigEndian.PutUint16(b[0:], sport)
	binary.BigEndian.PutUint16(b[2:], dport)
	binary.BigEndian.PutUint16(b[4:], uint16(8+len(data)))
	return append(b, data...)
}

// L4Checksum is the checksum of the TCP, UDP, ICMP or ICMPv6 segment seg (its checksum field 0) sent
// from src to dst with protocol proto: over the pseudo-header, except for ICMP (IPv4), which has none.
func L4Checksum(src, dst netip.Addr, proto uint8, seg []byte) uint16 {
	if proto == 1 {
		return pktcheck.Checksum(seg)
	}
	b := append(append(src.AsSlice(), dst.AsSlice()...), 0, proto)
	b = binary.BigEndian.AppendUint16(b, uint16(len(seg)))
	return pktcheck.Checksum(append(b, seg...))
}
