package difftest

// packets.go: the differential corpus, built here byte by byte: inner IPv4 and IPv6, TCP/UDP/ICMP,
// sizes from minimum to MTU, 1..16 SIDs, TTL / hop limit 1 and 2, segments left at its edges,
// packets the kernel rejects, End with PSP (the SRH popped, or left to the kernel behind another
// extension header), and uSID (NEXT-C-SID) containers for uN and uA.

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"

	"github.com/seg6x/seg6x/tools/testsupport"
)

type testPacket struct {
	name    string
	frame   []byte
	fast    bool // seg6x must forward it in XDP (XDP_REDIRECT), not hand it to the kernel
	either  bool // XDP or the kernel, depending on the frame's buffer (see below); bytes must agree either way
	headend bool // the output is an encapsulation: the documented headend differences apply
}

func a(s string) netip.Addr { return netip.MustParseAddr(s) }

func mac(s string) []byte { m, _ := net.ParseMAC(s); return m }

func eth(etype uint16) []byte { return testsupport.Ethernet(mac(macD0), mac(macS0), 0, etype) }

// l4 builds a UDP, TCP or ICMP(v6) segment with a correct checksum over the pseudo-header.
func l4(proto byte, src, dst netip.Addr, n int) []byte {
	var b []byte
	switch proto {
	case 17:
		b = make([]byte, 8+n)
		binary.BigEndian.PutUint16(b[0:], 4000)
		binary.BigEndian.PutUint16(b[2:], 5000)
		binary.BigEndian.PutUint16(b[4:], uint16(8+n))
	case 6:
		b = make([]byte, 20+n)
		binary.BigEndian.PutUint16(b[0:], 4001)
		binary.BigEndian.PutUint16(b[2:], 80)
		binary.BigEndian.PutUint32(b[4:], 1000)
		b[12], b[13] = 5<<4, 0x18
		binary.BigEndian.PutUint16(b[14:], 65535)
	default: // ICMP / ICMPv6 echo request
		b = make([]byte, 8+n)
		b[0] = 8
		if proto == 58 {
			b[0] = 128
		}
		binary.BigEndian.PutUint16(b[4:], 7)
	}
	for i := len(b) - n; i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	ck := 2 // ICMP, ICMPv6
	switch proto {
	case 17:
		ck = 6
	case 6:
		ck = 16
	}
	binary.BigEndian.PutUint16(b[ck:], testsupport.L4Checksum(src, dst, proto, b))
	return b
}

func ipv4(src, dst netip.Addr, ttl, proto byte, payload []byte) []byte {
	return testsupport.IPv4{Src: src, Dst: dst, TTL: ttl, Proto: proto, ID: 0x1234}.Packet(payload)
}

// ipv6 has traffic class 0 and flow label 0x01234.
func ipv6(src, dst netip.Addr, nh, hl byte, payload []byte) []byte {
	return testsupport.IPv6{Src: src, Dst: dst, NextHeader: nh, HopLimit: hl, FlowLabel: 0x01234}.Packet(payload)
}

func inner4(proto byte, dst netip.Addr, ttl byte, n int) []byte {
	src := a("198.18.0.2")
	return ipv4(src, dst, ttl, proto, l4(proto, src, dst, n))
}

func inner6(proto byte, dst netip.Addr, hl byte, n int) []byte {
	src := a("fc00:a0::2")
	if proto == 1 {
		proto = 58
	}
	return ipv6(src, dst, proto, hl, l4(proto, src, dst, n))
}

// srv6 wraps inner in IPv6 + SRH (list in packet order, segments left sl) towards the active SID.
func srv6(active netip.Addr, list []netip.Addr, sl, hl byte, innerNH byte, inner []byte) []byte {
	if list == nil {
		return append(eth(0x86dd), ipv6(a("fc00:a0::2"), active, innerNH, hl, inner)...)
	}
	return append(eth(0x86dd), ipv6(a("fc00:a0::2"), active, 43, hl, append(testsupport.SRH(innerNH, list, sl), inner...))...)
}

func corpus() []testPacket {
	var ps []testPacket
	add := func(p testPacket) { ps = append(ps, p) }
	protos := map[byte]string{17: "udp", 6: "tcp", 1: "icmp"}

	// Payload bytes that make a packet of exactly the 1500-byte MTU.
	mtu4 := map[byte]int{17: 1500 - 28, 6: 1500 - 40, 1: 1500 - 28}
	mtu6 := map[byte]int{17: 1500 - 48, 6: 1500 - 60, 1: 1500 - 48}

	// Headend, inner IPv4: every route (1, 2, 4, 16 SIDs; encap.red 1 and 3), UDP/TCP/ICMP, min..MTU.
	for host, what := range map[byte]string{20: "1 SID", 21: "2 SIDs", 22: "4 SIDs", 23: "16 SIDs", 24: "encap.red 1 SID", 25: "encap.red 3 SIDs"} {
		dst := netip.AddrFrom4([4]byte{198, 18, host, 5})
		for proto, pn := range protos {
			for _, n := range []int{0, 200, mtu4[proto]} {
				if host != 20 && n == 200 {
					continue
				}
				// More than 10 SIDs do not fit the XDP headroom: the frame must grow at its tail, which
				// a veth's small receive buffers often do not allow; seg6x then hands the packet to the
				// kernel (PASS_NO_ROOM), which holds the same route.
				add(testPacket{name: fmt.Sprintf("encap4 %s %s %dB", what, pn, n), frame: append(eth(0x0800), inner4(proto, dst, 64, n)...),
					fast: host != 23, either: host == 23, headend: true})
			}
		}
	}
	d20 := a("198.18.20.5")
	add(testPacket{name: "encap4 TTL 2", frame: append(eth(0x0800), inner4(17, d20, 2, 10)...), fast: true, headend: true})
	add(testPacket{name: "encap4 TTL 1 (kernel encapsulates on input)", frame: append(eth(0x0800), inner4(17, d20, 1, 10)...), headend: true})
	add(testPacket{name: "encap4 2 SIDs, route on dev d0", frame: append(eth(0x0800), inner4(17, a("198.18.27.5"), 64, 100)...), fast: true, headend: true})
	add(testPacket{name: "plain route, no encap", frame: append(eth(0x0800), inner4(17, a("198.18.26.5"), 64, 10)...)})
	add(testPacket{name: "plain /25 inside a seg6 /24", frame: append(eth(0x0800), inner4(17, a("198.18.20.200"), 64, 10)...)})
	add(testPacket{name: "to the DUT itself", frame: append(eth(0x0800), inner4(1, a("198.18.0.1"), 64, 10)...)})
	trunc := append(eth(0x0800), inner4(17, d20, 64, 100)...)
	add(testPacket{name: "encap4 IPv4 total length beyond the frame", frame: trunc[:len(trunc)-40]})

	// Headend, inner IPv6.
	for proto, pn := range protos {
		for _, n := range []int{0, mtu6[proto]} {
			add(testPacket{name: fmt.Sprintf("encap6 1 SID %s %dB", pn, n), frame: append(eth(0x86dd), inner6(proto, a("2001:db8:20::5"), 64, n)...), fast: true, headend: true})
		}
	}
	add(testPacket{name: "encap6 encap.red 2 SIDs", frame: append(eth(0x86dd), inner6(17, a("2001:db8:21::5"), 64, 30)...), fast: true, headend: true})
	add(testPacket{name: "encap6 hop limit 2", frame: append(eth(0x86dd), inner6(17, a("2001:db8:20::5"), 2, 30)...), fast: true, headend: true})
	add(testPacket{name: "encap6 hop limit 1", frame: append(eth(0x86dd), inner6(17, a("2001:db8:20::5"), 1, 30)...), headend: true})

	// Endpoints.
	next := a("fc00:e::7")
	in4 := inner4(17, a("198.19.1.5"), 64, 20)
	for _, hl := range []byte{64, 2, 1} {
		add(testPacket{name: fmt.Sprintf("End SL 1 hop limit %d", hl), frame: srv6(a("fc00:d::1"), []netip.Addr{next, a("fc00:d::1")}, 1, hl, 4, in4), fast: hl > 1})
	}
	add(testPacket{name: "End SL 2 of 3", frame: srv6(a("fc00:d::1"), []netip.Addr{next, a("fc00:e::8"), a("fc00:d::1")}, 2, 64, 4, in4), fast: true})
	add(testPacket{name: "End SL 0 (kernel drops)", frame: srv6(a("fc00:d::1"), []netip.Addr{a("fc00:d::1")}, 0, 64, 4, in4)})
	add(testPacket{name: "End SL beyond the last entry", frame: srv6(a("fc00:d::1"), []netip.Addr{next, a("fc00:d::1")}, 3, 64, 4, in4)})
	bad := srv6(a("fc00:d::1"), []netip.Addr{next, a("fc00:d::1")}, 1, 64, 4, in4)
	bad[14+40+1] = 6 // header length says 3 segments, the packet has 2 and then the inner packet
	add(testPacket{name: "End SRH length inconsistent", frame: bad})
	rt2 := srv6(a("fc00:d::1"), []netip.Addr{next, a("fc00:d::1")}, 1, 64, 4, in4)
	rt2[14+40+2] = 2 // routing type 2, not an SRH
	add(testPacket{name: "End routing type 2", frame: rt2})
	add(testPacket{name: "End.X", frame: srv6(a("fc00:d::2"), []netip.Addr{next, a("fc00:d::2")}, 1, 64, 4, in4), fast: true})
	add(testPacket{name: "End.T (next SID routed in table 200)", frame: srv6(a("fc00:d::3"), []netip.Addr{next, a("fc00:d::3")}, 1, 64, 4, in4), fast: true})
	for proto, pn := range protos {
		// The SRv6 frame itself at the MTU: 40 + 8 + 16 bytes of outer headers.
		for _, n := range []int{0, mtu4[proto] - 64} {
			add(testPacket{name: fmt.Sprintf("End.DX4 %s %dB", pn, n), frame: srv6(a("fc00:d::4"), []netip.Addr{a("fc00:d::4")}, 0, 64, 4, inner4(proto, a("198.19.1.5"), 64, n)), fast: true})
		}
	}
	add(testPacket{name: "End.DX4 without SRH", frame: srv6(a("fc00:d::4"), nil, 0, 64, 4, in4), fast: true})
	add(testPacket{name: "End.DX4 inner TTL 2", frame: srv6(a("fc00:d::4"), []netip.Addr{a("fc00:d::4")}, 0, 64, 4, inner4(17, a("198.19.1.5"), 2, 20)), fast: true})
	add(testPacket{name: "End.DX4 inner TTL 1", frame: srv6(a("fc00:d::4"), []netip.Addr{a("fc00:d::4")}, 0, 64, 4, inner4(17, a("198.19.1.5"), 1, 20))})
	add(testPacket{name: "End.DX4 SL 1 (kernel drops)", frame: srv6(a("fc00:d::4"), []netip.Addr{next, a("fc00:d::4")}, 1, 64, 4, in4)})
	add(testPacket{name: "End.DX4 with an IPv6 inside", frame: srv6(a("fc00:d::4"), []netip.Addr{a("fc00:d::4")}, 0, 64, 41, inner6(17, a("2001:db8:30::5"), 64, 20))})
	in6 := inner6(6, a("2001:db8:30::5"), 64, 100)
	add(testPacket{name: "End.DX6", frame: srv6(a("fc00:d::5"), []netip.Addr{a("fc00:d::5")}, 0, 64, 41, in6), fast: true})
	add(testPacket{name: "End.DX6 inner hop limit 1", frame: srv6(a("fc00:d::5"), []netip.Addr{a("fc00:d::5")}, 0, 64, 41, inner6(17, a("2001:db8:30::5"), 1, 20))})
	add(testPacket{name: "End.DT6 (table 100)", frame: srv6(a("fc00:d::6"), []netip.Addr{a("fc00:d::6")}, 0, 64, 41, inner6(1, a("2001:db8:31::5"), 64, 56)), fast: true})
	add(testPacket{name: "End.DT6 at the MTU", frame: srv6(a("fc00:d::6"), []netip.Addr{a("fc00:d::6")}, 0, 64, 41, inner6(17, a("2001:db8:31::5"), 64, mtu6[17]-64)), fast: true})

	// End with PSP (docs/design/usid-kernel.md 2.2): segments left 1 on arrival, the SRH goes (popped in
	// XDP, which the redirect count checks); 2 or more, a plain End; 0 or no SRH, the kernel drops.
	// seg6x pops only an SRH right after the IPv6 header: behind a hop-by-hop header, or with TLVs,
	// it hands the packet to the kernel as it came, and the kernel pops it.
	psp := a("fc00:d::7")
	add(testPacket{name: "End psp SL 1 (SRH popped)", frame: srv6(psp, []netip.Addr{next, psp}, 1, 64, 4, in4), fast: true})
	add(testPacket{name: "End psp SL 1 hop limit 2", frame: srv6(psp, []netip.Addr{next, psp}, 1, 2, 4, in4), fast: true})
	add(testPacket{name: "End psp SL 1 hop limit 1 (kernel: time exceeded to the source)", frame: srv6(psp, []netip.Addr{next, psp}, 1, 1, 4, in4)})
	add(testPacket{name: "End psp SL 1, inner IPv6", frame: srv6(psp, []netip.Addr{next, psp}, 1, 64, 41, in6), fast: true})
	add(testPacket{name: "End psp SL 1, UDP right after the SRH", frame: srv6(psp, []netip.Addr{next, psp}, 1, 64, 17, l4(17, a("fc00:a0::2"), next, 10)), fast: true})
	add(testPacket{name: "End psp SL 1 at the MTU", frame: srv6(psp, []netip.Addr{next, psp}, 1, 64, 4, inner4(17, a("198.19.1.5"), 64, mtu4[17]-80)), fast: true})
	add(testPacket{name: "End psp SL 2 of 3 (plain End)", frame: srv6(psp, []netip.Addr{next, a("fc00:e::8"), psp}, 2, 64, 4, in4), fast: true})
	add(testPacket{name: "End psp SL 0 (kernel drops)", frame: srv6(psp, []netip.Addr{psp}, 0, 64, 4, in4)})
	add(testPacket{name: "End psp, no SRH (kernel drops)", frame: srv6(psp, nil, 0, 64, 4, in4)})
	add(testPacket{name: "End psp SL 1 behind a hop-by-hop header (the kernel pops)", frame: behindHopByHop(srv6(psp, []netip.Addr{next, psp}, 1, 64, 4, in4))})
	add(testPacket{name: "End psp SL 2 behind a hop-by-hop header (plain End, in XDP)", frame: behindHopByHop(srv6(psp, []netip.Addr{next, a("fc00:e::8"), psp}, 2, 64, 4, in4)), fast: true})
	add(testPacket{name: "End psp SL 1 behind a hop-by-hop header, hop limit 2", frame: behindHopByHop(srv6(psp, []netip.Addr{next, psp}, 1, 2, 4, in4))})
	add(testPacket{name: "End psp SL 1, SRH with a PadN TLV (the kernel pops)", frame: withPadN(srv6(psp, []netip.Addr{next, psp}, 1, 64, 4, in4))})

	// End.B6.Encaps (a binding SID into the policy fc00:e::a,fc00:e::b): the SRH advances, the policy's
	// IPv6 header + SRH goes in front (the outer takes the inner hop limit less one, its traffic class
	// and flow label). Segments left 0, no SRH: the kernel drops; hop limit 1: time exceeded.
	b6 := a("fc00:d::8")
	add(testPacket{name: "End.B6.Encaps SL 1", frame: srv6(b6, []netip.Addr{next, b6}, 1, 64, 4, in4), fast: true})
	add(testPacket{name: "End.B6.Encaps SL 2 of 3, inner IPv6", frame: srv6(b6, []netip.Addr{next, a("fc00:e::8"), b6}, 2, 64, 41, in6), fast: true})
	add(testPacket{name: "End.B6.Encaps hop limit 2", frame: srv6(b6, []netip.Addr{next, b6}, 1, 2, 4, in4), fast: true})
	add(testPacket{name: "End.B6.Encaps at the ingress MTU", frame: srv6(b6, []netip.Addr{next, b6}, 1, 64, 4, inner4(17, a("198.19.1.5"), 64, mtu4[17]-80)), fast: true})
	add(testPacket{name: "End.B6.Encaps hop limit 1 (kernel: time exceeded)", frame: srv6(b6, []netip.Addr{next, b6}, 1, 1, 4, in4)})
	add(testPacket{name: "End.B6.Encaps SL 0 (kernel drops)", frame: srv6(b6, []netip.Addr{b6}, 0, 64, 4, in4)})
	add(testPacket{name: "End.B6.Encaps, no SRH (kernel drops)", frame: srv6(b6, nil, 0, 64, 4, in4)})
	add(testPacket{name: "End.B6.Encaps, SRH with a PadN TLV", frame: withPadN(srv6(b6, []netip.Addr{next, b6}, 1, 64, 4, in4))})
	add(testPacket{name: "End then this node's End.B6.Encaps (one pass)", frame: srv6(a("fc00:d::1"), []netip.Addr{next, b6, a("fc00:d::1")}, 2, 64, 4, in4), fast: true})

	// uSID (NEXT-C-SID, docs/design/usid-kernel.md 1.3): a non-zero argument shifts the next uSID into
	// the destination and the SRH, if any, is not looked at; a zero argument is the classic step.
	add(testPacket{name: "uN shift, no SRH", frame: srv6(a("fcbb:0:100:200:300::"), nil, 0, 64, 4, in4), fast: true})
	add(testPacket{name: "uN shift, no SRH, inner IPv6", frame: srv6(a("fcbb:0:100:200::"), nil, 0, 64, 41, in6), fast: true})
	add(testPacket{name: "uN shift, hop limit 2", frame: srv6(a("fcbb:0:100:200::"), nil, 0, 2, 4, in4), fast: true})
	add(testPacket{name: "uN shift, hop limit 1 (kernel: time exceeded to the source)", frame: srv6(a("fcbb:0:100:200::"), nil, 0, 1, 4, in4)})
	add(testPacket{name: "uN shift, argument in the last bits", frame: srv6(a("fcbb:0:100::1"), nil, 0, 64, 4, in4), fast: true})
	add(testPacket{name: "uN shift, SRH untouched", frame: srv6(a("fcbb:0:100:200::"), []netip.Addr{next, a("fcbb:0:100:200::")}, 1, 64, 4, in4), fast: true})
	add(testPacket{name: "uN shift, SRH SL 0 untouched", frame: srv6(a("fcbb:0:100:200::"), []netip.Addr{a("fcbb:0:100:200::")}, 0, 64, 4, in4), fast: true})
	add(testPacket{name: "uN container done, SRH SL 1 (classic End)", frame: srv6(a("fcbb:0:100::"), []netip.Addr{next, a("fcbb:0:100::")}, 1, 64, 4, in4), fast: true})
	add(testPacket{name: "uN container done, SRH SL 2 of 3", frame: srv6(a("fcbb:0:100::"), []netip.Addr{next, a("fc00:e::8"), a("fcbb:0:100::")}, 2, 64, 4, in4), fast: true})
	add(testPacket{name: "uN container done, no SRH (kernel drops)", frame: srv6(a("fcbb:0:100::"), nil, 0, 64, 4, in4)})
	add(testPacket{name: "uN container done, SRH SL 0 (kernel drops)", frame: srv6(a("fcbb:0:100::"), []netip.Addr{a("fcbb:0:100::")}, 0, 64, 4, in4)})
	add(testPacket{name: "uN shift, UDP right after the IPv6 header", frame: srv6(a("fcbb:0:100:200::"), nil, 0, 64, 17, l4(17, a("fc00:a0::2"), a("fcbb:0:100:200::"), 10)), fast: true})
	badu := srv6(a("fcbb:0:100:200::"), []netip.Addr{next, a("fcbb:0:100:200::")}, 1, 64, 4, in4)
	badu[14+40+1] = 6
	add(testPacket{name: "uN shift, SRH length inconsistent (not read)", frame: badu, fast: true})
	add(testPacket{name: "uN shift, SRH segments left beyond the last entry (not read)", frame: srv6(a("fcbb:0:100:200::"), []netip.Addr{next, a("fcbb:0:100:200::")}, 3, 64, 4, in4), fast: true})
	rt2u := srv6(a("fcbb:0:100:200::"), []netip.Addr{next, a("fcbb:0:100:200::")}, 1, 64, 4, in4)
	rt2u[14+40+2] = 2 // routing type 2, not an SRH
	add(testPacket{name: "uN shift, routing type 2 (not read)", frame: rt2u, fast: true})
	add(testPacket{name: "uN shift, SRH with a PadN TLV (not read)", frame: withPadN(srv6(a("fcbb:0:100:200::"), []netip.Addr{next, a("fcbb:0:100:200::")}, 1, 64, 4, in4)), fast: true})
	add(testPacket{name: "uN then this node's uA in one pass (hop limit - 1 once)", frame: srv6(a("fcbb:0:100:100:e001:200::"), nil, 0, 64, 4, in4), fast: true})
	add(testPacket{name: "End then this node's End.X in one pass (hop limit - 1 once)", frame: srv6(a("fc00:d::1"), []netip.Addr{next, a("fc00:d::2"), a("fc00:d::1")}, 2, 64, 4, in4), fast: true})
	add(testPacket{name: "uN psp,next-csid shift", frame: srv6(a("fcbb:0:101:200::"), nil, 0, 64, 4, in4), fast: true})
	add(testPacket{name: "uN psp,next-csid container done, SRH SL 1 (the kernel does not pop)", frame: srv6(a("fcbb:0:101::"), []netip.Addr{next, a("fcbb:0:101::")}, 1, 64, 4, in4), fast: true})
	add(testPacket{name: "uN 48/16 shift", frame: srv6(a("2001:db8:0:100:200:300::"), nil, 0, 64, 4, in4), fast: true})
	add(testPacket{name: "uN 48/16 container done, SRH SL 1", frame: srv6(a("2001:db8:0:100::"), []netip.Addr{next, a("2001:db8:0:100::")}, 1, 64, 4, in4), fast: true})
	add(testPacket{name: "uA shift", frame: srv6(a("fcbb:0:100:e001:200:300::"), nil, 0, 64, 4, in4), fast: true})
	add(testPacket{name: "uA shift, SRH untouched", frame: srv6(a("fcbb:0:100:e001:200::"), []netip.Addr{next, a("fcbb:0:100:e001:200::")}, 1, 64, 4, in4), fast: true})
	add(testPacket{name: "uA container done, SRH SL 1 (classic End.X)", frame: srv6(a("fcbb:0:100:e001::"), []netip.Addr{next, a("fcbb:0:100:e001::")}, 1, 64, 4, in4), fast: true})
	add(testPacket{name: "uA container done, no SRH (kernel drops)", frame: srv6(a("fcbb:0:100:e001::"), nil, 0, 64, 4, in4)})
	return ps
}

// behindHopByHop puts an 8-byte hop-by-hop options header (one PadN option) between the IPv6 header
// of an Ethernet frame and what followed it.
func behindHopByHop(f []byte) []byte {
	ip := f[14:]
	hbh := []byte{ip[6], 0, 1, 4, 0, 0, 0, 0}
	ip[6] = 0
	binary.BigEndian.PutUint16(ip[4:], binary.BigEndian.Uint16(ip[4:])+8)
	return append(append(append([]byte(nil), f[:14+40]...), hbh...), f[14+40:]...)
}

// withPadN appends an 8-byte PadN TLV (type 4, RFC 8754 2.1.1.2) to the SRH right after the IPv6
// header of an Ethernet frame.
func withPadN(f []byte) []byte {
	ip := f[14:]
	srh := ip[40:]
	end := 14 + 40 + (int(srh[1])+1)*8
	srh[1]++
	binary.BigEndian.PutUint16(ip[4:], binary.BigEndian.Uint16(ip[4:])+8)
	return append(append(append([]byte(nil), f[:end]...), 4, 6, 0, 0, 0, 0, 0, 0), f[end:]...)
}

// maskHeadend blanks the fields of an encapsulated frame where seg6x differs from the kernel on
// purpose (docs/kernel-mirror.md): the outer traffic class and flow label, the outer hop limit,
// and the inner TTL (with the IPv4 header checksum) or hop limit.
func maskHeadend(f []byte) []byte {
	b := append([]byte(nil), f...)
	if len(b) < 54 || binary.BigEndian.Uint16(b[12:]) != 0x86dd {
		return b
	}
	b[14] &= 0xf0
	b[15], b[16], b[17] = 0, 0, 0
	b[21] = 0
	nh, off := b[20], 54
	if nh == 43 && len(b) > 56 {
		nh, off = b[54], 54+(int(b[55])+1)*8
	}
	switch {
	case nh == 4 && len(b) >= off+20:
		b[off+8], b[off+10], b[off+11] = 0, 0, 0
	case nh == 41 && len(b) >= off+40:
		b[off+7] = 0
	}
	return b
}

// jumboCorpus is what a 9000-byte fabric carries: tenant packets and SRv6 packets of 8000 bytes and
// more (multi-buffer frames in XDP) through every behavior the fast path takes whole, and the headend
// whose 16 SIDs do not fit a frame's headroom (handed to the kernel, PASS_MULTIBUF, either way right).
func jumboCorpus() []testPacket {
	var ps []testPacket
	add := func(p testPacket) { ps = append(ps, p) }
	const n = 8000
	next := a("fc00:e::7")
	for _, c := range []struct {
		host byte
		what string
	}{{20, "1 SID"}, {21, "2 SIDs"}, {24, "encap.red 1 SID"}} {
		dst := netip.AddrFrom4([4]byte{198, 18, c.host, 5})
		add(testPacket{name: "jumbo encap4 udp " + c.what, frame: append(eth(0x0800), inner4(17, dst, 64, n)...), fast: true, headend: true})
		add(testPacket{name: "jumbo encap4 tcp " + c.what, frame: append(eth(0x0800), inner4(6, dst, 64, n)...), fast: true, headend: true})
	}
	add(testPacket{name: "jumbo encap4 16 SIDs (no headroom: the kernel encapsulates)", frame: append(eth(0x0800), inner4(17, a("198.18.23.5"), 64, n)...), either: true, headend: true})
	add(testPacket{name: "jumbo encap4 at the MTU (1 SID)", frame: append(eth(0x0800), inner4(17, a("198.18.20.5"), 64, 9000-64-28)...), fast: true, headend: true})
	add(testPacket{name: "jumbo encap6 1 SID", frame: append(eth(0x86dd), inner6(17, a("2001:db8:20::5"), 64, n)...), fast: true, headend: true})
	big4 := inner4(17, a("198.19.1.5"), 64, n)
	big6 := inner6(6, a("2001:db8:30::5"), 64, n)
	add(testPacket{name: "jumbo End SL 1", frame: srv6(a("fc00:d::1"), []netip.Addr{next, a("fc00:d::1")}, 1, 64, 4, big4), fast: true})
	add(testPacket{name: "jumbo End.X", frame: srv6(a("fc00:d::2"), []netip.Addr{next, a("fc00:d::2")}, 1, 64, 4, big4), fast: true})
	add(testPacket{name: "jumbo End.T", frame: srv6(a("fc00:d::3"), []netip.Addr{next, a("fc00:d::3")}, 1, 64, 4, big4), fast: true})
	add(testPacket{name: "jumbo End.DX4", frame: srv6(a("fc00:d::4"), []netip.Addr{a("fc00:d::4")}, 0, 64, 4, big4), fast: true})
	add(testPacket{name: "jumbo End.DX6", frame: srv6(a("fc00:d::5"), []netip.Addr{a("fc00:d::5")}, 0, 64, 41, big6), fast: true})
	add(testPacket{name: "jumbo End.DT6", frame: srv6(a("fc00:d::6"), []netip.Addr{a("fc00:d::6")}, 0, 64, 41, inner6(17, a("2001:db8:31::5"), 64, n)), fast: true})
	add(testPacket{name: "jumbo End psp SL 1 (SRH popped)", frame: srv6(a("fc00:d::7"), []netip.Addr{next, a("fc00:d::7")}, 1, 64, 4, big4), fast: true})
	add(testPacket{name: "jumbo End.B6.Encaps SL 1", frame: srv6(a("fc00:d::8"), []netip.Addr{next, a("fc00:d::8")}, 1, 64, 4, big4), fast: true})
	add(testPacket{name: "jumbo uN", frame: srv6(a("fcbb:0:100:200::"), nil, 0, 64, 4, big4), fast: true})
	add(testPacket{name: "jumbo End.DX4 at the MTU", frame: srv6(a("fc00:d::4"), []netip.Addr{a("fc00:d::4")}, 0, 64, 4, inner4(17, a("198.19.1.5"), 64, 9000-64-28)), fast: true})
	return ps
}
