package state

// routeindex_test.go: the route index gives back every prefix exactly as it was set (the keys lose
// nothing: family, every address bit, length), and get/set/del/len agree with a plain map.

import (
	"net/netip"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestRouteIndexKeepsPrefixes(t *testing.T) {
	x := newRouteIndex(0)
	want := map[netip.Prefix]uint32{}
	for i, s := range []string{"0.0.0.0/0", "255.255.255.255/32", "198.18.0.0/15", "198.18.0.0/16", "1.2.3.0/24",
		"::/0", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", "2001:db8::/32", "2001:db8::/33", "::ffff:198.18.0.1/128",
		"::c612:1/128", "fc00:0:0:1::/64", "fc00::1:0:0:0/64"} {
		p := mustPrefix(s)
		x.set(p, uint32(i)|model.GroupFlag*uint32(i%2))
		want[p] = uint32(i) | model.GroupFlag*uint32(i%2)
	}
	x.set(mustPrefix("1.2.3.0/24"), 77) // a second set replaces
	want[mustPrefix("1.2.3.0/24")] = 77
	x.del(mustPrefix("198.18.0.0/16"))
	delete(want, mustPrefix("198.18.0.0/16"))
	x.del(mustPrefix("2001:db8::/48")) // absent: nothing happens
	got := map[netip.Prefix]uint32{}
	for p, id := range x.all {
		if _, twice := got[p]; twice {
			t.Fatalf("%s yielded twice", p)
		}
		got[p] = id
	}
	if len(got) != len(want) || x.len() != len(want) {
		t.Fatalf("index holds %d (len %d), want %d: %v", len(got), x.len(), len(want), got)
	}
	for p, id := range want {
		if got[p] != id {
			t.Fatalf("all: %s -> %#x, want %#x", p, got[p], id)
		}
		if g, ok := x.get(p); !ok || g != id {
			t.Fatalf("get %s: %#x %v, want %#x", p, g, ok, id)
		}
	}
	for _, s := range []string{"198.18.0.0/16", "1.2.3.0/25", "1.2.3.1/32", "2001:db8::/48", "::/1", "198.18.0.1/32"} {
		if id, ok := x.get(mustPrefix(s)); ok {
			t.Fatalf("get %s: %#x, want none", s, id)
		}
	}
}
