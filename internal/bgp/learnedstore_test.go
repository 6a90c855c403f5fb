package bgp

// learnedstore_test.go: the compact store of learned paths holds exactly what a map of whole paths
// by "RD prefix" held (the importer's storage before it), through random announcements, unreadable
// paths and withdrawals over a few RDs and prefixes (IPv4, IPv6, one with host bits set); and lets
// go of every value once no path uses it.

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestLearnedStoreHoldsWhatTheMapHeld(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	rds := []string{"1:1", "1:2", "198.18.0.1:7", "1.2:5"} // the last as GoBGP writes a 4-byte ASN
	prefixes := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("10.0.0.1/24"),
		netip.MustParsePrefix("10.0.1.0/24"), netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("2001:db8:1::/48")}
	addrs := []netip.Addr{netip.MustParseAddr("fc00:9::1"), netip.MustParseAddr("fc00:9::2"), netip.MustParseAddr("192.0.2.1")}
	rtLists := [][]string{{"65000:1"}, {"65000:1", "65000:2"}, {"65000:2"}}

	st, ref := newLearnedStore(), map[string]learnedPath{}
	for step := range 4000 {
		rd, received := rds[rng.IntN(len(rds))], prefixes[rng.IntN(len(prefixes))]
		key := rd + " " + received.String()
		switch op := rng.IntN(3); {
		case op == 0:
			st.remove(rd, received, func() string { return key })
			delete(ref, key)
		case op == 1 || received != received.Masked(): // unreadable (as a prefix with host bits is)
			lp := learnedPath{route: VPNRoute{RD: fromGoBGP(rd), Prefix: received.Masked()}, peer: addrs[rng.IntN(3)],
				err: fmt.Sprintf("unreadable %d", step)}
			st.putBad(rd, received, key, lp)
			ref[key] = lp
		default:
			r := VPNRoute{RD: fromGoBGP(rd), Prefix: received, RTs: rtLists[rng.IntN(len(rtLists))],
				NextHop: addrs[rng.IntN(2)], SID: netip.AddrFrom16([16]byte{0xfc, 0, 2, 15: byte(rng.IntN(4))}),
				Behavior: []string{EndDT4, EndDT6, EndDT46}[rng.IntN(3)]}
			peer, stale := addrs[rng.IntN(3)], rng.IntN(2) == 0
			st.put(rd, &r, peer, stale)
			ref[key] = learnedPath{route: r, peer: peer, stale: stale}
		}
		if err := sameLearned(st, ref, prefixes); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	for _, rd := range rds {
		for _, p := range prefixes {
			st.remove(rd, p, func() string { return rd + " " + p.String() })
		}
	}
	if all, _ := st.count(); all != 0 || len(st.v4.first)+len(st.v4.more)+len(st.v6.first)+len(st.v6.more)+len(st.badOf) != 0 ||
		len(st.rds.ids)+len(st.rts.ids)+len(st.addrs.ids) != 0 {
		t.Fatalf("emptied: %d paths, index %d/%d/%d/%d, values %d/%d/%d", all, len(st.v4.first), len(st.v4.more),
			len(st.v6.first), len(st.v6.more), len(st.rds.ids), len(st.rts.ids), len(st.addrs.ids))
	}
}

// sameLearned compares the store with the map: every path and key, the count, and each prefix's
// readable paths (what best chooses from).
func sameLearned(st *learnedStore, ref map[string]learnedPath, prefixes []netip.Prefix) error {
	show := func(k string, lp learnedPath) string {
		r := lp.route
		return fmt.Sprintf("%s=%s|%s|%v|%s|%s|%s|%s|%t|%s", k, r.RD, r.Prefix, r.RTs, r.NextHop, r.SID, r.Behavior, lp.peer, lp.stale, lp.err)
	}
	var got, want []string
	st.each(func(k string, lp learnedPath) { got = append(got, show(k, lp)) })
	for k, lp := range ref {
		want = append(want, show(k, lp))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("paths\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	all, bad := st.count()
	nbad := 0
	for _, lp := range ref {
		if lp.err != "" {
			nbad++
		}
	}
	if all != len(ref) || bad != nbad {
		return fmt.Errorf("count %d (%d unreadable), want %d (%d)", all, bad, len(ref), nbad)
	}
	for _, p := range prefixes {
		got, want = nil, nil
		st.paths(p.Masked(), func(lp learnedPath) { got = append(got, show("", lp)) })
		for _, lp := range ref {
			if lp.err == "" && lp.route.Prefix == p.Masked() {
				want = append(want, show("", lp))
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("readable paths of %s: %v, want %v", p, got, want)
		}
		got, want = nil, nil
		st.of(p.Masked(), func(key func() string, lp learnedPath) { got = append(got, show(key(), lp)) })
		for k, lp := range ref {
			if lp.route.Prefix == p.Masked() {
				want = append(want, show(k, lp))
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("all paths of %s: %v, want %v", p, got, want)
		}
	}
	var ps []string
	st.prefixes(func(p netip.Prefix) { ps = append(ps, p.String()) })
	wantPs := map[string]bool{}
	for _, lp := range ref {
		wantPs[lp.route.Prefix.String()] = true
	}
	slices.Sort(ps)
	if len(slices.Compact(ps)) != len(wantPs) {
		return fmt.Errorf("prefixes %v, want %v", ps, wantPs)
	}
	return nil
}
