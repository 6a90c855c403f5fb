package packet

// vxlan_test.go: the VXLAN fast path (bpf/vxlan.h) on exact bytes. A VXLAN device is committed as the
// kernel mirror makes it (origin kernel), with tc0 as an attached port of its bridge and big0 as the
// underlay to the remote VTEPs (fc00:b::/48 via big0). Frames from tc0 to a remote MAC leave
// encapsulated (the expected outer headers and UDP checksum built here, independently of the
// program); VXLAN from a remote arriving on fab0 leaves decapsulated through tc0; everything else is
// handed to the kernel unchanged (or dropped) with its reason counted once.

import (
	"runtime"

	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/frame"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/slowpath"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/fixtures"
)

var (
	vxLocal   = netip.MustParseAddr("fc00:a::1")
	vxRemote  = netip.MustParseAddr("fc00:b::1")
	vxHost    = mustMAC("02:00:00:00:c1:01") // behind tc0
	vxDynHost = mustMAC("02:00:00:00:c1:02") // behind tc0, learned
	vxRMAC    = mustMAC("02:00:00:00:b1:01") // behind fc00:b::1, the bridge sends it to the tunnel
	vxFlood   = mustMAC("02:00:00:00:b1:02") // behind fc00:b::2, the bridge floods it
	vxNode    = mustMAC("02:00:00:00:c1:fe") // the bridge's own
	vxFarMAC  = mustMAC("02:00:00:00:b1:03") // behind fc00:2:1::5, reached through tf0 (MTU 1500)
	vxFar     = netip.MustParseAddr("fc00:2:1::5")
	big0MAC   = mustMAC("02:00:00:00:0d:00")
	big0Peer  = mustMAC("02:00:00:00:0d:02")
)

func mustMAC(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

// vxSetup commits tc0 as an interface and the VXLAN device vx0 of bridge br0 (tc0 its port).
func vxSetup(t *testing.T) uint32 {
	t.Helper()
	commit(t, state.Op{Kind: model.OpAdd, Interface: &model.Interface{Name: "tc0"}})
	tc0, err := rig.Ifindex("tc0")
	if err != nil {
		t.Fatal(err)
	}
	v := vxDevice(tc0)
	commit(t, state.Op{Kind: model.OpAdd, Origin: model.OriginKernel, VXLAN: &v})
	t.Cleanup(func() {
		commit(t, state.Op{Kind: model.OpDelete, Origin: model.OriginKernel, VXLAN: &model.VXLAN{Dev: "vx0"}})
		commit(t, state.Op{Kind: model.OpDelete, Interface: &model.Interface{Name: "tc0"}})
	})
	return tc0
}

// vxDevice is vxSetup's VXLAN device, its port tc0 at ifindex tc0.
func vxDevice(tc0 uint32) model.VXLAN {
	return model.VXLAN{Dev: "vx0", Ifindex: 4242, VNI: 100, Local: vxLocal, Port: 4789, SrcPortLow: 5000, SrcPortHigh: 5010,
		MTU: 1500, Bridge: "br0", BridgeIfindex: 4241, PortLearning: true,
		Ports:   []model.BridgePort{{Name: "tc0", Ifindex: int(tc0), MTU: 1500, Learning: true}},
		Remotes: []netip.Addr{vxRemote},
		RemoteMACs: []model.RemoteMAC{{MAC: vxRMAC.String(), Remote: vxRemote, Bridged: true},
			{MAC: vxFarMAC.String(), Remote: vxFar, Bridged: true},
			{MAC: vxFlood.String(), Remote: netip.MustParseAddr("fc00:b::2")}},
		LocalMACs: []model.LocalMAC{{MAC: vxHost.String(), Port: "tc0", Ifindex: int(tc0)},
			{MAC: vxDynHost.String(), Port: "tc0", Ifindex: int(tc0), Dynamic: true},
			{MAC: vxNode.String(), Port: "br0", Ifindex: 4241, Local: true}}}
}

func build(t *testing.T, spec string, src, dst net.HardwareAddr) []byte {
	t.Helper()
	b, err := frame.Build(spec, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// csum16 is the Internet checksum of b (RFC 1071), written plainly.
func csum16(chunks ...[]byte) uint16 {
	var s uint32
	for _, b := range chunks {
		for i := 0; i+1 < len(b); i += 2 {
			s += uint32(b[i])<<8 | uint32(b[i+1])
		}
		if len(b)%2 == 1 {
			s += uint32(b[len(b)-1]) << 8
		}
	}
	for s > 0xFFFF {
		s = s&0xFFFF + s>>16
	}
	return ^uint16(s)
}

// vxlanPacket is the IPv6 + UDP + VXLAN packet carrying inner (VNI vni), with a correct checksum.
func vxlanPacket(src, dst netip.Addr, sport uint16, vni uint32, tclass uint8, inner []byte) []byte {
	ulen := 16 + len(inner)
	p := make([]byte, 40+ulen)
	binary.BigEndian.PutUint32(p[0:], 6<<28|uint32(tclass)<<20)
	binary.BigEndian.PutUint16(p[4:], uint16(ulen))
	p[6], p[7] = 17, 64
	s, d := src.As16(), dst.As16()
	copy(p[8:], s[:])
	copy(p[24:], d[:])
	u := p[40:]
	binary.BigEndian.PutUint16(u[0:], sport)
	binary.BigEndian.PutUint16(u[2:], 4789)
	binary.BigEndian.PutUint16(u[4:], uint16(ulen))
	u[8] = 0x08
	binary.BigEndian.PutUint32(u[12:], vni<<8)
	copy(u[16:], inner)
	pseudo := make([]byte, 40)
	copy(pseudo, s[:])
	copy(pseudo[16:], d[:])
	binary.BigEndian.PutUint32(pseudo[32:], uint32(ulen))
	pseudo[39] = 17
	c := csum16(pseudo, u)
	if c == 0 {
		c = 0xFFFF
	}
	binary.BigEndian.PutUint16(u[6:], c)
	return p
}

func ether(dst, src net.HardwareAddr, l3 []byte) []byte {
	return append(append(append(append([]byte{}, dst...), src...), 0x86, 0xdd), l3...)
}

// Independent model of the program's flow hash (bpf/flowlabel.h) for an inner IPv4 frame: the
// source port is 5000 + label * 10 / 2^20 for vx0's range 5000-5010.
func fmix32(h uint32) uint32 { // bpf/flowlabel.h
	h ^= h >> 16
	h *= 0x85EBCA6B
	h ^= h >> 13
	h *= 0xC2B2AE35
	h ^= h >> 16
	return h
}

func sport4(inner []byte, l3 int) uint16 {
	le := binary.LittleEndian.Uint32
	ip := inner[l3:]
	h := fmix32(le(ip[12:])^0x9E3779B9) ^ le(ip[16:])
	h = fmix32(h) ^ uint32(ip[9])
	if ip[9] == 6 || ip[9] == 17 {
		h = fmix32(h) ^ le(ip[20:])
	}
	label := fmix32(h) & 0xFFFFF
	if label == 0 {
		label = 1
	}
	return uint16(5000 + label*10>>20)
}

// arpTo is an ARP reply from src to dst (neighbor discovery stays the kernel's, even unicast).
func arpTo(dst, src net.HardwareAddr) []byte {
	b := append(append(append([]byte{}, dst...), src...), 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 2)
	b = append(append(b, src...), 198, 18, 2, 2)
	return append(append(b, dst...), 198, 18, 1, 2)
}

// nsTo is an IPv6 neighbor solicitation (ICMPv6 type 135) from src to dst's MAC.
func nsTo(t *testing.T, dst, src net.HardwareAddr) []byte {
	b := build(t, "ipv6 2001:db8:2::2>2001:db8:1::2 icmpv6", src, dst)
	b[14+40] = 135
	return b
}

type vxCase struct {
	name, dev string
	in, out   []byte // out nil: unchanged (XDP_PASS) or not compared (XDP_DROP)
	action    string
	reason    string
}

func runVX(t *testing.T, c vxCase) { runSplit(t, c, 0) }

// runSplit runs c as a multi-buffer frame whose first buffer holds linear bytes (0: as the kernel puts
// the frame, in one buffer up to a page).
func runSplit(t *testing.T, c vxCase, linear int) {
	t.Helper()
	f := &fixtures.Fixture{Name: c.name, Dev: c.dev, Input: c.in}
	before := uint64(0)
	if c.reason != "" {
		before, _ = rig.ReasonCount(c.reason)
	}
	var res fixtures.Result
	var err error
	if linear > 0 {
		res, err = rig.RunSplit(nil, f, linear)
	} else {
		res, err = rig.Run(nil, f, 1)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := dataplane.Actions[res.Action]; got != c.action {
		t.Errorf("%s: %s, want %s", c.name, got, c.action)
	}
	want := c.out
	if want == nil && c.action == "XDP_PASS" {
		want = c.in
	}
	if want != nil && !bytes.Equal(res.Output, want) {
		t.Errorf("%s: output differs\n got %s\nwant %s", c.name, hex.EncodeToString(res.Output), hex.EncodeToString(want))
	}
	if c.reason != "" {
		if after, _ := rig.ReasonCount(c.reason); after != before+1 {
			t.Errorf("%s: %s counted %d times, want once", c.name, c.reason, after-before)
		}
	}
}

func TestVXLANEncap(t *testing.T) {
	vxSetup(t)
	udp4 := build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1000>2000 len 64", vxHost, vxRMAC)
	tagged := build(t, "vlan 7 ipv4 198.18.1.2>198.18.2.2 tcp 1000>80", vxHost, vxRMAC)
	ipv6 := build(t, "ipv6 2001:db8:1::2>2001:db8:2::2 udp 1000>2000 len 32", vxHost, vxRMAC)
	ipv6[15] |= 0x30 // traffic class 0x03: ECN CE, carried as ECT(0) outside (RFC 6040)
	full := build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1000>2000 len 1472", vxHost, vxRMAC)
	over := build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1000>2000 len 1473", vxHost, vxRMAC)
	encap := func(inner []byte, sport uint16, tclass uint8) []byte {
		return ether(big0Peer, big0MAC, vxlanPacket(vxLocal, vxRemote, sport, 100, tclass, inner))
	}
	cases := []vxCase{
		{"IPv4 UDP to a remote MAC", "tc0", udp4, encap(udp4, sport4(udp4, 14), 0), "XDP_REDIRECT", ""},
		{"802.1Q-tagged, carried with its tag", "tc0", tagged, encap(tagged, sport4(tagged, 18), 0), "XDP_REDIRECT", ""},
		{"1514-byte frame (the device's MTU)", "tc0", full, encap(full, sport4(full, 14), 0), "XDP_REDIRECT", ""},
		{"beyond the device's MTU", "tc0", over, nil, "XDP_PASS", "PASS_VXLAN_TOO_BIG"},
		{"broadcast", "tc0", build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1>2", vxHost, mustMAC("ff:ff:ff:ff:ff:ff")), nil, "XDP_PASS", "PASS_VXLAN_FLOOD"},
		{"unknown MAC", "tc0", build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1>2", vxHost, mustMAC("02:00:00:00:99:01")), nil, "XDP_PASS", "PASS_VXLAN_FLOOD"},
		{"remote MAC the bridge floods", "tc0", build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1>2", vxHost, vxFlood), nil, "XDP_PASS", "PASS_VXLAN_FLOOD"},
		{"to another local MAC", "tc0", build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1>2", vxHost, vxDynHost), nil, "XDP_PASS", "PASS_VXLAN_LOCAL"},
		{"to the bridge itself", "tc0", build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1>2", vxHost, vxNode), nil, "XDP_PASS", "PASS_VXLAN_NODE"},
		{"from a MAC the bridge has not learned", "tc0", build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1>2", mustMAC("02:00:00:00:99:02"), vxRMAC), nil, "XDP_PASS", "PASS_VXLAN_LEARN"},
		{"unicast ARP to a remote MAC", "tc0", arpTo(vxRMAC, vxHost), nil, "XDP_PASS", "PASS_VXLAN_ND"},
		{"unicast neighbor solicitation to a remote MAC", "tc0", nsTo(t, vxRMAC, vxHost), nil, "XDP_PASS", "PASS_VXLAN_ND"},
		{"from a multicast source MAC", "tc0", build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1>2", mustMAC("03:00:00:00:99:02"), vxRMAC), nil, "XDP_PASS", "PASS_VXLAN_MALFORMED"},
	}
	for _, c := range cases {
		runVX(t, c)
	}
	// A multi-buffer frame (its first KB in the first buffer): the checksum is summed in place, so the
	// kernel's VXLAN device takes it.
	runSplit(t, vxCase{"1514-byte frame in two buffers", "tc0", full, nil, "XDP_PASS", "PASS_MULTIBUF"}, 1024)
	// IPv6 inner: only the ECN bits and the source port differ from the IPv4 case; the port is the
	// program's hash, so it is read back and checked to be in the range, the rest byte for byte.
	f := &fixtures.Fixture{Name: "ipv6", Dev: "tc0", Input: ipv6}
	res, err := rig.Run(nil, f, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Output) < 70 {
		t.Fatalf("IPv6 inner: %s, %d bytes", dataplane.Actions[res.Action], len(res.Output))
	}
	sport := binary.BigEndian.Uint16(res.Output[54:])
	if want := encap(ipv6, sport, 0x02); dataplane.Actions[res.Action] != "XDP_REDIRECT" || !bytes.Equal(res.Output, want) || sport < 5000 || sport > 5009 {
		t.Errorf("IPv6 inner, ECN CE: %s\n got %x\nwant %x", dataplane.Actions[res.Action], res.Output, want)
	}
	// A learned source MAC: its first frame goes to the kernel (which refreshes the entry), the next
	// ones are the fast path's.
	dyn := build(t, "ipv4 198.18.1.3>198.18.2.2 udp 1000>2000", vxDynHost, vxRMAC)
	runVX(t, vxCase{"learned source, first frame", "tc0", dyn, nil, "XDP_PASS", "PASS_VXLAN_LEARN"})
	runVX(t, vxCase{"learned source, next frame", "tc0", dyn, encap(dyn, sport4(dyn, 14), 0), "XDP_REDIRECT", ""})
}

func TestVXLANDecap(t *testing.T) {
	vxSetup(t)
	inner := build(t, "ipv4 198.18.2.2>198.18.1.2 udp 2000>1000 len 64", vxRMAC, vxHost)
	fab0MAC, fabPeer := mustMAC("02:00:00:00:01:00"), mustMAC("02:00:00:00:01:02")
	pkt := func(src netip.Addr, vni uint32, in []byte) []byte {
		return ether(fab0MAC, fabPeer, vxlanPacket(src, vxLocal, 40000, vni, 0, in))
	}
	good := pkt(vxRemote, 100, inner)
	padded := append(append([]byte{}, good...), 0, 0, 0, 0)
	badSum := bytes.Clone(good)
	badSum[len(badSum)-1] ^= 0xFF
	zeroSum := bytes.Clone(good)
	zeroSum[14+40+6], zeroSum[14+40+7] = 0, 0
	flags := bytes.Clone(good)
	flags[14+48] = 0x0C
	short := ether(fab0MAC, fabPeer, vxlanPacket(vxRemote, vxLocal, 40000, 100, 0, nil)[:40+12])
	binary.BigEndian.PutUint16(short[14+4:], 12)
	binary.BigEndian.PutUint16(short[14+44:], 12)
	cases := []vxCase{
		{"to a local MAC", "fab0", good, inner, "XDP_REDIRECT", ""},
		{"Ethernet padding behind the packet", "fab0", padded, inner, "XDP_REDIRECT", ""},
		{"wrong UDP checksum", "fab0", badSum, nil, "XDP_PASS", "PASS_VXLAN_CSUM"},
		{"zero UDP checksum", "fab0", zeroSum, nil, "XDP_PASS", "PASS_VXLAN_CSUM"},
		{"from a source that is no remote (the boundary rule)", "fab0", pkt(netip.MustParseAddr("fc00:b::99"), 100, inner), nil, "XDP_DROP", "DROP_VXLAN_SOURCE"},
		{"unknown VNI", "fab0", pkt(vxRemote, 101, inner), nil, "XDP_PASS", "PASS_VXLAN_VNI"},
		{"flags other than I", "fab0", flags, nil, "XDP_PASS", "PASS_VXLAN_MALFORMED"},
		{"UDP too short for a VXLAN header", "fab0", short, nil, "XDP_PASS", "PASS_VXLAN_MALFORMED"},
		{"inner broadcast", "fab0", pkt(vxRemote, 100, build(t, "ipv4 198.18.2.2>198.18.1.255 udp 1>2", vxRMAC, mustMAC("ff:ff:ff:ff:ff:ff"))), nil, "XDP_PASS", "PASS_VXLAN_FLOOD"},
		{"inner unknown destination", "fab0", pkt(vxRemote, 100, build(t, "ipv4 198.18.2.2>198.18.1.9 udp 1>2", vxRMAC, mustMAC("02:00:00:00:99:03"))), nil, "XDP_PASS", "PASS_VXLAN_FLOOD"},
		{"inner to the bridge itself", "fab0", pkt(vxRemote, 100, build(t, "ipv4 198.18.2.2>198.18.1.1 udp 1>2", vxRMAC, vxNode)), nil, "XDP_PASS", "PASS_VXLAN_NODE"},
		{"inner source the bridge has not learned", "fab0", pkt(vxRemote, 100, build(t, "ipv4 198.18.2.9>198.18.1.2 udp 1>2", mustMAC("02:00:00:00:99:04"), vxHost)), nil, "XDP_PASS", "PASS_VXLAN_LEARN"},
		{"inner unicast ARP", "fab0", pkt(vxRemote, 100, arpTo(vxHost, vxRMAC)), nil, "XDP_PASS", "PASS_VXLAN_ND"},
		{"inner neighbor solicitation", "fab0", pkt(vxRemote, 100, nsTo(t, vxHost, vxRMAC)), nil, "XDP_PASS", "PASS_VXLAN_ND"},
		{"inner to a MAC behind the tunnel", "fab0", pkt(vxRemote, 100, build(t, "ipv4 198.18.2.9>198.18.2.2 udp 1>2", vxRMAC, vxRMAC)), nil, "XDP_PASS", "PASS_VXLAN_LOCAL"},
		{"not VXLAN: UDP to another port of the node", "fab0", func() []byte {
			b := bytes.Clone(good)
			b[14+42], b[14+43] = 0x12, 0x34
			return b
		}(), nil, "XDP_PASS", ""},
	}
	// Outer ECN (RFC 6040): marks that change the inner packet are the kernel's to apply.
	ecnIn := func(innerECN byte) []byte {
		in := build(t, "ipv4 198.18.2.2>198.18.1.2 udp 2000>1000 len 64", vxRMAC, vxHost)
		in[15] = innerECN
		binary.BigEndian.PutUint16(in[24:], 0)
		binary.BigEndian.PutUint16(in[24:], csum16(in[14:34]))
		return in
	}
	withOuter := func(inner []byte, outerECN byte) []byte {
		return ether(fab0MAC, fabPeer, vxlanPacket(vxRemote, vxLocal, 40000, 100, outerECN, inner))
	}
	ce := ecnIn(3)
	cases = append(cases,
		vxCase{"outer CE over inner ECT(0)", "fab0", withOuter(ecnIn(2), 3), nil, "XDP_PASS", "PASS_VXLAN_ECN"},
		vxCase{"outer CE over inner not-ECT", "fab0", withOuter(ecnIn(0), 3), nil, "XDP_PASS", "PASS_VXLAN_ECN"},
		vxCase{"outer ECT(1) over inner ECT(0)", "fab0", withOuter(ecnIn(2), 1), nil, "XDP_PASS", "PASS_VXLAN_ECN"},
		vxCase{"outer CE over inner CE: unchanged", "fab0", withOuter(ce, 3), ce, "XDP_REDIRECT", ""},
		vxCase{"outer ECT(0) over inner ECT(0): unchanged", "fab0", withOuter(ecnIn(2), 2), ecnIn(2), "XDP_REDIRECT", ""})

	// Outer fragments (a far VTEP's fragmented frame): the kernel reassembles them, then its VXLAN
	// device decapsulates (docs/vxlan.md).
	big := pkt(vxRemote, 100, build(t, "ipv4 198.18.2.2>198.18.1.2 udp 2000>1000 len 1472", vxRMAC, vxHost))
	frags, err := slowpath.FragmentIPv6(big, 14, 1500, 7)
	if err != nil || len(frags) != 2 {
		t.Fatalf("fragments: %v", err)
	}
	for i, f := range frags {
		cases = append(cases, vxCase{fmt.Sprintf("outer fragment %d", i), "fab0", f, nil, "XDP_PASS", ""})
	}
	for _, c := range cases {
		runVX(t, c)
	}
	runSplit(t, vxCase{"1472-byte datagram in two buffers", "fab0", big, nil, "XDP_PASS", "PASS_MULTIBUF"}, 1024)
}

// A frame the device's MTU admits but the underlay's does not (1514 bytes through tf0, MTU 1500):
// encapsulated in full and queued for the daemon, which cuts the outer IPv6 packet into fragments
// (internal/slowpath FragmentIPv6) and sends them out of tf0; without a daemon the kernel gets the
// frame as it came.
func TestVXLANFragmentedEncap(t *testing.T) {
	vxSetup(t)
	full := build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1000>2000 len 1472", vxHost, vxFarMAC)
	small := build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1000>2000 len 64", vxHost, vxFarMAC)
	tf0MAC, tfPeer := mustMAC("02:00:00:00:0f:00"), mustMAC("02:00:00:00:0f:02")
	encap := func(inner []byte) []byte {
		return ether(tfPeer, tf0MAC, vxlanPacket(vxLocal, vxFar, sport4(inner, 14), 100, 0, inner))
	}
	runVX(t, vxCase{"fits the underlay", "tc0", small, encap(small), "XDP_REDIRECT", ""})
	runVX(t, vxCase{"larger than the underlay, no daemon", "tc0", full, nil, "XDP_PASS", "PASS_FIB_FRAG_NEEDED"})

	ring := openSlowRing(t)
	defer ring.Close()
	runVX(t, vxCase{"larger than the underlay", "tc0", full, nil, "XDP_DROP", "SLOW_VXLAN_FRAGMENT"})
	ring.rd.SetDeadline(time.Now().Add(2 * time.Second))
	rec, err := ring.rd.Read()
	if err != nil {
		t.Fatalf("no slow path record: %v", err)
	}
	m, frame, err := slowpath.Decode(rec.RawSample)
	if err != nil {
		t.Fatal(err)
	}
	tf0, _ := rig.Ifindex("tf0")
	if m.Kind != slowpath.KindFragment6 || m.Ifindex != tf0 || m.Mtu != 1500 || m.L3off != 14 {
		t.Fatalf("record %+v, want kind %d, ifindex %d, MTU 1500, l3off 14", m, slowpath.KindFragment6, tf0)
	}
	if want := encap(full); !bytes.Equal(frame, want) {
		t.Fatalf("the queued frame is not the whole encapsulation\n got %x\nwant %x", frame, want)
	}
	frags, err := slowpath.Expand(m, frame)
	if err != nil || len(frags) != 2 || len(frags[0])-14 != 1496 || len(frags[1])-14 != 40+8+1570-40-1448 {
		t.Fatalf("fragments: %v, %d", err, len(frags))
	}
}

// TestVXLANChecksumEveryLength: the UDP checksum the program computes (encap) and verifies (decap)
// over every frame length from the smallest to 1514 bytes: each combination of its 512- and 256-byte
// blocks, 8-byte words and 1 to 7 trailing bytes, against the plain RFC 1071 sum above. The inner
// payload bytes vary with the length, so that no two lengths sum alike.
func TestVXLANChecksumEveryLength(t *testing.T) {
	vxSetup(t)
	fab0MAC, fabPeer := mustMAC("02:00:00:00:01:00"), mustMAC("02:00:00:00:01:02")
	for n := 18; n <= 1472; n++ {
		out := build(t, fmt.Sprintf("ipv4 198.18.1.2>198.18.2.2 udp 1000>2000 len %d", n), vxHost, vxRMAC)
		for i := 42; i < len(out); i++ {
			out[i] = byte(i*7 + n)
		}
		want := ether(big0Peer, big0MAC, vxlanPacket(vxLocal, vxRemote, sport4(out, 14), 100, 0, out))
		runVX(t, vxCase{fmt.Sprintf("encap, %d-byte frame", len(out)), "tc0", out, want, "XDP_REDIRECT", ""})

		in := build(t, fmt.Sprintf("ipv4 198.18.2.2>198.18.1.2 udp 2000>1000 len %d", n), vxRMAC, vxHost)
		for i := 42; i < len(in); i++ {
			in[i] = byte(i*5 + n)
		}
		runVX(t, vxCase{fmt.Sprintf("decap, %d-byte frame", len(in)), "fab0",
			ether(fab0MAC, fabPeer, vxlanPacket(vxRemote, vxLocal, 40000, 100, 0, in)), in, "XDP_REDIRECT", ""})
		if t.Failed() {
			return
		}
	}
}

// TestVXLANCachedDecisionsFollowTheTables: the program caches what the tables decided per flow
// (vx_enc_cache, vx_dec_cache, per CPU); a change of the tables reaches the very next frame. The
// frames run on one CPU, so the second of each pair is the cache's.
func TestVXLANCachedDecisionsFollowTheTables(t *testing.T) {
	tc0 := vxSetup(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var one unix.CPUSet
	one.Set(0)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Fatal(err)
	}
	fab0MAC, fabPeer := mustMAC("02:00:00:00:01:00"), mustMAC("02:00:00:00:01:02")
	tf0MAC, tfPeer := mustMAC("02:00:00:00:0f:00"), mustMAC("02:00:00:00:0f:02")
	out := build(t, "ipv4 198.18.1.2>198.18.2.2 udp 1000>2000 len 64", vxHost, vxRMAC)
	in := build(t, "ipv4 198.18.2.2>198.18.1.2 udp 2000>1000 len 64", vxRMAC, vxHost)
	vx := ether(fab0MAC, fabPeer, vxlanPacket(vxRemote, vxLocal, 40000, 100, 0, in))
	toRemote := ether(big0Peer, big0MAC, vxlanPacket(vxLocal, vxRemote, sport4(out, 14), 100, 0, out))
	toFar := ether(tfPeer, tf0MAC, vxlanPacket(vxLocal, vxFar, sport4(out, 14), 100, 0, out))
	for i := 0; i < 2; i++ {
		runVX(t, vxCase{fmt.Sprintf("encap %d", i), "tc0", out, toRemote, "XDP_REDIRECT", ""})
		runVX(t, vxCase{fmt.Sprintf("decap %d", i), "fab0", vx, in, "XDP_REDIRECT", ""})
	}
	// A frame that differs from a cached decision only in the last bytes of its inner source MAC
	// (one the bridge has not learned) is the kernel's: a decision's key is the whole of its inputs.
	unlearned := build(t, "ipv4 198.18.2.2>198.18.1.2 udp 2000>1000 len 64", mustMAC("02:00:00:00:99:04"), vxHost)
	runVX(t, vxCase{"decap from an unlearned inner source after a cached one", "fab0",
		ether(fab0MAC, fabPeer, vxlanPacket(vxRemote, vxLocal, 40000, 100, 0, unlearned)), nil, "XDP_PASS", "PASS_VXLAN_LEARN"})
	// The remote MAC moves to another VTEP: the next frame to it leaves towards the new one.
	v := vxDevice(tc0)
	v.RemoteMACs[0].Remote = vxFar
	commit(t, state.Op{Kind: model.OpReplace, Origin: model.OriginKernel, VXLAN: &v})
	for i := 0; i < 2; i++ {
		runVX(t, vxCase{fmt.Sprintf("encap after the remote MAC moved %d", i), "tc0", out, toFar, "XDP_REDIRECT", ""})
		runVX(t, vxCase{fmt.Sprintf("decap after the remote MAC moved %d", i), "fab0", vx, in, "XDP_REDIRECT", ""})
	}
	// The local host goes away: its frames are the kernel's again, both ways.
	v.LocalMACs = v.LocalMACs[1:]
	commit(t, state.Op{Kind: model.OpReplace, Origin: model.OriginKernel, VXLAN: &v})
	runVX(t, vxCase{"encap from the host that went", "tc0", out, nil, "XDP_PASS", "PASS_VXLAN_LEARN"})
	runVX(t, vxCase{"decap to the host that went", "fab0", vx, nil, "XDP_PASS", "PASS_VXLAN_FLOOD"})
}
