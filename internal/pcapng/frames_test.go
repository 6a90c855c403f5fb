// Ethernet frames for the tshark test, laid out byte by byte: an SRv6 packet (IPv6 + SRH with two
// segments + inner IPv4/UDP) and a plain IPv4/UDP packet.
package pcapng

import (
	"encoding/binary"
	"net/netip"
)

var (
	macDst = []byte{0x02, 0, 0, 0, 0, 0x01}
	macSrc = []byte{0x02, 0, 0, 0, 0, 0x02}
)

// srv6Frame is Ethernet / IPv6 2001:db8:1::1 -> dst, next header 43 / SRH type 4, next header 4,
// segments [fc00:0:3::100, fc00:0:2::1], segments left segLeft / IPv4 198.18.0.1 -> 198.19.0.1 /
// UDP 1234 -> 5678 / "seg6x": 14 + 40 + 40 + 20 + 8 + 5 = 127 bytes.
func srv6Frame(segLeft byte, dst string) []byte {
	inner := ipv4UDP("198.18.0.1", "198.19.0.1", 1234, 5678, []byte("seg6x"))
	srh := []byte{
		4,       // next header: IPv4
		4,       // header extension length: 2 segments * 16 / 8
		4,       // routing type 4: segment routing header
		segLeft, // segments left
		1,       // last entry
		0,       // flags
		0, 0,    // tag
	}
	srh = append(srh, addr("fc00:0:3::100")...) // segment list[0]: the last segment
	srh = append(srh, addr("fc00:0:2::1")...)   // segment list[1]: the first segment
	ip6 := []byte{0x60, 0, 0, 0}                // version 6, traffic class 0, flow label 0
	ip6 = binary.BigEndian.AppendUint16(ip6, uint16(len(srh)+len(inner)))
	ip6 = append(ip6, 43, 64) // next header: routing, hop limit
	ip6 = append(ip6, addr("2001:db8:1::1")...)
	ip6 = append(ip6, addr(dst)...)
	return cat(macDst, macSrc, []byte{0x86, 0xdd}, ip6, srh, inner)
}

// ipv4UDPFrame is Ethernet / IPv4 198.18.0.2 -> 198.19.0.2 / UDP 1235 -> 5678 / "seg6x": 47 bytes.
func ipv4UDPFrame() []byte {
	return cat(macDst, macSrc, []byte{0x08, 0x00}, ipv4UDP("198.18.0.2", "198.19.0.2", 1235, 5678, []byte("seg6x")))
}

// ipv4UDP is an IPv4 header (with its checksum) and a UDP header (checksum 0: none) before payload.
func ipv4UDP(src, dst string, sport, dport uint16, payload []byte) []byte {
	udp := binary.BigEndian.AppendUint16(nil, sport)
	udp = binary.BigEndian.AppendUint16(udp, dport)
	udp = binary.BigEndian.AppendUint16(udp, uint16(8+len(payload)))
	udp = append(udp, 0, 0)
	ip := []byte{0x45, 0}
	ip = binary.BigEndian.AppendUint16(ip, uint16(20+len(udp)+len(payload)))
	ip = append(ip, 0, 0, 0x40, 0, 64, 17, 0, 0) // id 0, DF, TTL 64, UDP, checksum below
	ip = append(ip, addr(src)...)
	ip = append(ip, addr(dst)...)
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
	return cat(ip, udp, payload)
}

func addr(s string) []byte { return netip.MustParseAddr(s).AsSlice() }
