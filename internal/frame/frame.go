// Package frame builds Ethernet frames from a short spec (`seg6x explain`) and describes frames in
// one line per header (what `seg6x trace` and `explain` print): Ethernet, 802.1Q tags, IPv4, IPv6
// with its extension headers and segment routing header, and the inner packet of an SRv6 tunnel,
// TCP, UDP and ICMP.
package frame

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Describe is one line per header of frame b.
func Describe(b []byte) []string {
	var out []string
	if len(b) < 14 {
		return []string{fmt.Sprintf("%d bytes: shorter than an Ethernet header", len(b))}
	}
	eth := fmt.Sprintf("eth %s > %s", net.HardwareAddr(b[6:12]), net.HardwareAddr(b[0:6]))
	et := binary.BigEndian.Uint16(b[12:14])
	off := 14
	for et == 0x8100 || et == 0x88a8 {
		if len(b) < off+4 {
			return append(out, eth+", truncated in a VLAN tag")
		}
		eth += fmt.Sprintf(" vlan %d", binary.BigEndian.Uint16(b[off:off+2])&0x0FFF)
		et = binary.BigEndian.Uint16(b[off+2 : off+4])
		off += 4
	}
	out = append(out, eth)
	switch et {
	case 0x0800:
		out = append(out, ip(b[off:], 4)...)
	case 0x86dd:
		out = append(out, ip(b[off:], 6)...)
	case 0x0806:
		out = append(out, "arp")
	default:
		out = append(out, fmt.Sprintf("ethertype %#04x", et))
	}
	return out
}

// ip describes the IP packet at b (version v) and what it carries.
func ip(b []byte, v int) []string {
	var out []string
	var proto, hl int
	if v == 4 {
		if len(b) < 20 {
			return []string{"ipv4, truncated"}
		}
		hl = int(b[0]&0x0F) * 4
		src, _ := netip.AddrFromSlice(b[12:16])
		dst, _ := netip.AddrFromSlice(b[16:20])
		proto = int(b[9])
		frag := binary.BigEndian.Uint16(b[6:8])
		line := fmt.Sprintf("ipv4 %s > %s ttl %d len %d", src, dst, b[8], binary.BigEndian.Uint16(b[2:4]))
		if frag&0x4000 != 0 {
			line += " DF"
		}
		if frag&0x3FFF != 0 {
			line += fmt.Sprintf(" fragment offset %d%s", (frag&0x1FFF)*8, map[bool]string{true: " MF"}[frag&0x2000 != 0])
			out = append(out, line)
			return out
		}
		out = append(out, line)
		if hl < 20 || len(b) < hl {
			return out
		}
	} else {
		if len(b) < 40 {
			return []string{"ipv6, truncated"}
		}
		src := netip.AddrFrom16([16]byte(b[8:24]))
		dst := netip.AddrFrom16([16]byte(b[24:40]))
		label := binary.BigEndian.Uint32(b[0:4]) & 0xFFFFF
		out = append(out, fmt.Sprintf("ipv6 %s > %s hlim %d plen %d flow %#05x", src, dst, b[7], binary.BigEndian.Uint16(b[4:6]), label))
		proto, hl = int(b[6]), 40
		for i := 0; i < 8; i++ {
			if proto != 0 && proto != 43 && proto != 60 && proto != 44 {
				break
			}
			if len(b) < hl+8 {
				return append(out, "extension header, truncated")
			}
			next, l := int(b[hl]), (int(b[hl+1])+1)*8
			switch proto {
			case 43:
				out = append(out, srh(b[hl:min(len(b), hl+l)]))
			case 44:
				out = append(out, "fragment header")
				return out
			default:
				out = append(out, fmt.Sprintf("extension header %d, %d bytes", proto, l))
			}
			proto, hl = next, hl+l
		}
	}
	if len(b) < hl {
		return out
	}
	p := b[hl:]
	switch proto {
	case 4:
		return append(out, ip(p, 4)...)
	case 41:
		return append(out, ip(p, 6)...)
	case 6, 17:
		name := map[int]string{6: "tcp", 17: "udp"}[proto]
		if len(p) < 4 {
			return append(out, name+", truncated")
		}
		line := fmt.Sprintf("%s %d > %d", name, binary.BigEndian.Uint16(p[0:2]), binary.BigEndian.Uint16(p[2:4]))
		if proto == 6 && len(p) >= 14 {
			line += " flags " + tcpFlags(p[13])
		}
		return append(out, line)
	case 1, 58:
		if len(p) < 2 {
			return append(out, "icmp, truncated")
		}
		name := map[int]string{1: "icmp", 58: "icmpv6"}[proto]
		line := fmt.Sprintf("%s type %d code %d", name, p[0], p[1])
		if len(p) >= 8 && (proto == 1 && p[0] == 3 && p[1] == 4 || proto == 58 && p[0] == 2) {
			mtu := binary.BigEndian.Uint32(p[4:8])
			if proto == 1 {
				mtu &= 0xFFFF
			}
			line += fmt.Sprintf(" (too big: mtu %d)", mtu)
		}
		return append(out, line)
	case 59:
		return out
	default:
		return append(out, fmt.Sprintf("protocol %d, %d bytes", proto, len(p)))
	}
}

func tcpFlags(f byte) string {
	var s []string
	for i, n := range []string{"FIN", "SYN", "RST", "PSH", "ACK", "URG"} {
		if f&(1<<i) != 0 {
			s = append(s, n)
		}
	}
	return strings.Join(s, ",")
}

// srh describes a routing header (b: the whole header).
func srh(b []byte) string {
	if len(b) < 8 {
		return "routing header, truncated"
	}
	if b[2] != 4 {
		return fmt.Sprintf("routing header type %d", b[2])
	}
	sl, last := int(b[3]), int(b[4])
	var segs []string
	for i := 0; i <= last && 8+16*(i+1) <= len(b); i++ {
		segs = append(segs, netip.AddrFrom16([16]byte(b[8+16*i:8+16*(i+1)])).String())
	}
	return fmt.Sprintf("srh segments left %d [%s]", sl, strings.Join(segs, ", "))
}

// Build makes a frame from a spec (words separated by spaces), addressed from srcMAC to dstMAC:
//
//	[vlan ID] ipv4|ipv6 SRC>DST [ttl N] [tcp|udp SPORT>DPORT [syn]|icmp|icmpv6] [len PAYLOAD]
//
// e.g. "vlan 100 ipv4 198.18.1.2>198.18.2.2 udp 1000>2000". Checksums are computed.
func Build(spec string, srcMAC, dstMAC net.HardwareAddr) ([]byte, error) {
	w := strings.Fields(spec)
	vlan := -1
	var src, dst netip.Addr
	ttl, payload := 64, 18
	l4 := ""
	var sport, dport uint16
	syn := false
	next := func(i *int, what string) (string, error) {
		*i++
		if *i >= len(w) {
			return "", fmt.Errorf("%s: missing its value", what)
		}
		return w[*i], nil
	}
	num := func(s string, max int, what string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > max {
			return 0, fmt.Errorf("%s %q: want 0 to %d", what, s, max)
		}
		return n, nil
	}
	for i := 0; i < len(w); i++ {
		switch k := w[i]; k {
		case "vlan", "ttl", "hlim", "len":
			v, err := next(&i, k)
			if err != nil {
				return nil, err
			}
			limit := map[string]int{"vlan": 4094, "ttl": 255, "hlim": 255, "len": 8000}[k]
			n, err := num(v, limit, k)
			if err != nil {
				return nil, err
			}
			switch k {
			case "vlan":
				vlan = n
			case "len":
				payload = n
			default:
				ttl = n
			}
		case "ipv4", "ipv6":
			v, err := next(&i, k)
			if err != nil {
				return nil, err
			}
			s, d, ok := strings.Cut(v, ">")
			if !ok {
				return nil, fmt.Errorf("%s %q: want SRC>DST", k, v)
			}
			if src, err = netip.ParseAddr(s); err != nil {
				return nil, fmt.Errorf("%s source %q: %v", k, s, err)
			}
			if dst, err = netip.ParseAddr(d); err != nil {
				return nil, fmt.Errorf("%s destination %q: %v", k, d, err)
			}
			if src.Is4() != (k == "ipv4") || dst.Is4() != (k == "ipv4") {
				return nil, fmt.Errorf("%s %q: addresses of the other family", k, v)
			}
		case "tcp", "udp":
			v, err := next(&i, k)
			if err != nil {
				return nil, err
			}
			s, d, ok := strings.Cut(v, ">")
			if !ok {
				return nil, fmt.Errorf("%s %q: want SPORT>DPORT", k, v)
			}
			sp, err := num(s, 65535, k+" source port")
			if err != nil {
				return nil, err
			}
			dp, err := num(d, 65535, k+" destination port")
			if err != nil {
				return nil, err
			}
			l4, sport, dport = k, uint16(sp), uint16(dp)
		case "syn":
			syn = true
		case "icmp", "icmpv6":
			l4 = k
		default:
			return nil, fmt.Errorf("%q: want vlan, ipv4, ipv6, ttl, tcp, udp, syn, icmp, icmpv6 or len", k)
		}
	}
	if !src.IsValid() {
		return nil, fmt.Errorf("no ipv4 or ipv6 SRC>DST in %q", spec)
	}
	var l4b []byte
	proto := 59
	switch l4 {
	case "udp":
		proto = 17
		l4b = make([]byte, 8+payload)
		binary.BigEndian.PutUint16(l4b[0:], sport)
		binary.BigEndian.PutUint16(l4b[2:], dport)
		binary.BigEndian.PutUint16(l4b[4:], uint16(len(l4b)))
	case "tcp":
		proto = 6
		l4b = make([]byte, 20+payload)
		binary.BigEndian.PutUint16(l4b[0:], sport)
		binary.BigEndian.PutUint16(l4b[2:], dport)
		l4b[12] = 5 << 4
		l4b[13] = 0x10
		if syn {
			l4b[13] = 0x02
		}
		binary.BigEndian.PutUint16(l4b[14:], 65535)
	case "icmp", "icmpv6":
		proto = map[string]int{"icmp": 1, "icmpv6": 58}[l4]
		l4b = make([]byte, 8+payload)
		l4b[0] = map[string]byte{"icmp": 8, "icmpv6": 128}[l4] // echo request
	default:
		l4b = make([]byte, payload)
	}
	if l4 == "icmp" && src.Is6() || l4 == "icmpv6" && src.Is4() {
		return nil, fmt.Errorf("%s in an %s packet", l4, map[bool]string{true: "IPv4", false: "IPv6"}[src.Is4()])
	}
	var l3 []byte
	if src.Is4() {
		l3 = make([]byte, 20)
		l3[0] = 0x45
		binary.BigEndian.PutUint16(l3[2:], uint16(20+len(l4b)))
		l3[6] = 0x40 // DF
		l3[8], l3[9] = byte(ttl), byte(proto)
		copy(l3[12:], src.AsSlice())
		copy(l3[16:], dst.AsSlice())
		binary.BigEndian.PutUint16(l3[10:], ^sum(l3, 0))
	} else {
		l3 = make([]byte, 40)
		l3[0] = 0x60
		binary.BigEndian.PutUint16(l3[4:], uint16(len(l4b)))
		l3[6], l3[7] = byte(proto), byte(ttl)
		copy(l3[8:], src.AsSlice())
		copy(l3[24:], dst.AsSlice())
	}
	if ck := map[int]int{17: 6, 6: 16, 1: 2, 58: 2}[proto]; ck != 0 {
		var pseudo uint32
		if proto != 1 {
			ps := append(append([]byte{}, src.AsSlice()...), dst.AsSlice()...)
			pseudo = uint32(sum(ps, 0)) + uint32(proto) + uint32(len(l4b))
		}
		c := ^sum(l4b, pseudo)
		if c == 0 && proto == 17 {
			c = 0xFFFF
		}
		binary.BigEndian.PutUint16(l4b[ck:], c)
	}
	f := append(append([]byte{}, dstMAC...), srcMAC...)
	if vlan >= 0 {
		f = append(f, 0x81, 0x00, byte(vlan>>8), byte(vlan))
	}
	if src.Is4() {
		f = append(f, 0x08, 0x00)
	} else {
		f = append(f, 0x86, 0xdd)
	}
	return append(append(f, l3...), l4b...), nil
}

// sum is the ones' complement sum of b added to start, folded to 16 bits.
func sum(b []byte, start uint32) uint16 {
	s := start
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xFFFF {
		s = s&0xFFFF + s>>16
	}
	return uint16(s)
}
