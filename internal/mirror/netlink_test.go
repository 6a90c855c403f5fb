package mirror

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// nla is one netlink attribute, padded to 4 bytes (native endian, as the kernel writes them).
func nla(typ uint16, val ...[]byte) []byte {
	var v []byte
	for _, b := range val {
		v = append(v, b...)
	}
	b := make([]byte, 4, 4+len(v)+3)
	binary.NativeEndian.PutUint16(b[0:], uint16(4+len(v)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

// newRoute is an RTM_NEWROUTE payload for an IPv6 seg6local route dst/bits in the main table.
func newRoute(dst string, bits uint8, encap []byte) []byte {
	m := make([]byte, unix.SizeofRtMsg)
	m[0], m[1] = unix.AF_INET6, bits // family, dst_len
	m[4], m[6], m[7] = unix.RT_TABLE_MAIN, unix.RTPROT_BOOT, unix.RTN_UNICAST
	a := netip.MustParseAddr(dst).As16()
	m = append(m, nla(unix.RTA_TABLE, u32(unix.RT_TABLE_MAIN))...)
	m = append(m, nla(unix.RTA_DST, a[:])...)
	m = append(m, nla(unix.RTA_ENCAP_TYPE, binary.NativeEndian.AppendUint16(nil, encapSeg6Local))...)
	return append(m, nla(unix.RTA_ENCAP, encap)...)
}

// The SEG6_LOCAL_FLAVORS nest as the kernel dumps it (NLA_F_NESTED set) and as a writer may send
// it (not set); lengths are u8 attributes padded to 4 bytes.
func TestParseFlavors(t *testing.T) {
	nh := netip.MustParseAddr("fc00:e1::2").As16()
	for _, nested := range []uint16{0, unix.NLA_F_NESTED} {
		flv := nla(localFlavors|nested, nla(flvOperation, u32(flvNextCSID)), nla(flvLCBlockBits, []byte{32}), nla(flvLCNodeFnBit, []byte{32}))
		b := newRoute("fcbb:0:100:e001::", 64, slices.Concat(nla(localAction, u32(2)), nla(localNH6, nh[:]), flv))
		r, err := parseRoute(b)
		if err != nil {
			t.Fatal(err)
		}
		l := r.Local
		if r.Dst != netip.MustParsePrefix("fcbb:0:100:e001::/64") || l == nil || l.Action != 2 || l.NH6 != netip.AddrFrom16(nh) ||
			l.Flavors != flvNextCSID || l.LBLen != 32 || l.NFLen != 32 || !slices.Equal(l.Attrs, []uint16{localNH6, localFlavors}) {
			t.Fatalf("nested flag %#x: %+v %+v", nested, r, l)
		}
		if want := "fcbb:0:100:e001::/64 table main encap seg6local action End.X flavors next-csid lblen 32 nflen 32"; r.String() != want {
			t.Errorf("%q, want %q", r.String(), want)
		}
		sd, why := localSID(r, netip.Addr{}, nil)
		if why != "" || sd.Name() != "fcbb:0:100:e001::/64" || !sd.HasFlavor("next-csid") || sd.NFLen != 32 {
			t.Errorf("SID %+v, %q", sd, why)
		}
	}
	// psp alone, no lengths; an operation of a short attribute is an error, not a panic.
	b := newRoute("fcbb:0:300::", 48, slices.Concat(nla(localAction, u32(1)), nla(localFlavors|unix.NLA_F_NESTED, nla(flvOperation, u32(flvPSP|flvUSD)))))
	r, err := parseRoute(b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Local.Flavors != flvPSP|flvUSD || r.String() != "fcbb:0:300::/48 table main encap seg6local action End flavors psp,usd" {
		t.Errorf("%+v %q", r.Local, r.String())
	}
	if _, why := localSID(r, netip.Addr{}, nil); why != "flavor usd on End is not mirrored (the kernel runs next-csid on End and End.X, psp on End, no other)" {
		t.Errorf("reason %q", why)
	}
	// psp alone on End, as `ip -6 route add ... action End flavors psp` installs it: a PSP SID.
	b = newRoute("fc00:d::7", 128, slices.Concat(nla(localAction, u32(1)), nla(localFlavors|unix.NLA_F_NESTED, nla(flvOperation, u32(flvPSP)))))
	if r, err = parseRoute(b); err != nil {
		t.Fatal(err)
	}
	if r.String() != "fc00:d::7/128 table main encap seg6local action End flavors psp" {
		t.Errorf("%q", r.String())
	}
	if sd, why := localSID(r, netip.Addr{}, nil); why != "" || sd.Name() != "fc00:d::7" || !slices.Equal(sd.Flavors, []string{"psp"}) || sd.LBLen != 0 || sd.NFLen != 0 {
		t.Errorf("SID %+v, %q", sd, why)
	}
	b = newRoute("fcbb:0:300::", 48, slices.Concat(nla(localAction, u32(1)), nla(localFlavors, nla(flvOperation, []byte{0x10}))))
	if _, err := parseRoute(b); err == nil {
		t.Error("a 1-byte operation parsed")
	}
}
