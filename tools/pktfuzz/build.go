package pktfuzz

// build.go: header builders (IPv4 with options and fragments, IPv6 with extension headers and SRHs),
// each able to get a field wrong on purpose.

import (
	"encoding/binary"
	"net/netip"

	"github.com/seg6x/seg6x/tools/pktcheck"
)

// ipv4 builds an IPv4 packet around payload: mostly right, sometimes with options (valid or not),
// fragment fields, a low TTL, another version, a wrong checksum or a wrong total length.
func (g *Gen) ipv4(dst netip.Addr, proto uint8, payload []byte) []byte {
	r := g.r
	var opts []byte
	if g.chance(0.15) {
		switch r.Intn(4) {
		case 0: // NOPs and an end of options list: valid
			opts = []byte{1, 1, 1, 0}
		case 1: // record route, valid layout
			opts = []byte{7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		case 2: // IHL says more than is there (option bytes are the payload's)
			opts = nil
		default:
			opts = g.bytes(4 * (1 + r.Intn(10)))
		}
		for len(opts)%4 != 0 {
			opts = append(opts, 0)
		}
	}
	h := make([]byte, 20+len(opts))
	h[0] = 0x45 + byte(len(opts)/4)
	if opts == nil && g.chance(0.02) {
		h[0] = 0x40 | byte(6+r.Intn(10)) // IHL beyond the header
	}
	h[1] = byte(r.Intn(256))
	binary.BigEndian.PutUint16(h[2:], uint16(len(h)+len(payload)))
	binary.BigEndian.PutUint16(h[4:], uint16(r.Intn(65536)))
	switch {
	case g.chance(0.05):
		binary.BigEndian.PutUint16(h[6:], 0x2000) // more fragments
	case g.chance(0.05):
		binary.BigEndian.PutUint16(h[6:], uint16(1+r.Intn(0x1FFF))) // a later fragment
	case g.chance(0.5):
		binary.BigEndian.PutUint16(h[6:], 0x4000) // don't fragment
	}
	h[8] = g.ttl()
	h[9] = proto
	src := netip.AddrFrom4([4]byte{198, 18, byte(r.Intn(16)), byte(1 + r.Intn(254))})
	copy(h[12:16], src.AsSlice())
	copy(h[16:20], dst.AsSlice())
	copy(h[20:], opts)
	if g.chance(0.03) {
		h[0] = byte(r.Intn(16))<<4 | h[0]&0x0F // another version
	}
	if g.chance(0.04) {
		binary.BigEndian.PutUint16(h[2:], uint16(r.Intn(len(h)+len(payload)+40)))
	}
	binary.BigEndian.PutUint16(h[10:], pktcheck.Checksum(h[:min(len(h), int(h[0]&0x0F)*4)]))
	if g.chance(0.04) {
		h[10] ^= byte(1 + r.Intn(255))
	}
	return append(h, payload...)
}

// ttl is mostly 64, sometimes the values that hit the TTL checks.
func (g *Gen) ttl() uint8 {
	switch g.r.Intn(20) {
	case 0:
		return 0
	case 1:
		return 1
	case 2:
		return 2
	}
	return 64
}

// ipv6 builds an IPv6 header for a payload of plen bytes whose first header is nh.
func (g *Gen) ipv6(src, dst netip.Addr, nh uint8, plen int) []byte {
	h := make([]byte, 40)
	binary.BigEndian.PutUint32(h[0:], 6<<28|uint32(g.r.Intn(256))<<20|uint32(g.r.Intn(1<<20)))
	binary.BigEndian.PutUint16(h[4:], uint16(plen))
	h[6] = nh
	h[7] = g.ttl()
	copy(h[8:24], src.AsSlice())
	copy(h[24:40], dst.AsSlice())
	return h
}

// ext is one extension header: its protocol number and bytes (next header filled in by chain).
type ext struct {
	proto uint8
	b     []byte
}

// optsHeader is a hop-by-hop or destination options header of 8..24 bytes (PadN, or random).
func (g *Gen) optsHeader(proto uint8) ext {
	n := 8 * (1 + g.r.Intn(3))
	b := make([]byte, n)
	b[1] = byte(n/8 - 1)
	if g.chance(0.8) {
		b[2], b[3] = 1, byte(n-4) // PadN over the rest
	} else {
		copy(b[2:], g.bytes(n-2))
	}
	return ext{proto, b}
}

// fragHeader is a fragment header, first fragment or a later one.
func (g *Gen) fragHeader() ext {
	b := make([]byte, 8)
	off := uint16(0)
	if g.chance(0.5) {
		off = uint16(1+g.r.Intn(100)) << 3
	}
	binary.BigEndian.PutUint16(b[2:], off|uint16(g.r.Intn(2)))
	binary.BigEndian.PutUint32(b[4:], g.r.Uint32())
	return ext{protoFragment, b}
}

// srh builds a segment routing header over segs (segment[0] is the last one visited). Most come out
// right; some get their last entry, segments left, length or type wrong, or carry TLVs.
func (g *Gen) srh(segs []netip.Addr, sl int) ext {
	r := g.r
	var tlv []byte
	if g.chance(0.08) {
		switch r.Intn(3) {
		case 0:
			tlv = []byte{4, 6, 0, 0, 0, 0, 0, 0} // PadN
		case 1:
			tlv = append([]byte{5, 38}, make([]byte, 38)...) // HMAC-sized
			tlv = append(tlv, make([]byte, (8-len(tlv)%8)%8)...)
		default:
			tlv = g.bytes(8 * (1 + r.Intn(3)))
		}
	}
	n := len(segs)
	b := make([]byte, 8+16*n+len(tlv))
	b[1] = byte((len(b) - 8) / 8)
	b[2] = srhType
	b[3] = byte(sl)
	b[4] = byte(max(n-1, 0))
	b[5] = byte(r.Intn(2) * 0x40)
	binary.BigEndian.PutUint16(b[6:], uint16(r.Intn(65536)))
	for i, s := range segs {
		copy(b[8+16*i:], s.AsSlice())
	}
	copy(b[8+16*n:], tlv)
	switch {
	case g.chance(0.03):
		b[1] = byte(r.Intn(256))
	case g.chance(0.03):
		b[4] = byte(r.Intn(256))
	case g.chance(0.03):
		b[2] = byte(r.Intn(256))
	}
	return ext{protoRouting, b}
}

// chain links extension headers and the upper-layer payload into an IPv6 payload; it returns the
// protocol of the first header and the bytes.
func chain(hs []ext, last uint8, payload []byte) (uint8, []byte) {
	var out []byte
	for i, h := range hs {
		next := last
		if i+1 < len(hs) {
			next = hs[i+1].proto
		}
		h.b[0] = next
		out = append(out, h.b...)
	}
	out = append(out, payload...)
	if len(hs) == 0 {
		return last, out
	}
	return hs[0].proto, out
}

const (
	protoHopOpts  = 0
	protoICMP     = 1
	protoIPv4     = 4
	protoTCP      = 6
	protoUDP      = 17
	protoIPv6     = 41
	protoRouting  = 43
	protoFragment = 44
	protoAH       = 51
	protoNone     = 59
	protoDstOpts  = 60
	protoEthernet = 143
	srhType       = 4
)
