// Package benchrig is the benchmark rig behind `seg6x-bench`: a generator -> DUT -> sink rig in
// network namespaces, scenarios for seg6x, the kernel and bare XDP forwarding, RFC 2544-style
// searches and their reports; the micro, slow path, TCP, control-plane and kernel-mirror benchmarks.
// Its BPF objects are in rigbpf. No product package imports either (cmd/seg6x/apart_test.go checks).
package benchrig

// frames.go: the generator's IPv4/UDP payload and the sink's expected patterns (the headers come
// from tools/testsupport's builders).

import (
	"net/netip"

	"github.com/seg6x/seg6x/tools/testsupport"
)

// ipv4UDP is an IPv4/UDP packet of total length totalLen (>= 28): its payload bytes count up from
// 28, its UDP checksum is 0.
func ipv4UDP(src, dst netip.Addr, ttl uint8, sport, dport uint16, totalLen int) []byte {
	data := make([]byte, totalLen-28)
	for i := range data {
		data[i] = byte(28 + i)
	}
	return testsupport.IPv4{Src: src, Dst: dst, TTL: ttl, Proto: 17}.Packet(testsupport.UDP(sport, dport, data))
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

// ignore stops checking the byte at off (a byte that legitimately differs between the outputs a
// pattern stands for, such as the lists of a weighted policy).
func (p *pattern) ignore(off int) {
	if off < len(p.mask) {
		p.mask[off], p.value[off] = 0, 0
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
