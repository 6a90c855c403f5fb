package state

// tunnel_test.go: the overhead EncapOverhead states is the header length the encoder writes, for every
// mode and segment count, and FillPaths derives the tunnel MTU from it.

import (
	"errors"
	"net/netip"
	"testing"
)

func TestEncapOverheadIsTheEncodedHeader(t *testing.T) {
	for _, mode := range []string{ModeEncap, ModeEncapRed} {
		for n := 1; n <= MaxSegments; n++ {
			p := &policy{mode: mode, usedSrc: netip.MustParseAddr("fc00:1::1"), hopLimit: 64}
			for i := 0; i < n; i++ {
				p.segs = append(p.segs, netip.AddrFrom16([16]byte{0xfc, 0, 0, 2, 15: byte(i + 1)}))
			}
			h, err := outerHeader(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := EncapOverhead(mode, n); got != int(h.HdrLen) {
				t.Errorf("%s, %d SIDs: EncapOverhead %d, encoded header %d bytes", mode, n, got, h.HdrLen)
			}
		}
	}
}

func TestFillPaths(t *testing.T) {
	a, b := netip.MustParseAddr("fc00:2::1"), netip.MustParseAddr("fc00:9::1")
	src := netip.MustParseAddr("fc00:1::1")
	routes := []Route{
		{Mode: ModeEncap, Segs: []netip.Addr{a, b}, UsedSrc: src},    // 40 + 8 + 32 = 80
		{Mode: ModeEncapRed, Segs: []netip.Addr{a, b}, UsedSrc: src}, // 40 + 8 + 16 = 64
		{Mode: ModeEncapRed, Segs: []netip.Addr{a}, UsedSrc: src},    // 40
		{Mode: ModeEncap, Segs: []netip.Addr{b}, UsedSrc: src},
		{Mode: ModePass},
	}
	lookups := 0
	FillPaths(routes, func(dst, s netip.Addr) (Path, error) {
		lookups++
		if dst == b {
			return Path{}, errors.New("no route to fc00:9::1")
		}
		return Path{Egress: "fab", MTU: 1500}, nil
	})
	want := []struct {
		egress string
		mtu    int
	}{{"fab", 1420}, {"fab", 1436}, {"fab", 1460}, {"unknown: no route to fc00:9::1", 0}, {"", 0}}
	for i, w := range want {
		if routes[i].Egress != w.egress || routes[i].TunnelMTU != w.mtu {
			t.Errorf("route %d: egress %q tunnel MTU %d, want %q %d", i, routes[i].Egress, routes[i].TunnelMTU, w.egress, w.mtu)
		}
	}
	if lookups != 2 {
		t.Errorf("%d lookups, want 2 (one per first SID and source)", lookups)
	}
}
