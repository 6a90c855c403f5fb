package pktfuzz

// mutate.go: what happens to a built frame on the way: cut short, Ethernet padding, a length field
// rewritten, bytes flipped. Most frames stay as built, so the deep paths are reached.

import "encoding/binary"

func (g *Gen) mutate(f []byte, kind string) ([]byte, string) {
	switch n := g.r.Intn(100); {
	case n < 10: // cut anywhere after the Ethernet header
		return f[:14+g.r.Intn(len(f)-13)], kind + "/cut"
	case n < 18: // Ethernet padding (zeros, or junk)
		pad := make([]byte, 1+g.r.Intn(46))
		if g.chance(0.3) {
			pad = g.bytes(len(pad))
		}
		return append(f, pad...), kind + "/padded"
	case n < 26: // a length field of the first IP header rewritten
		if off := l3(f); off > 0 && len(f) >= off+40 {
			v := uint16(g.r.Intn(len(f) - off + 64))
			if f[off]>>4 == 6 {
				binary.BigEndian.PutUint16(f[off+4:], v)
			} else {
				binary.BigEndian.PutUint16(f[off+2:], v)
			}
			return f, kind + "/length"
		}
	case n < 38: // 1-4 bytes flipped past the Ethernet addresses
		for i := 0; i < 1+g.r.Intn(4); i++ {
			f[12+g.r.Intn(len(f)-12)] ^= byte(1 + g.r.Intn(255))
		}
		return f, kind + "/flipped"
	}
	return f, kind
}

// l3 is where the first IP header starts after the VLAN tags (0 when there is none).
func l3(f []byte) int {
	off := 12
	for len(f) >= off+2 {
		switch binary.BigEndian.Uint16(f[off:]) {
		case 0x8100, 0x88A8:
			off += 4
		case 0x0800, 0x86DD:
			return off + 2
		default:
			return 0
		}
	}
	return 0
}
