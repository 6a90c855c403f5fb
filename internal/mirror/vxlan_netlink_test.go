package mirror

// vxlan_netlink_test.go: VXLAN devices and bridge / VXLAN forwarding entries parsed from the
// attributes this kernel sends (docs/design/vxlan-kernel.md section 4), and which of them seg6x would
// leave to the kernel, and why.

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

// newLink is an RTM_NEWLINK payload of an up device of kind with IFLA_INFO_DATA data.
func newLink(index int32, name, kind string, data ...[]byte) []byte {
	m := make([]byte, unix.SizeofIfInfomsg)
	binary.NativeEndian.PutUint32(m[4:], uint32(index))
	binary.NativeEndian.PutUint32(m[8:], unix.IFF_UP)
	m = append(m, nla(unix.IFLA_IFNAME, append([]byte(name), 0))...)
	m = append(m, nla(unix.IFLA_MTU, u32(1500))...)
	m = append(m, nla(unix.IFLA_MASTER, u32(4))...)
	info := nla(unix.IFLA_INFO_KIND, append([]byte(kind), 0))
	info = append(info, nla(unix.IFLA_INFO_DATA|unix.NLA_F_NESTED, data...)...)
	return append(m, nla(unix.IFLA_LINKINFO|unix.NLA_F_NESTED, info)...)
}

// vx0 as section 4.1 dumps it (local 2001:db8:1::a, VNI 100, port 4789, nolearning).
func vx0Data(extra ...[]byte) [][]byte {
	local := netip.MustParseAddr("2001:db8:1::a").As16()
	d := [][]byte{nla(vxID, u32(100)), nla(vxLocal6, local[:]), nla(vxTTL, []byte{0}), nla(vxTTLInherit, []byte{0}),
		nla(vxTOS, []byte{0}), nla(vxDF, []byte{0}), nla(vxLabel, be16(0), be16(0)), nla(vxLabelPolicy, u32(0)),
		nla(vxLearning, []byte{0}), nla(vxProxy, []byte{0}), nla(vxRSC, []byte{0}), nla(vxL2Miss, []byte{0}),
		nla(vxL3Miss, []byte{0}), nla(vxCollectMD, []byte{0}), nla(vxAgeing, u32(300)), nla(vxLimit, u32(0)),
		nla(vxPort, be16(4789)), nla(vxUDPCsum, []byte{1}), nla(vxZeroCsum6Tx, []byte{0}), nla(vxZeroCsum6Rx, []byte{0}),
		nla(vxRemCsumTx, []byte{0}), nla(vxRemCsumRx, []byte{0}), nla(vxLocalBypass, []byte{1}),
		nla(vxPortRange, be16(0), be16(0)), nla(vxReservedBits, vxReservedDefault[:])}
	return append(d, extra...)
}

func TestParseVXLANLink(t *testing.T) {
	v, err := parseVXLANLink(newLink(7, "vx0", "vxlan", vx0Data()...))
	if err != nil || v == nil {
		t.Fatalf("%v %v", v, err)
	}
	if v.Ifindex != 7 || v.Name != "vx0" || !v.Up || v.Master != 4 || v.MTU != 1500 || v.VNI != 100 ||
		v.Local != netip.MustParseAddr("2001:db8:1::a") || v.Group.IsValid() || v.Port != 4789 || v.Learning ||
		!v.LocalBypass || v.Ageing != 300 || v.TTL != 0 {
		t.Fatalf("%+v", v)
	}
	if r := v.refusal(); r != "" {
		t.Fatalf("the default device refused: %s", r)
	}
	if v, err := parseVXLANLink(newLink(4, "br0", "bridge")); v != nil || err != nil {
		t.Fatalf("a bridge: %v %v", v, err)
	}
	// Without a port attribute the kernel uses 8472; learning defaults to on.
	v, _ = parseVXLANLink(newLink(8, "vx1", "vxlan", nla(vxID, u32(5)), nla(vxLocal6, v.Local.AsSlice())))
	if v.Port != 8472 || !v.Learning {
		t.Fatalf("defaults: %+v", v)
	}
	group := func(a string) []byte { b := netip.MustParseAddr(a).As16(); return nla(vxGroup6, b[:]) }
	for _, c := range []struct {
		attrs [][]byte
		want  string
	}{
		{[][]byte{group("2001:db8:1::b")}, ""}, // a default remote
		{[][]byte{group("ff05::100")}, "multicast group"},
		{[][]byte{nla(vxCollectMD, []byte{1})}, "external"},
		{[][]byte{nla(vxTTLInherit, []byte{1})}, "inherited"},
		{[][]byte{nla(vxTOS, []byte{1})}, "inherited"},
		{[][]byte{nla(vxLabelPolicy, u32(1))}, "inherited"},
		{[][]byte{nla(vxZeroCsum6Tx, []byte{1})}, "zero UDP checksums"},
		{[][]byte{nla(vxReservedBits, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0xff})}, "reserved bits"},
		{[][]byte{nla(vxGBP)}, "GBP"},
		{[][]byte{nla(vxProxy, []byte{1})}, "proxy"},
	} {
		v, err := parseVXLANLink(newLink(9, "vx2", "vxlan", vx0Data(c.attrs...)...))
		if err != nil {
			t.Fatal(err)
		}
		if r := v.refusal(); (c.want == "") != (r == "") || !strings.Contains(r, c.want) {
			t.Errorf("%x: refusal %q, want %q", c.attrs, r, c.want)
		}
	}
	v4 := netip.MustParseAddr("198.18.0.1").As4()
	if v, _ := parseVXLANLink(newLink(9, "vx3", "vxlan", nla(vxID, u32(5)), nla(vxLocal, v4[:]))); v.refusal() != "IPv4 underlay" {
		t.Errorf("IPv4 local: %q", v.refusal())
	}
	if v, _ := parseVXLANLink(newLink(9, "vx4", "vxlan", nla(vxID, u32(5)))); !strings.Contains(v.refusal(), "no local") {
		t.Errorf("no local: %q", v.refusal())
	}
}

// neigh is an AF_BRIDGE RTM_NEWNEIGH payload on ifindex.
func neigh(family uint8, ifindex int32, state uint16, flags uint8, attrs ...[]byte) []byte {
	m := make([]byte, unix.SizeofNdMsg)
	m[0] = family
	binary.NativeEndian.PutUint32(m[4:], uint32(ifindex))
	binary.NativeEndian.PutUint16(m[8:], state)
	m[10] = flags
	return append(m, slices.Concat(attrs...)...)
}

func TestParseFDB(t *testing.T) {
	mac := func(last byte) []byte { return nla(unix.NDA_LLADDR, []byte{2, 0, 0, 0, 0x0e, last}) }
	dst := func(a string) []byte { b := netip.MustParseAddr(a).As16(); return nla(unix.NDA_DST, b[:]) }
	zero := nla(unix.NDA_LLADDR, make([]byte, 6))
	parse := func(b []byte) *fdbEntry {
		t.Helper()
		e, err := parseFDB(b, false)
		if err != nil || e == nil {
			t.Fatalf("%v %v", e, err)
		}
		return e
	}
	// The default remote list: one message per remote, each its own entry.
	b1 := parse(neigh(unix.AF_BRIDGE, 7, 0xc0, unix.NTF_SELF, zero, dst("2001:db8:1::b")))
	b2 := parse(neigh(unix.AF_BRIDGE, 7, 0xc0, unix.NTF_SELF, zero, dst("2001:db8:1::c")))
	if b1.bridgeTable() || b1.key() == b2.key() || b1.refusal() != "" {
		t.Fatalf("BUM remotes: %+v %+v", b1, b2)
	}
	// A unicast MAC has one remote: a replace with another dst is the same entry.
	u1 := parse(neigh(unix.AF_BRIDGE, 7, 0x02, unix.NTF_SELF|unix.NTF_EXT_LEARNED, mac(8), dst("2001:db8:1::b")))
	u2 := parse(neigh(unix.AF_BRIDGE, 7, 0x02, unix.NTF_SELF|unix.NTF_EXT_LEARNED, mac(8), dst("2001:db8:1::c")))
	if u1.key() != u2.key() || u2.Dst != netip.MustParseAddr("2001:db8:1::c") {
		t.Fatalf("unicast replace: %q %q", u1.key(), u2.key())
	}
	// FRR's bridge-table half: MAC -> the VXLAN port, no remote.
	br := parse(neigh(unix.AF_BRIDGE, 7, 0x02, unix.NTF_EXT_LEARNED, mac(3), nla(unix.NDA_MASTER, u32(4))))
	if !br.bridgeTable() || br.Master != 4 || br.refusal() != "" || br.key() == parse(neigh(unix.AF_BRIDGE, 7, 0x02,
		unix.NTF_SELF, mac(3), dst("2001:db8:1::b"))).key() {
		t.Fatalf("bridge table: %+v", br)
	}
	// port, vni and via: parsed; via is refused.
	v := parse(neigh(unix.AF_BRIDGE, 7, 0xc0, unix.NTF_SELF, mac(5), dst("2001:db8:1::b"), nla(unix.NDA_PORT, be16(4790)),
		nla(unix.NDA_VNI, u32(4242)), nla(unix.NDA_IFINDEX, u32(3))))
	if v.Port != 4790 || v.VNI != 4242 || v.Via != 3 || !strings.Contains(v.refusal(), "via") {
		t.Fatalf("port/vni/via: %+v %q", v, v.refusal())
	}
	if e := parse(neigh(unix.AF_BRIDGE, 7, 0xc0, unix.NTF_SELF, mac(6), nla(ndaNHID, u32(10)))); !strings.Contains(e.refusal(), "next-hop group") {
		t.Errorf("nhid: %q", e.refusal())
	}
	if e := parse(neigh(unix.AF_BRIDGE, 7, 0xc0, unix.NTF_SELF, mac(6), dst("198.18.0.2"))); e.refusal() != "IPv4 remote" {
		t.Errorf("IPv4 remote: %q", e.refusal())
	}
	// Not a bridge entry; malformed ones are errors.
	if e, err := parseFDB(neigh(unix.AF_INET6, 7, 0x02, 0, mac(1)), false); e != nil || err != nil {
		t.Errorf("AF_INET6 neighbour: %v %v", e, err)
	}
	for _, bad := range [][]byte{neigh(unix.AF_BRIDGE, 7, 0x02, 0), neigh(unix.AF_BRIDGE, 7, 0x02, 0, nla(unix.NDA_LLADDR, []byte{1, 2})),
		neigh(unix.AF_BRIDGE, 7, 0x02, unix.NTF_SELF, mac(1), nla(unix.NDA_DST, []byte{1, 2, 3})), {7, 0}} {
		if e, err := parseFDB(bad, false); err == nil {
			t.Errorf("%x: parsed as %+v", bad, e)
		}
	}
}

// parseVXLANLink is parseLink for a VXLAN device: nil (no error) for a link that is not one.
func parseVXLANLink(b []byte) (*kernelVXLAN, error) {
	l, err := parseLink(b)
	if err != nil || l == nil {
		return nil, err
	}
	return l.VX, nil
}
