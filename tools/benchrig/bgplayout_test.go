package benchrig

// bgplayout_test.go: the routes of `seg6x-bench bgp`: one tenant injects what the benchmark always
// did; more routes spread over tenants, every prefix once, every route valid.

import (
	"fmt"
	"net/netip"
	"testing"
)

func TestBGPLayoutOneTenantAsBefore(t *testing.T) {
	lay, err := newBGPLayout(100000, 100, 0)
	if err != nil || lay.tenants != 1 {
		t.Fatalf("100000 routes: %d tenants, %v", lay.tenants, err)
	}
	for _, i := range []int{0, 1, 99, 100, 65535, 65536, 99999} {
		r := lay.route(i)
		want := netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18 + byte(i>>16), byte(i >> 8), byte(i)}), 32)
		if r.Prefix != want || r.RD != fmt.Sprintf("198.18.254.%d:1", i%100%250) || r.RTs[0] != "65000:777" ||
			r.SID != netip.MustParseAddr(fmt.Sprintf("fc00:2:0:%x::1", 0x100+i%100)) ||
			r.NextHop != netip.MustParseAddr(fmt.Sprintf("fc00:9::%x", 1+i%100)) || lay.vlan(lay.tenant(i)) != 77 {
			t.Errorf("route %d: %+v", i, r)
		}
	}
}

func TestBGPLayoutSpreadsOverTenants(t *testing.T) {
	lay, err := newBGPLayout(1000000, 100, 0)
	if err != nil || lay.tenants != 8 {
		t.Fatalf("1000000 routes: %d tenants, %v", lay.tenants, err)
	}
	small, _ := newBGPLayout(5000, 7, 3)
	seen := map[string]bool{}
	for i := range small.routes {
		r := small.route(i)
		if err := r.Validate(); err != nil {
			t.Fatalf("route %d: %v", i, err)
		}
		if seen[r.Prefix.String()] {
			t.Fatalf("route %d: %s twice", i, r.Prefix)
		}
		seen[r.Prefix.String()] = true
		if r.RTs[0] != small.rt(small.tenant(i)) || r.SID.As16()[15] != byte(1+small.tenant(i)) {
			t.Errorf("route %d: %+v", i, r)
		}
	}
	for _, bad := range [][3]int{{0, 1, 0}, {200000, 1, 1}, {1000, 0, 0}, {1000, 1, 65}} {
		if _, err := newBGPLayout(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
