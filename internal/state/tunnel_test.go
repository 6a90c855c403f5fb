package state

// tunnel_test.go: FillPaths derives the tunnel MTU from EncapOverhead (which internal/dataplane's
// tests check against the header its encoder writes).

import (
	"errors"
	"net/netip"
	"testing"
)

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
