package bgp

// pathstore_test.go: the importer's compact storage gives back what was put in: a prefix's
// destination keys through adds and removes (IPv4 and IPv6), shared values equal to the originals.

import (
	"net/netip"
	"slices"
	"testing"
)

func TestPrefixIndex(t *testing.T) {
	x := newPrefixIndex()
	p4, p6 := netip.MustParsePrefix("198.18.1.0/24"), netip.MustParsePrefix("2001:db8::/32")
	keys := func(p netip.Prefix) []string {
		var ks []string
		x.keys(p, func(k string) { ks = append(ks, k) })
		slices.Sort(ks)
		return ks
	}
	all := func() []netip.Prefix {
		var ps []netip.Prefix
		x.each(func(p netip.Prefix) { ps = append(ps, p) })
		slices.SortFunc(ps, netip.Prefix.Compare)
		return ps
	}
	for _, p := range []netip.Prefix{p4, p6} {
		x.add(p, "1:1")
		x.add(p, "1:2")
		x.add(p, "1:1") // once
		x.add(p, "1:3")
		if got := keys(p); !slices.Equal(got, []string{"1:1", "1:2", "1:3"}) {
			t.Fatalf("%s: %v", p, got)
		}
		x.remove(p, "1:1") // the inline one: another takes its place
		x.remove(p, "9:9") // not there
		if got := keys(p); !slices.Equal(got, []string{"1:2", "1:3"}) {
			t.Fatalf("%s after removing 1:1: %v", p, got)
		}
	}
	if got := all(); !slices.Equal(got, []netip.Prefix{p4, p6}) {
		t.Fatalf("prefixes %v", got)
	}
	for _, k := range []string{"1:3", "1:2"} {
		x.remove(p4, k)
	}
	if got := keys(p4); len(got) != 0 || len(x.v4.one) != 0 || len(x.v4.more) != 0 {
		t.Fatalf("emptied %s: %v, %d/%d entries left", p4, got, len(x.v4.one), len(x.v4.more))
	}
	if got := all(); !slices.Equal(got, []netip.Prefix{p6}) {
		t.Fatalf("prefixes %v", got)
	}
	for _, s := range []string{"10.0.0.0/8", "0.0.0.0/0", "255.255.255.255/32", "198.18.0.1/32"} {
		if p := netip.MustParsePrefix(s); prefix4(key4(p)) != p {
			t.Errorf("%s: key round trip gives %s", p, prefix4(key4(p)))
		}
	}
}

func TestInternerShares(t *testing.T) {
	var n interner
	a, b := n.list([]string{"65000:1", "65000:2"}), n.list([]string{"65000:1", "65000:2"})
	if !slices.Equal(a, []string{"65000:1", "65000:2"}) || &a[0] != &b[0] {
		t.Fatalf("lists %v %v not one shared copy", a, b)
	}
	if c := n.list([]string{"65000:1"}); len(c) != 1 || &c[0] == &a[0] {
		t.Fatalf("a shorter list shares the longer one's: %v", c)
	}
	if n.list(nil) != nil {
		t.Fatal("nil list")
	}
	sid := netip.MustParseAddr("fc00:2::1")
	s1, s2 := n.segList(sid), n.segList(sid)
	if len(s1) != 1 || s1[0] != sid || &s1[0] != &s2[0] || cap(s1) != 1 {
		t.Fatalf("segment lists %v %v (cap %d)", s1, s2, cap(s1))
	}
	if n.str("65000:1") != "65000:1" {
		t.Fatal("str")
	}
}
