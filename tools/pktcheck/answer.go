package pktcheck

// answer.go: the rules for an ICMP error seg6x sends back in place of a tenant packet too big for its
// tunnel (XDP_TX): RFC 1191 / RFC 1812 4.3.2 for IPv4 "fragmentation needed", RFC 4443 3.2 / 2.4 for
// IPv6 "packet too big".

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
)

// Quote limits: the whole error within 576 bytes (RFC 1812 4.3.2.3) / the IPv6 minimum MTU (RFC 4443 2.4(c)).
const (
	quote4Max = 576 - 28
	quote6Max = 1280 - 48
)

// Answered checks out, sent back out of the port in came from, as the ICMP error for in: the Ethernet
// addresses swapped and the VLAN tags kept, a well-formed IPv4 or IPv6 header to in's source from a
// unicast address, the ICMP type and code, an MTU smaller than in's packet, in's packet quoted byte for
// byte as far as the limit, and the checksum right. in must be a packet an error may answer.
func Answered(in, out []byte) error {
	etype, off, err := L2(in)
	if err != nil {
		return err
	}
	oetype, ooff, err := L2(out)
	if err != nil {
		return err
	}
	if oetype != etype || ooff != off || !bytes.Equal(out[12:off], in[12:off]) {
		return fmt.Errorf("answer's EtherType or VLAN tags differ from the packet's")
	}
	if !bytes.Equal(out[0:6], in[6:12]) || !bytes.Equal(out[6:12], in[0:6]) {
		return fmt.Errorf("answer's MAC addresses are not the packet's swapped")
	}
	switch etype {
	case etherIPv4:
		return answered4(in[off:], out[off:])
	case etherIPv6:
		return answered6(in[off:], out[off:])
	}
	return fmt.Errorf("answer to EtherType %#04x", etype)
}

func answered4(in, out []byte) error {
	if len(in) < 20 {
		return fmt.Errorf("answer to a packet cut short")
	}
	inLen := min(int(binary.BigEndian.Uint16(in[2:])), len(in))
	if err := IPv4(out, true); err != nil {
		return fmt.Errorf("answer's %w", err)
	}
	if in[6]&0x40 == 0 || binary.BigEndian.Uint16(in[6:])&0x1FFF != 0 {
		return fmt.Errorf("answer to an IPv4 packet without DF or not a first fragment")
	}
	if in[9] == 1 && len(in) > 20 && (in[20] > 18 || in[20] == 3 || in[20] == 4 || in[20] == 5 || in[20] == 11 || in[20] == 12) {
		return fmt.Errorf("answer to an ICMP error (type %d)", in[20])
	}
	src, dst := addr(out[12:16]), addr(out[16:20])
	if !bytes.Equal(out[16:20], in[12:16]) || !unicast(src) || !unicast(dst) {
		return fmt.Errorf("answer from %s to %s for a packet from %s", src, dst, addr(in[12:16]))
	}
	if out[0] != 0x45 || out[9] != 1 || len(out) < 28 {
		return fmt.Errorf("answer is not ICMP in a 20-byte IPv4 header")
	}
	icmp := out[20:] // type 3 code 4: fragmentation needed
	if err := icmpMessage("ICMP", icmp, in, 3, 4, int(binary.BigEndian.Uint16(icmp[6:])), inLen, quote4Max); err != nil {
		return err
	}
	if Checksum(icmp) != 0 {
		return fmt.Errorf("answer's ICMP checksum wrong")
	}
	return nil
}

func answered6(in, out []byte) error {
	if len(in) < 40 || len(out) < 48 {
		return fmt.Errorf("answer or packet cut short")
	}
	inLen := min(40+int(binary.BigEndian.Uint16(in[4:])), len(in))
	if _, err := IPv6(out, true, Whole); err != nil {
		return fmt.Errorf("answer's %w", err)
	}
	if in[6] == 58 && len(in) > 40 && in[40] < 128 {
		return fmt.Errorf("answer to an ICMPv6 error (type %d)", in[40])
	}
	src, dst := addr(out[8:24]), addr(out[24:40])
	if !bytes.Equal(out[24:40], in[8:24]) || !unicast(src) || !unicast(dst) {
		return fmt.Errorf("answer from %s to %s for a packet from %s", src, dst, addr(in[8:24]))
	}
	if out[6] != 58 {
		return fmt.Errorf("answer's next header %d, want ICMPv6", out[6])
	}
	icmp := out[40:] // type 2: packet too big
	if err := icmpMessage("ICMPv6", icmp, in, 2, 0, int(binary.BigEndian.Uint32(icmp[4:])), inLen, quote6Max); err != nil {
		return err
	}
	pseudo := make([]byte, 0, 40+len(icmp))
	pseudo = append(pseudo, out[8:40]...)
	pseudo = binary.BigEndian.AppendUint32(pseudo, uint32(len(icmp)))
	pseudo = append(pseudo, 0, 0, 0, 58)
	if Checksum(append(pseudo, icmp...)) != 0 {
		return fmt.Errorf("answer's ICMPv6 checksum wrong")
	}
	return nil
}

// icmpMessage checks the ICMP(v6) message of an answer after its IP header: type and code, an MTU
// smaller than the packet answered (inLen bytes), and that packet's first bytes, as many as fit under
// quoteMax, quoted as they came.
func icmpMessage(kind string, icmp, in []byte, typ, code byte, mtu, inLen, quoteMax int) error {
	if icmp[0] != typ || icmp[1] != code {
		return fmt.Errorf("answer is %s type %d code %d, want %d code %d", kind, icmp[0], icmp[1], typ, code)
	}
	if mtu == 0 || mtu >= inLen {
		return fmt.Errorf("answer's MTU %d for a %d-byte packet", mtu, inLen)
	}
	if q := min(inLen, quoteMax); len(icmp) != 8+q || !bytes.Equal(icmp[8:], in[:q]) {
		return fmt.Errorf("answer quotes %d bytes, want the packet's first %d as they came", len(icmp)-8, q)
	}
	return nil
}

func addr(b []byte) netip.Addr {
	a, _ := netip.AddrFromSlice(b)
	return a
}

// unicast: an address a host may send from and be sent to.
func unicast(a netip.Addr) bool {
	return a.IsValid() && !a.IsUnspecified() && !a.IsMulticast() && !a.IsLoopback() &&
		!(a.Is4() && a.As4()[0] >= 224)
}
