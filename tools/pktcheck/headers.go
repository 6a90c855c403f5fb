package pktcheck

// headers.go: the IPv4 and IPv6 header rules (with the SRH) a frame must meet to leave seg6x.

import (
	"encoding/binary"
	"fmt"
)

// IPv4 checks an IPv4 packet that is all of b: version 4, IHL >= 5 and within the packet, total
// length equal to the bytes present, a valid header checksum and (when leaving) TTL >= 1.
func IPv4(b []byte, leaving bool) error {
	if len(b) < 20 {
		return fmt.Errorf("IPv4 header cut short (%d bytes)", len(b))
	}
	if v := b[0] >> 4; v != 4 {
		return fmt.Errorf("IPv4 packet with version %d", v)
	}
	ihl := int(b[0]&0x0F) * 4
	if ihl < 20 || ihl > len(b) {
		return fmt.Errorf("IPv4 IHL %d bytes in a %d-byte packet", ihl, len(b))
	}
	if tot := int(binary.BigEndian.Uint16(b[2:])); tot != len(b) {
		return fmt.Errorf("IPv4 total length %d, %d bytes present", tot, len(b))
	}
	if Checksum(b[:ihl]) != 0 {
		return fmt.Errorf("IPv4 header checksum wrong (%#04x)", binary.BigEndian.Uint16(b[10:]))
	}
	if leaving && b[8] == 0 {
		return fmt.Errorf("IPv4 TTL 0")
	}
	return nil
}

// Checksum is the Internet checksum of b (0 over a header whose checksum field is right).
func Checksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xFFFF {
		s = s>>16 + s&0xFFFF
	}
	return ^uint16(s)
}

// V6Info is where an IPv6 packet's header chain ends.
type V6Info struct {
	SRHOff     int   // offset of the SRH from the IPv6 header, or -1
	Next       uint8 // the protocol after the chain (or 44 when a fragment header ends the walk)
	PayloadOff int   // where that protocol starts
}

// Walk says how far IPv6 follows the extension header chain.
type Walk int

const (
	// HeaderOnly: the fixed header (a decapsulated packet, which seg6x forwards as any router would).
	HeaderOnly Walk = iota
	// HopByHop: and the hop-by-hop options header, which every node reads (RFC 8200 4.3): it must
	// fit (the kernel's ipv6_parse_hopopts drops the packet otherwise). A tenant packet seg6x carries.
	HopByHop
	// ToSRH: the chain up to and including the first SRH, whose segment list rules must hold (a
	// packet seg6x processed as a transit SID; what follows is the sender's).
	ToSRH
	// Whole: the whole chain, with the SRH rules (a header seg6x built).
	Whole
)

// IPv6 checks an IPv6 packet that is all of b: version 6, payload length equal to the bytes that
// follow the header, (when leaving) hop limit >= 1, and the extension headers walk reaches stay
// inside the packet. An SRH must have its segment list inside it, segments left <= last entry + 1
// (last entry + 1 is the reduced SRH of H.Encaps.Red, RFC 8986 5.2, whose first segment is only in
// the destination) and, when segments left names a listed segment, the destination equal to it.
func IPv6(b []byte, leaving bool, walk Walk) (V6Info, error) {
	info := V6Info{SRHOff: -1}
	if len(b) < 40 {
		return info, fmt.Errorf("IPv6 header cut short (%d bytes)", len(b))
	}
	if v := b[0] >> 4; v != 6 {
		return info, fmt.Errorf("IPv6 packet with version %d", v)
	}
	if plen := int(binary.BigEndian.Uint16(b[4:])); plen != len(b)-40 {
		return info, fmt.Errorf("IPv6 payload length %d, %d bytes follow the header", plen, len(b)-40)
	}
	if leaving && b[7] == 0 {
		return info, fmt.Errorf("IPv6 hop limit 0")
	}
	nh, off := b[6], 40
	for i := 0; i < maxExtHeaders; i++ {
		info.Next, info.PayloadOff = nh, off
		switch {
		case walk == HeaderOnly, walk == HopByHop && (i > 0 || nh != protoHopOpts), walk == ToSRH && info.SRHOff >= 0:
			return info, nil
		case nh != protoHopOpts && nh != protoDstOpts && nh != protoRouting && nh != protoAH:
			return info, nil
		}
		if off+8 > len(b) {
			return info, fmt.Errorf("extension header %d at byte %d cut short", nh, off)
		}
		hlen := (int(b[off+1]) + 1) * 8
		if nh == protoAH {
			hlen = (int(b[off+1]) + 2) * 4
		}
		if off+hlen > len(b) {
			return info, fmt.Errorf("extension header %d at byte %d: %d bytes, %d left", nh, off, hlen, len(b)-off)
		}
		if nh == protoRouting && b[off+2] == srhType && info.SRHOff < 0 {
			if err := srh(b, off, hlen); err != nil {
				return info, err
			}
			info.SRHOff = off
		}
		nh, off = b[off], off+hlen
	}
	return info, fmt.Errorf("more than %d extension headers", maxExtHeaders)
}

// srh checks the SRH at off (hlen bytes) of the IPv6 packet b.
func srh(b []byte, off, hlen int) error {
	sl, last := int(b[off+3]), int(b[off+4])
	if 8+(last+1)*16 > hlen {
		return fmt.Errorf("SRH last entry %d does not fit its %d bytes", last, hlen)
	}
	if sl > last+1 {
		return fmt.Errorf("SRH segments left %d beyond last entry %d", sl, last)
	}
	if sl <= last {
		seg := b[off+8+sl*16 : off+8+(sl+1)*16]
		// (Or that segment's next uSID: End then a local uN in one pass, RFC 9800.)
		if string(seg) != string(b[24:40]) && !csidShifted(b[24:40], seg) {
			return fmt.Errorf("destination %x is not segment[%d] %x (nor a NEXT-C-SID shift of it)", b[24:40], sl, seg)
		}
	}
	return nil
}

// csidShifted says whether da is the address seg after NEXT-C-SID shifts (RFC 9800): the same locator
// block (some whole bytes), then what followed the block further along by some bytes, zeros behind.
func csidShifted(da, seg []byte) bool {
	for lb := 1; lb < 16; lb++ {
		if da[lb-1] != seg[lb-1] {
			return false
		}
		for d := 1; lb+d < 16; d++ {
			if string(da[lb:16-d]) == string(seg[lb+d:]) && allZero(da[16-d:]) {
				return true
			}
		}
	}
	return false
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
