package state

// tunnel_test.go: FillPaths derives the tunnel MTU from EncapOverhead (which internal/dataplane's
// tests check against the header its encoder writes).

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestFillPaths(t *testing.T) {
	a, b := netip.MustParseAddr("fc00:2::1"), netip.MustParseAddr("fc00:9::1")
	src := netip.MustParseAddr("fc00:1::1")
	routes := []model.Route{
		{Mode: model.ModeEncap, Segs: []netip.Addr{a, b}, UsedSrc: src},    // 40 + 8 + 32 = 80
		{Mode: model.ModeEncapRed, Segs: []netip.Addr{a, b}, UsedSrc: src}, // 40 + 8 + 16 = 64
		{Mode: model.ModeEncapRed, Segs: []netip.Addr{a}, UsedSrc: src},    // 40
		{Mode: model.ModeEncap, Segs: []netip.Addr{b}, UsedSrc: src},
		{Mode: model.ModePass},
	}
	lookups := 0
	FillPaths(routes, nil, func(dst, s netip.Addr) (Path, error) {
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

// A route naming a policy: the egresses of its lists that are up and the smallest tunnel MTU.
func TestFillPathsOfNamedPolicies(t *testing.T) {
	a, b, c := netip.MustParseAddr("fc00:2::1"), netip.MustParseAddr("fc00:3::1"), netip.MustParseAddr("fc00:9::1")
	policies := []model.Policy{
		{Name: "w", Mode: model.ModeEncap, Lists: []model.SegList{{Segs: []netip.Addr{a}}, {Segs: []netip.Addr{b, a}}, {Segs: []netip.Addr{c}, Down: true}}},
		{Name: "broken", Mode: model.ModeEncapRed, Lists: []model.SegList{{Segs: []netip.Addr{c}}, {Segs: []netip.Addr{a}}}},
		{Name: "down", Mode: model.ModeEncap, Lists: []model.SegList{{Segs: []netip.Addr{a}, Down: true}}},
	}
	routes := []model.Route{{Policy: "w"}, {Policy: "broken"}, {Policy: "down"}}
	FillPaths(routes, policies, func(dst, s netip.Addr) (Path, error) {
		switch dst {
		case a:
			return Path{Egress: "fab1", MTU: 1500}, nil
		case b:
			return Path{Egress: "fab2", MTU: 9000}, nil
		}
		return Path{}, errors.New("no route")
	})
	want := []struct {
		egress string
		mtu    int
	}{
		{"fab1,fab2", 1500 - 40 - 8 - 16}, // list 0 (1 SID in the SRH) on fab1; list 1 on fab2 is larger; list 2 down
		{"list 0 unknown: no route,fab1", 1500 - 40},
		{"none: every list of policy down is down", 0},
	}
	for i, w := range want {
		if routes[i].Egress != w.egress || routes[i].TunnelMTU != w.mtu {
			t.Errorf("route %d: egress %q tunnel MTU %d, want %q %d", i, routes[i].Egress, routes[i].TunnelMTU, w.egress, w.mtu)
		}
	}
}
