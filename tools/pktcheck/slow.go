package pktcheck

// slow.go: the rules for what the XDP program hands the daemon's slow path (bpf/slowpath.h): a tenant
// IPv4 packet without DF to fragment, and its fragments (RFC 791); the ICMP error answering a
// decapsulated packet too big for its tenant port, addressed as that tenant's host would send it.

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// ToFragment checks a record asking to fragment: frame is the received frame in (Ethernet padding
// trimmed) whose IPv4 packet at l3off has DF clear and is longer than mtu (at least 68).
func ToFragment(in, frame []byte, l3off, mtu int) error {
	etype, off, err := L2(in)
	if err != nil {
		return err
	}
	if etype != etherIPv4 || off != l3off {
		return fmt.Errorf("fragment record: IP at %d, the frame has EtherType %#04x at %d", l3off, etype, off)
	}
	if len(frame) > len(in) || !bytes.Equal(frame, in[:len(frame)]) || len(frame) < l3off+20 {
		return fmt.Errorf("fragment record: the frame (%d bytes) is not the received one (%d)", len(frame), len(in))
	}
	ip := frame[l3off:]
	if tot := int(binary.BigEndian.Uint16(ip[2:])); tot != len(ip) {
		return fmt.Errorf("fragment record: IPv4 total length %d in %d bytes", tot, len(ip))
	}
	if ip[6]&0x40 != 0 {
		return fmt.Errorf("fragment record: the packet has DF")
	}
	if mtu < 68 || len(ip) <= mtu {
		return fmt.Errorf("fragment record: a %d-byte packet for MTU %d", len(ip), mtu)
	}
	return nil
}

// Fragments checks frags, the frames made of the packet in frame (IPv4 at l3off), against RFC 791:
// each with frame's L2 header, a valid IPv4 header with the packet's identification, protocol and
// addresses, at most mtu bytes, data in multiples of 8 but the last, MF on all but the last (which
// keeps the packet's), offsets that continue one another from the packet's, and together exactly the
// packet's data.
func Fragments(frame []byte, l3off, mtu int, frags [][]byte) error {
	ip := frame[l3off:]
	ihl := int(ip[0]&0x0F) * 4
	flags := binary.BigEndian.Uint16(ip[6:])
	next := int(flags&0x1FFF) * 8
	var data []byte
	for i, f := range frags {
		if len(f) < l3off+20 || !bytes.Equal(f[:l3off], frame[:l3off]) {
			return fmt.Errorf("fragment %d: L2 header differs from the packet's", i)
		}
		h := f[l3off:]
		if err := IPv4(h, true); err != nil {
			return fmt.Errorf("fragment %d: %w", i, err)
		}
		fl := binary.BigEndian.Uint16(h[6:])
		fihl := int(h[0]&0x0F) * 4
		last := i == len(frags)-1
		switch {
		case len(h) > mtu:
			return fmt.Errorf("fragment %d: %d bytes for MTU %d", i, len(h), mtu)
		case !bytes.Equal(h[4:6], ip[4:6]) || h[9] != ip[9] || !bytes.Equal(h[12:20], ip[12:20]):
			return fmt.Errorf("fragment %d: identification, protocol or addresses differ", i)
		case fihl != ihl:
			return fmt.Errorf("fragment %d: header length %d, the packet's %d", i, fihl, ihl)
		case int(fl&0x1FFF)*8 != next:
			return fmt.Errorf("fragment %d: offset %d, want %d", i, int(fl&0x1FFF)*8, next)
		case !last && (fl&0x2000 == 0 || (len(h)-fihl)%8 != 0):
			return fmt.Errorf("fragment %d: MF clear or data not a multiple of 8", i)
		case last && fl&0x2000 != flags&0x2000:
			return fmt.Errorf("last fragment: MF %v, the packet's %v", fl&0x2000 != 0, flags&0x2000 != 0)
		case fl&0x4000 != 0:
			return fmt.Errorf("fragment %d: DF set", i)
		}
		next += len(h) - fihl
		data = append(data, h[fihl:]...)
	}
	if !bytes.Equal(data, ip[ihl:]) {
		return fmt.Errorf("the fragments' data (%d bytes) is not the packet's (%d)", len(data), len(ip)-ihl)
	}
	return nil
}

// DecapAnswered checks out, an answer the slow path runs in at a tenant port, against in, the fabric
// frame whose decapsulated packet was too big for that port: an Ethernet frame between unicast MACs
// with at most one VLAN tag, carrying the ICMP error for the inner packet (as Answered checks it: to
// its source, from a unicast address, type and code, MTU, quote, checksum).
func DecapAnswered(in, out []byte) error {
	next, inner, err := innerPacket(ipv6Packet(in))
	if err != nil {
		return fmt.Errorf("decapsulated answer for a bad outer packet: %w", err)
	}
	oetype, ooff, err := L2(out)
	if err != nil {
		return err
	}
	if ooff > 18 || out[0]&1 != 0 || out[6]&1 != 0 {
		return fmt.Errorf("decap answer: more than one VLAN tag or a multicast MAC")
	}
	switch {
	case next == 4 && oetype == etherIPv4:
		return answered4(inner, out[ooff:])
	case next == 41 && oetype == etherIPv6:
		return answered6(inner, out[ooff:])
	}
	return fmt.Errorf("decap answer with EtherType %#04x for inner protocol %d", oetype, next)
}

// innerPacket follows the extension headers of the outer IPv6 packet b to what it carries (the SRH's
// rules are the sender's business here: a decapsulating SID does not check them all).
func innerPacket(b []byte) (uint8, []byte, error) {
	if len(b) < 40 {
		return 0, nil, fmt.Errorf("IPv6 header cut short")
	}
	nh, off := b[6], 40
	for i := 0; i < maxExtHeaders; i++ {
		if nh != protoHopOpts && nh != protoDstOpts && nh != protoRouting && nh != protoAH {
			return nh, b[off:], nil
		}
		if off+8 > len(b) {
			return 0, nil, fmt.Errorf("extension header %d cut short", nh)
		}
		hlen := (int(b[off+1]) + 1) * 8
		if nh == protoAH {
			hlen = (int(b[off+1]) + 2) * 4
		}
		nh, off = b[off], off+hlen
		if off > len(b) {
			return 0, nil, fmt.Errorf("extension header beyond the packet")
		}
	}
	return 0, nil, fmt.Errorf("more than %d extension headers", maxExtHeaders)
}

// BeyondIPv4Max says whether the IPv4 fragment ip reaches beyond the largest datagram (its offset plus
// its data more than 65535 bytes less its header): one that cannot be fragmented further.
func BeyondIPv4Max(ip []byte) bool {
	ihl := int(ip[0]&0x0F) * 4
	off := int(binary.BigEndian.Uint16(ip[6:])&0x1FFF) * 8
	return off+int(binary.BigEndian.Uint16(ip[2:]))-ihl > 0xFFFF-ihl
}
