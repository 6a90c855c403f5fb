package bgp

// transpose.go: RFC 9252 section 4 SID transposition. A PE may send a service SID with some of its bits
// (for L3VPN: the function, at most 20 bits) moved into the MPLS label field of the VPN NLRI and zeroed
// in the SID; the SID Structure sub-sub-TLV says which (transposition offset and length). FRR, Cisco
// and Juniper PEs do; GoBGP carries the fields but transposes nothing, so seg6x does it here.

import (
	"fmt"
	"net/netip"
)

// MaxTransposition is the most SID bits an L3VPN route may carry in its 20-bit label value.
const MaxTransposition = 20

func checkTransposition(off, n uint8) error {
	if n > MaxTransposition {
		return fmt.Errorf("transposition length %d: at most %d bits fit the label", n, MaxTransposition)
	}
	if int(off)+int(n) > 128 {
		return fmt.Errorf("transposition offset %d + length %d is beyond the 128-bit SID", off, n)
	}
	return nil
}

func bit(b *[16]byte, i int) bool { return b[i/8]>>(7-i%8)&1 == 1 }

func setBit(b *[16]byte, i int, v bool) {
	if v {
		b[i/8] |= 1 << (7 - i%8)
	} else {
		b[i/8] &^= 1 << (7 - i%8)
	}
}

// transposeOut takes n bits of sid from bit off on into the top of a 20-bit label value and returns
// the SID with those bits zeroed and the label.
func transposeOut(sid netip.Addr, off, n uint8) (netip.Addr, uint32, error) {
	if err := checkTransposition(off, n); err != nil {
		return netip.Addr{}, 0, err
	}
	b := sid.As16()
	var label uint32
	for i := 0; i < int(n); i++ {
		if bit(&b, int(off)+i) {
			label |= 1 << (19 - i)
		}
		setBit(&b, int(off)+i, false)
	}
	return netip.AddrFrom16(b), label, nil
}

// transposeIn puts the top n bits of a 20-bit label value back into sid from bit off on.
func transposeIn(sid netip.Addr, label uint32, off, n uint8) (netip.Addr, error) {
	if err := checkTransposition(off, n); err != nil {
		return netip.Addr{}, err
	}
	b := sid.As16()
	for i := 0; i < int(n); i++ {
		setBit(&b, int(off)+i, label>>(19-i)&1 == 1)
	}
	return netip.AddrFrom16(b), nil
}
