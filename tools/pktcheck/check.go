// Package pktcheck is the output oracle of the fuzz harness (test/fuzz): it decides whether a frame
// seg6x sends (XDP_REDIRECT, XDP_TX) or hands to the kernel (XDP_PASS) is well formed, given the frame
// that came in. The rules are RFC 8200 (IPv6), RFC 8754 (SRH) and RFC 791/1812 (IPv4) as the kernel's
// input path applies them; docs/fuzzing.md says which and why. Its Checksum is also the one the
// project's frame builders (tools/testsupport) use.
package pktcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxGrowth is how much longer than its input a frame may leave: an 802.1Q tag, an outer IPv6
// header and an SRH of 16 segments (8 + 16*16 bytes).
const MaxGrowth = 4 + 40 + 8 + 16*16

const (
	etherIPv4 = 0x0800
	etherIPv6 = 0x86DD
	etherVLAN = 0x8100
	etherQinQ = 0x88A8

	protoHopOpts  = 0
	protoIPv4     = 4
	protoIPv6     = 41
	protoRouting  = 43
	protoFragment = 44
	protoAH       = 51
	protoDstOpts  = 60
	srhType       = 4
	maxExtHeaders = 16
)

// L2 splits an Ethernet frame: the EtherType after at most two VLAN tags and where the L3 header starts.
func L2(f []byte) (etype uint16, l3off int, err error) {
	if len(f) < 14 {
		return 0, 0, errors.New("shorter than an Ethernet header")
	}
	etype, l3off = binary.BigEndian.Uint16(f[12:]), 14
	for i := 0; i < 2 && (etype == etherVLAN || etype == etherQinQ); i++ {
		if len(f) < l3off+4 {
			return 0, 0, errors.New("VLAN tag cut short")
		}
		etype = binary.BigEndian.Uint16(f[l3off+2:])
		l3off += 4
	}
	return etype, l3off, nil
}

// Leaving checks a frame that seg6x sends out (redirect or TX); in is the frame it received.
func Leaving(in, out []byte) error { return check(in, out, true) }

// Passed checks a frame handed to the kernel: unchanged (or only cut to its IP length: Ethernet
// padding trimmed), or well formed like one that leaves except that its TTL or hop limit may be
// spent (the kernel answers those with ICMP time exceeded, which is why seg6x hands them over).
func Passed(in, out []byte) error {
	if bytes.Equal(in, out) || trimmed(in, out) {
		return nil
	}
	if err := check(in, out, false); err != nil {
		return fmt.Errorf("changed and %w", err)
	}
	return nil
}

// trimmed says whether out is in cut exactly to the length its IP header states.
func trimmed(in, out []byte) bool {
	if len(out) >= len(in) || !bytes.Equal(out, in[:len(out)]) {
		return false
	}
	etype, off, err := L2(out)
	if err != nil {
		return false
	}
	switch l3 := out[off:]; {
	case etype == etherIPv6 && len(l3) >= 40:
		return int(binary.BigEndian.Uint16(l3[4:])) == len(l3)-40
	case etype == etherIPv4 && len(l3) >= 20:
		return int(binary.BigEndian.Uint16(l3[2:])) == len(l3)
	}
	return false
}

// What seg6x did to an IPv6 packet, judged by lengths: kept it (transit), put it inside an outer
// header (encapsulated), took it out of one (decapsulated), or removed the SRH right after the IPv6
// header (popped: PSP, USP).
const (
	transit = iota
	encapsulated
	decapsulated
	popped
)

// srhGone says whether out is in (same source) without the SRH that followed its IPv6 header, and
// if it looks like it (the right length) but is not exactly that, what is wrong.
func srhGone(out, in []byte) (bool, error) {
	if len(in) < 48 || in[6] != protoRouting || !bytes.Equal(out[8:24], in[8:24]) {
		return false, nil
	}
	n := (int(in[41]) + 1) * 8
	if len(out) != len(in)-n {
		return false, nil
	}
	switch {
	case out[6] != in[40]:
		return true, fmt.Errorf("SRH popped: next header %d, the SRH's was %d", out[6], in[40])
	case !bytes.Equal(out[40:], in[40+n:]):
		return true, fmt.Errorf("SRH popped: what followed it changed")
	}
	return true, nil
}

func check(in, out []byte, leaving bool) error {
	if len(out) > len(in)+MaxGrowth {
		return fmt.Errorf("leaves %d bytes from a %d-byte frame (more than %d bytes of encapsulation)", len(out), len(in), MaxGrowth)
	}
	etype, off, err := L2(out)
	if err != nil {
		return err
	}
	l3 := out[off:]
	switch etype {
	case etherIPv4:
		return IPv4(l3, leaving)
	case etherIPv6:
	default:
		return fmt.Errorf("leaves with EtherType %#04x", etype)
	}
	inL3 := ipv6Packet(in)
	mode := decapsulated
	switch {
	case inL3 == nil || len(l3) > len(inL3):
		mode = encapsulated
	case len(l3) == len(inL3) && bytes.Equal(l3[8:24], inL3[8:24]):
		mode = transit
	default:
		gone, err := srhGone(l3, inL3)
		if err != nil {
			return err
		}
		if gone {
			mode = popped
		}
	}
	// What seg6x answers for: the whole chain it built; at transit, the chain up to the SRH it
	// processed; a decapsulated packet's fixed header (the rest is the tenant's, forwarded as any
	// router would).
	walk := map[int]Walk{transit: ToSRH, encapsulated: Whole, decapsulated: HeaderOnly, popped: HeaderOnly}[mode]
	info, err := IPv6(l3, leaving, walk)
	if err != nil && mode == transit && csidShifted(l3[24:40], inL3[24:40]) {
		// NEXT-C-SID (uN, uA): the next uSID shifted into the destination; an SRH is not processed
		// (RFC 9800, as the kernel): it need not agree, but must leave exactly as it came (below).
		info, err = IPv6(l3, leaving, HeaderOnly)
	}
	if err != nil {
		return err
	}
	switch mode {
	case transit:
		// End, End.X, End.T change only the hop limit, the destination and segments left:
		// everything after the outer header leaves byte for byte as it came.
		for i := 40; i < len(l3); i++ {
			if l3[i] != inL3[i] && i != info.SRHOff+3 {
				return fmt.Errorf("transit changed byte %d after the outer IPv6 header (%#02x -> %#02x)", i, inL3[i], l3[i])
			}
		}
	case encapsulated:
		// The tenant packet inside an outer header seg6x built must itself be well formed.
		p := l3[info.PayloadOff:]
		switch info.Next {
		case protoIPv4:
			if err := IPv4(p, leaving); err != nil {
				return fmt.Errorf("inner %w", err)
			}
		case protoIPv6:
			if _, err := IPv6(p, leaving, HopByHop); err != nil {
				return fmt.Errorf("inner %w", err)
			}
		}
	}
	return nil
}

// ipv6Packet is the IPv6 packet of frame f without Ethernet padding, or nil when f carries none.
func ipv6Packet(f []byte) []byte {
	etype, off, err := L2(f)
	if err != nil || etype != etherIPv6 || len(f) < off+40 {
		return nil
	}
	l3 := f[off:]
	if plen := int(binary.BigEndian.Uint16(l3[4:])); 40+plen <= len(l3) {
		l3 = l3[:40+plen]
	}
	return l3
}
