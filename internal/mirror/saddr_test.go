package mirror

// saddr_test.go: the kernel's source address selection for a binding SID's outer header, rule by
// rule, on address sets whose answers were read from this kernel's own End.B6.Encaps output
// (saddr_live_test.go checks the same cases against the kernel itself).

import (
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

// defaultLabels is the kernel's address label table before any `ip addrlabel` change, in its order.
func defaultLabels() []addrLabel {
	var ls []addrLabel
	for _, e := range []struct {
		p     string
		label uint32
	}{{"::1/128", 0}, {"::/96", 3}, {"::ffff:0:0/96", 4}, {"2001::/32", 6}, {"2001:10::/28", 7}, {"3ffe::/16", 12},
		{"2002::/16", 2}, {"fec0::/10", 11}, {"fc00::/7", 5}, {"::/0", 1}} {
		p := netip.MustParsePrefix(e.p)
		ls = append(ls, addrLabel{prefix: p, class: labelClass(p), label: e.label})
	}
	return ls
}

func addr(ifindex int, p string, flags ...uint32) hostAddr {
	pf := netip.MustParsePrefix(p)
	a := hostAddr{addr: pf.Addr(), plen: pf.Bits(), ifindex: ifindex}
	for _, f := range flags {
		a.flags |= f
	}
	return a
}

// testAddrs is a host with addrs (in the kernel's order), the default labels and no sysctl set.
func testAddrs(addrs ...hostAddr) *hostAddrs {
	return &hostAddrs{addrs: addrs, labels: defaultLabels(), conf: func(int, string) int { return 0 }}
}

func TestKernelSourceSelection(t *testing.T) {
	const lo, d0, d1 = 1, 2, 3
	seg := netip.MustParseAddr("2001:db8:e::a")
	base := []hostAddr{addr(lo, "::1/128"), addr(d0, "2001:db8:0::1/64"), addr(d0, "fe80::1/64"),
		addr(d1, "2001:db8:1::1/64"), addr(d1, "fe80::2/64")}
	dep := uint32(unix.IFA_F_DEPRECATED)
	for _, c := range []struct {
		name  string
		addrs []hostAddr
		oif   int
		want  string
	}{
		{"the route's device has an address: it wins (rule 5), not the segment's egress", base, d0, "2001:db8:0::1"},
		{"on the segment's egress device", base, d1, "2001:db8:1::1"},
		{"the route's device has only a link-local address: another device's",
			[]hostAddr{addr(lo, "::1/128"), addr(d0, "fe80::1/64"), addr(d1, "2001:db8:1::1/64")}, d0, "2001:db8:1::1"},
		{"a tie on every rule: the first address met",
			[]hostAddr{addr(lo, "2001:db8:0::1/128"), addr(lo, "::1/128"), addr(d0, "fe80::1/64"), addr(d1, "2001:db8:1::1/64")}, d0, "2001:db8:0::1"},
		{"the longest prefix shared with the segment",
			[]hostAddr{addr(lo, "2001:db8:0::1/128"), addr(lo, "::1/128"), addr(d0, "fe80::1/64"),
				addr(d1, "2001:db8:e:1::1/64"), addr(d1, "2001:db8:1::1/64")}, d0, "2001:db8:e:1::1"},
		{"the shared prefix counts up to the address's own prefix length only",
			[]hostAddr{addr(d1, "2001:db8:e::1/40"), addr(d1, "2001:db8:f::1/64")}, d0, "2001:db8:f::1"},
		{"the outgoing device before the label",
			[]hostAddr{addr(d0, "fc00:a::1/64"), addr(d1, "2001:db8:e:1::1/64")}, d0, "fc00:a::1"},
		{"on the outgoing device, the label before the prefix",
			[]hostAddr{addr(d0, "fc00:a::1/64"), addr(d0, "2001:db8:9::1/64")}, d0, "2001:db8:9::1"},
		{"the longest prefix among the outgoing device's",
			[]hostAddr{addr(d0, "2001:db8:0::1/64"), addr(d0, "2001:db8:e:5::1/64"), addr(d0, "fc00:a::1/64"),
				addr(d1, "2001:db8:e:1::1/64")}, d0, "2001:db8:e:5::1"},
		{"deprecated addresses last, even on the outgoing device",
			[]hostAddr{addr(lo, "2001:db8:0::1/128"), addr(d0, "2001:db8:0::1/64", dep), addr(d0, "2001:db8:e:5::1/64", dep),
				addr(d0, "fc00:a::1/64", dep), addr(d1, "2001:db8:e:1::1/64"), addr(d1, "2001:db8:1::1/64")}, d0, "2001:db8:e:1::1"},
		{"a tentative address is not one",
			[]hostAddr{addr(d0, "2001:db8:0::1/64", unix.IFA_F_TENTATIVE), addr(d1, "2001:db8:1::1/64")}, d0, "2001:db8:1::1"},
		{"public before temporary",
			[]hostAddr{addr(d0, "2001:db8:e:7::1/64", unix.IFA_F_TEMPORARY), addr(d0, "2001:db8:0::1/64")}, d0, "2001:db8:0::1"},
		{"the smallest scope that reaches the segment",
			[]hostAddr{addr(d0, "fe80::1/64"), addr(d0, "fec0::1/64"), addr(d1, "2001:db8:1::1/64")}, d0, "2001:db8:1::1"},
		{"no address of a global scope at all: a link-local one",
			[]hostAddr{addr(lo, "::1/128"), addr(d1, "fe80::2/64")}, d0, "fe80::2"},
		{"the segment itself, if it is local", append([]hostAddr{addr(d1, "2001:db8:e::a/64")}, base...), d0, "2001:db8:e::a"},
	} {
		got, why := testAddrs(c.addrs...).source(c.oif, seg)
		if got != netip.MustParseAddr(c.want) {
			t.Errorf("%s: %v (%s), want %s", c.name, got, why, c.want)
		}
	}
	if got, why := testAddrs(addr(d0, "2001:db8:0::1/64", unix.IFA_F_TENTATIVE)).source(d0, seg); got.IsValid() || why == "" {
		t.Errorf("no address but a tentative one: %v, want none", got)
	}

	// use_oif_addrs_only on the route's device: only its addresses.
	h := testAddrs(addr(d0, "fe80::1/64"), addr(d1, "2001:db8:1::1/64"))
	h.conf = func(ifindex int, key string) int { return b2i(ifindex == d0 && key == "use_oif_addrs_only") }
	if got, _ := h.selectSource(d0, seg); got != netip.MustParseAddr("fe80::1") {
		t.Errorf("use_oif_addrs_only: %v, want fe80::1 (the kernel takes a link-local one when it is all there is)", got)
	}
	h.addrs = append(h.addrs, addr(d0, "fc00:a::1/64"))
	if got, _ := h.selectSource(d0, seg); got != netip.MustParseAddr("fc00:a::1") {
		t.Errorf("use_oif_addrs_only: %v, want fc00:a::1", got)
	}
	// Labels of the operator's (ip addrlabel add prefix 2001:db8:e::/64 label 50, and 2001:db8:5::/48
	// label 50): the address with the segment's label wins over a longer shared prefix.
	h = testAddrs(addr(d0, "2001:db8:e:1::1/64"), addr(d0, "2001:db8:5::1/64"))
	h.labels = append([]addrLabel{{prefix: netip.MustParsePrefix("2001:db8:e::/64"), label: 50},
		{prefix: netip.MustParsePrefix("2001:db8:5::/48"), label: 50}}, h.labels...)
	if got, _ := h.selectSource(d0, seg); got != netip.MustParseAddr("2001:db8:5::1") {
		t.Errorf("labels: %v, want 2001:db8:5::1", got)
	}
	h.labels[1].label = 51
	if got, _ := h.selectSource(d0, seg); got != netip.MustParseAddr("2001:db8:e:1::1") {
		t.Errorf("labels: %v, want 2001:db8:e:1::1", got)
	}
}
