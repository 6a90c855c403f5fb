package mirror

// binding_test.go: End.B6.Encaps routes (seg6local action 10 with an SRH attribute) are read in path
// order and mirrored as binding SIDs; SRHs seg6x cannot write the same are left to the kernel, said why.

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
	"golang.org/x/sys/unix"
)

// srhAttr is a SEG6_LOCAL_SRH value as iproute2 writes `srh segs A,B,...`: segments last first,
// segments left = last entry = n-1; tlv extra bytes after the segments.
func srhAttr(tlv []byte, segs ...string) []byte {
	n := len(segs)
	b := []byte{0, byte(2*n + len(tlv)/8), 4, byte(n - 1), byte(n - 1), 0, 0, 0}
	for i := n - 1; i >= 0; i-- {
		a := netip.MustParseAddr(segs[i]).As16()
		b = append(b, a[:]...)
	}
	return append(b, tlv...)
}

func TestParseBindingSIDRoute(t *testing.T) {
	b := newRoute("fc00:1::7", 128, slices.Concat(nla(localAction, u32(10)), nla(localSRH, srhAttr(nil, "fc00:5::1", "fc00:6::64"))))
	r, err := parseRoute(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Addr{netip.MustParseAddr("fc00:5::1"), netip.MustParseAddr("fc00:6::64")}
	if l := r.Local; l == nil || l.Action != 10 || !slices.Equal(l.SRH, want) || l.SRHWhy != "" {
		t.Fatalf("%+v", r.Local)
	}
	if w := "fc00:1::7/128 table main encap seg6local action End.B6.Encaps srh segs fc00:5::1,fc00:6::64"; r.String() != w {
		t.Errorf("%q, want %q", r.String(), w)
	}
	for _, c := range []struct {
		val  []byte
		want string
	}{
		{srhAttr(make([]byte, 8), "fc00:5::1"), "SRH with TLVs"},
		{func() []byte { v := srhAttr(nil, "fc00:5::1"); v[5] = 0x08; return v }(), "SRH with flags or a tag"},
		{func() []byte { v := srhAttr(nil, "fc00:5::1", "fc00:6::1"); v[3] = 0; return v }(), "segments left 0 of 2"},
		{srhAttr(nil, "fc00:5::1")[:20], "SRH attribute of 20 bytes"},
		{func() []byte { v := srhAttr(nil, "fc00:5::1"); v[2] = 2; return v }(), "not a segment routing header"},
	} {
		if segs, why := parseLocalSRH(c.val); segs != nil || !strings.Contains(why, c.want) {
			t.Errorf("%x: %v %q, want %q", c.val, segs, why, c.want)
		}
	}
}

func TestTranslateBindingSIDs(t *testing.T) {
	b6 := local("fc00:1::7/128", 10, localSRH)
	b6.Local.SRH = []netip.Addr{netip.MustParseAddr("fc00:5::1"), netip.MustParseAddr("fc00:6::64")}
	b6.Oif = 2 // its device, whose address the kernel takes as the outer source (saddr.go)
	tlv := local("fc00:1::8/128", 10, localSRH)
	tlv.Local.SRHWhy = "SRH with TLVs (HMAC, padding): seg6x policies carry none"
	insert := local("fc00:1::9/128", 9, localSRH) // End.B6: SRH insertion
	noSRH := local("fc00:1::b/128", 10)
	endSRH := local("fc00:1::c/128", 1, localSRH)
	// Interface 2 has 2001:db8:0::1, interface 3 (where fc00:5::1 would be routed) fc00:5::2.
	addrs := testAddrs(addr(2, "2001:db8:0::1/64"), addr(3, "fc00:5::2/64"))
	d := translate(&input{routes: build(b6, tlv, insert, noSRH, endSRH), rules: defaultRules(),
		ifaces: []model.Interface{{Name: "eth0"}}, addrs: addrs})
	got, ok := d.sids[netip.MustParseAddr("fc00:1::7")]
	want := model.SID{SID: netip.MustParseAddr("fc00:1::7"), Action: "End.B6.Encaps", Segs: b6.Local.SRH, Src: netip.MustParseAddr("2001:db8:0::1")}
	if !ok || !sameSID(got, want) {
		t.Errorf("End.B6.Encaps: %+v (%s), want %+v", got, statusOf(d, "fc00:1::7/128 ").Reason, want)
	}
	// `ip sr tunsrc` set: it is the source, whatever the addresses.
	tunsrc := netip.MustParseAddr("fc00:a0::1")
	d = translate(&input{routes: build(b6), rules: defaultRules(), ifaces: []model.Interface{{Name: "eth0"}}, tunsrc: tunsrc})
	if got := d.sids[netip.MustParseAddr("fc00:1::7")]; got.Src != tunsrc {
		t.Errorf("with tunsrc: %+v (%s), want src %s", got, statusOf(d, "fc00:1::7/128 ").Reason, tunsrc)
	}
	// No tunsrc and no address the kernel could take (nor a device to take it on): left to the kernel.
	noDev := local("fc00:1::d/128", 10, localSRH)
	noDev.Local.SRH = b6.Local.SRH
	d = translate(&input{routes: build(b6, noDev), rules: defaultRules(), ifaces: []model.Interface{{Name: "eth0"}},
		addrs: testAddrs(addr(2, "2001:db8:0::1/64", unix.IFA_F_TENTATIVE))})
	for route, reason := range map[string]string{
		"fc00:1::7/128 ": "no IPv6 address the kernel would take as the outer source for fc00:5::1",
		"fc00:1::d/128 ": "End.B6.Encaps route without a device",
	} {
		if s := statusOf(d, route); s.Accelerated || !strings.Contains(s.Reason, reason) {
			t.Errorf("%s: accelerated %v reason %q, want %q", route, s.Accelerated, s.Reason, reason)
		}
	}
	d = translate(&input{routes: build(b6, tlv, insert, noSRH, endSRH), rules: defaultRules(),
		ifaces: []model.Interface{{Name: "eth0"}}, addrs: addrs})
	for route, reason := range map[string]string{
		"fc00:1::8/128 ": "SRH with TLVs",
		"fc00:1::9/128 ": "SRH attribute on End.B6",
		"fc00:1::b/128 ": "segs: no SIDs",
		"fc00:1::c/128 ": "SRH attribute on End",
	} {
		if s := statusOf(d, route); s.Accelerated || !strings.Contains(s.Reason, reason) {
			t.Errorf("%s: accelerated %v reason %q, want %q", route, s.Accelerated, s.Reason, reason)
		}
	}
	if len(d.sids) != 1 {
		t.Errorf("%d SIDs, want 1: %+v", len(d.sids), d.sids)
	}
}
