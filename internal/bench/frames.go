// Package bench is `seg6x bench`: a generator -> DUT -> sink rig in network namespaces, scenarios
// for seg6x, the kernel and bare XDP forwarding, RFC 2544-style searches and their reports.
package bench

// frames.go: byte builders for the generator's frame templates and the sink's expected patterns.

import (
	"encoding/binary"
	"net/netip"

	"github.com/seg6x/seg6x/internal/pktcheck"
)

func ethHdr(dst, src [6]byte, vlan uint16, etype uint16) []byte {
	b := append(append([]byte{}, dst[:]...), src[:]...)
	if vlan != 0 {
		b = binary.BigEndian.AppendUint16(b, 0x8100)
		b = binary.BigEndian.AppendUint16(b, vlan&0x0FFF)
	}
	return binary.BigEndian.AppendUint16(b, etype)
}

// ipv4UDP is an IPv4/UDP packet of total length totalLen (>= 28).
func ipv4UDP(src, dst netip.Addr, ttl uint8, sport, dport uint16, totalLen int) []byte {
	b := make([]byte, totalLen)
	b[0], b[8], b[9] = 0x45, ttl, 17
	binary.BigEndian.PutUint16(b[2:], uint16(totalLen))
	s4, d4 := src.As4(), dst.As4()
	copy(b[12:], s4[:])
	copy(b[16:], d4[:])
	binary.BigEndian.PutUint16(b[10:], pktcheck.Checksum(b[:20]))
	binary.BigEndian.PutUint16(b[20:], sport)
	binary.BigEndian.PutUint16(b[22:], dport)
	binary.BigEndian.PutUint16(b[24:], uint16(totalLen-20))
	for i := 28; i < totalLen; i++ {
		b[i] = byte(i)
	}
	return b
}

// ipv6Hdr is a 40-byte IPv6 header.
func ipv6Hdr(src, dst netip.Addr, nh uint8, hlim uint8, payloadLen int) []byte {
	b := make([]byte, 40)
	b[0] = 0x60
	binary.BigEndian.PutUint16(b[4:], uint16(payloadLen))
	b[6], b[7] = nh, hlim
	s, d := src.As16(), dst.As16()
	copy(b[8:], s[:])
	copy(b[24:], d[:])
	return b
}

// srhHdr is an SRH; list is in packet order (Segment List[0] first).
func srhHdr(nh uint8, list []netip.Addr, sl uint8) []byte {
	b := []byte{nh, uint8(2 * len(list)), 4, sl, uint8(len(list) - 1), 0, 0, 0}
	for _, a := range list {
		s := a.As16()
		b = append(b, s[:]...)
	}
	return b
}

// pattern is what the sink checks: value and mask over the first patLen bytes, and a minimum length.
type pattern struct {
	value, mask [128]byte
	minLen      int
}

// expect marks bytes at off as required to equal b.
func (p *pattern) expect(off int, b []byte) {
	for i, x := range b {
		if off+i < len(p.value) {
			p.value[off+i] = x
			p.mask[off+i] = 0xFF
		}
	}
	if off+len(b) > p.minLen {
		p.minLen = off + len(b)
	}
}

// Corrupt returns p with the last checked byte expected to be different: for tests that the sink
// rejects frames that do not match.
func Corrupt(p pattern) pattern {
	for i := len(p.mask) - 1; i >= 0; i-- {
		if p.mask[i] != 0 {
			p.value[i] ^= 0x01 & p.mask[i]
			if p.mask[i]&0x01 == 0 {
				p.value[i] ^= p.mask[i] & -p.mask[i]
			}
			return p
		}
	}
	return p
}
