package packet

// lpm_test.go: the headend's longest-prefix match (exact-match hashes per prefix length, bitmaps in
// the tenant port entry) against a plain Go reference, for random overlapping IPv4 and IPv6 routes,
// after incremental changes and after a whole-table swap; and its per-CPU cache following every
// route change.

import (
	"bytes"
	"math/rand/v2"
	"net"
	"net/netip"
	"os/exec"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/testsupport"
)

const lpmVLAN = 7

// The MACs of lpmFrame: ta0's, and its peer's.
var lpmDst, lpmSrc = []byte{2, 0, 0, 0, 0x0a, 0}, []byte{2, 0, 0, 0, 0x0a, 2}

// lpmFrame builds a VLAN-tagged IPv4/UDP or IPv6/UDP frame for dst arriving on ta0 (the IPv4 header
// checksum valid: the headend checks it).
func lpmFrame(dst netip.Addr) []byte {
	udp := testsupport.UDP(1000, 2000, make([]byte, 8))
	if dst.Is4() {
		ip := testsupport.IPv4{Src: netip.MustParseAddr("198.18.1.2"), Dst: dst, TTL: 64, Proto: 17, ID: 1}
		return append(testsupport.Ethernet(lpmDst, lpmSrc, lpmVLAN, 0x0800), ip.Packet(udp)...)
	}
	ip := testsupport.IPv6{Src: netip.MustParseAddr("2001:db8:a::2"), Dst: dst, NextHeader: 17, HopLimit: 64}
	return append(testsupport.Ethernet(lpmDst, lpmSrc, lpmVLAN, 0x86dd), ip.Packet(udp)...)
}

type lpmRoute struct {
	p   netip.Prefix
	sid netip.Addr
}

func reference(routes []lpmRoute, dst netip.Addr) (netip.Addr, bool) {
	best := -1
	var sid netip.Addr
	for _, r := range routes {
		if r.p.Contains(dst) && r.p.Bits() > best {
			best, sid = r.p.Bits(), r.sid
		}
	}
	return sid, best >= 0
}

func randomRoutes(rng *rand.Rand, n int) []lpmRoute {
	seen := map[netip.Prefix]bool{}
	var out []lpmRoute
	lens4 := []int{0, 8, 15, 16, 20, 23, 24, 25, 28, 31, 32}
	lens6 := []int{0, 16, 32, 47, 48, 63, 64, 65, 96, 127, 128}
	for len(out) < n {
		var p netip.Prefix
		if rng.IntN(2) == 0 {
			a := [4]byte{198, 18, byte(rng.IntN(4)), byte(rng.IntN(256))}
			p = netip.PrefixFrom(netip.AddrFrom4(a), lens4[rng.IntN(len(lens4))]).Masked()
		} else {
			var a [16]byte
			copy(a[:], []byte{0x20, 0x01, 0x0d, 0xb8, 0, byte(rng.IntN(2))})
			a[7], a[8], a[15] = byte(rng.IntN(4)), byte(rng.IntN(2)), byte(rng.IntN(256))
			p = netip.PrefixFrom(netip.AddrFrom16(a), lens6[rng.IntN(len(lens6))]).Masked()
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		sid := netip.AddrFrom16([16]byte{0xfc, 0, 0, 2, 14: byte(len(out) >> 8), 15: byte(len(out) + 1)})
		if len(out)%7 == 3 {
			sid = netip.Addr{} // a pass route: traffic goes to the kernel untouched
		}
		out = append(out, lpmRoute{p: p, sid: sid})
	}
	return out
}

func randomDsts(rng *rand.Rand, routes []lpmRoute, n int) []netip.Addr {
	var out []netip.Addr
	for _, r := range routes { // each route's own first and last address
		out = append(out, r.p.Addr())
		last := r.p.Addr().AsSlice()
		for i := r.p.Bits(); i < len(last)*8; i++ {
			last[i/8] |= 0x80 >> (i % 8)
		}
		a, _ := netip.AddrFromSlice(last)
		out = append(out, a)
	}
	for len(out) < n {
		if rng.IntN(2) == 0 {
			out = append(out, netip.AddrFrom4([4]byte{198, 18, byte(rng.IntN(5)), byte(rng.IntN(256))}))
		} else {
			var a [16]byte
			copy(a[:], []byte{0x20, 0x01, 0x0d, 0xb8, 0, byte(rng.IntN(2))})
			a[7], a[8], a[15] = byte(rng.IntN(4)), byte(rng.IntN(2)), byte(rng.IntN(256))
			out = append(out, netip.AddrFrom16(a))
		}
	}
	return out
}

func toState(routes []lpmRoute) []model.Route {
	out := make([]model.Route, len(routes))
	for i, r := range routes {
		out[i] = model.Route{Tenant: "lpm", Prefix: r.p, Segs: []netip.Addr{r.sid}, Src: netip.MustParseAddr("fc00:1::1")}
		if !r.sid.IsValid() {
			out[i] = model.Route{Tenant: "lpm", Prefix: r.p, Mode: model.ModePass}
		}
	}
	return out
}

func checkLPM(t *testing.T, routes []lpmRoute, dsts []netip.Addr, when string) {
	t.Helper()
	ta0, err := net.InterfaceByName("ta0")
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, dst := range dsts {
		in := lpmFrame(dst)
		f := &fixtures.Fixture{Name: "lpm " + dst.String(), Dev: ta0.Name, Input: in}
		res, err := rig.Run(nil, f, 1)
		if err != nil {
			t.Fatal(err)
		}
		want, ok := reference(routes, dst)
		ok = ok && want.IsValid() // the longest match may be a pass route
		switch {
		case !ok && (res.Action != uint32(dataplane.ActionIndex("XDP_PASS")) || string(res.Output) != string(in)):
			t.Errorf("%s: %s matches no route, but got %s", when, dst, dataplane.Actions[res.Action])
			bad++
		case ok && res.Action != uint32(dataplane.ActionIndex("XDP_REDIRECT")):
			t.Errorf("%s: %s should go to %s, got %s", when, dst, want, dataplane.Actions[res.Action])
			bad++
		case ok:
			got := netip.AddrFrom16([16]byte(res.Output[14+24 : 14+40]))
			if got != want {
				t.Errorf("%s: %s encapsulated towards %s, want %s (longest match)", when, dst, got, want)
				bad++
			}
		}
		if bad > 10 {
			t.Fatal("too many mismatches")
		}
	}
}

func TestLongestPrefixMatch(t *testing.T) {
	st := rig.Store
	rng := rand.New(rand.NewPCG(1, 2))
	routes := randomRoutes(rng, 200)
	ops := []state.Op{{Kind: model.OpAdd, Tenant: &model.Tenant{Name: "lpm", Ports: []model.Port{{Dev: "ta0", VLAN: lpmVLAN}}}}}
	for _, r := range toState(routes) {
		r := r
		ops = append(ops, state.Op{Kind: model.OpAdd, Route: &r})
	}
	if _, err := st.Commit(ops, false); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, err := st.Commit([]state.Op{{Kind: model.OpReplace, TenantRoutes: &state.TenantRoutes{Tenant: "lpm"}},
			{Kind: model.OpDelete, Tenant: &model.Tenant{Name: "lpm"}}}, false)
		if err != nil {
			t.Error(err)
		}
	}()
	dsts := randomDsts(rng, routes, 1200)
	checkLPM(t, routes, dsts, "after adding routes one by one")

	// Incremental deletes (some prefix lengths disappear entirely) and replacements.
	var keep []lpmRoute
	ops = nil
	for i, r := range routes {
		switch {
		case i%3 == 0:
			ops = append(ops, state.Op{Kind: model.OpDelete, Route: &model.Route{Tenant: "lpm", Prefix: r.p}})
		case i%3 == 1:
			if r.sid.IsValid() {
				r.sid = netip.AddrFrom16([16]byte{0xfc, 0, 0, 2, 13: 1, 14: byte(i >> 8), 15: byte(i)})
			} else {
				r.sid = netip.AddrFrom16([16]byte{0xfc, 0, 0, 2, 13: 2, 14: byte(i >> 8), 15: byte(i)}) // pass -> encap
			}
			sr := toState([]lpmRoute{r})[0]
			ops = append(ops, state.Op{Kind: model.OpReplace, Route: &sr})
			keep = append(keep, r)
		default:
			keep = append(keep, r)
		}
	}
	if _, err := st.Commit(ops, false); err != nil {
		t.Fatal(err)
	}
	checkLPM(t, keep, dsts, "after deletes and replacements")

	// A whole new table in one swap.
	next := randomRoutes(rng, 150)
	if _, err := st.Commit([]state.Op{{Kind: model.OpReplace, TenantRoutes: &state.TenantRoutes{Tenant: "lpm", Routes: toState(next)}}}, false); err != nil {
		t.Fatal(err)
	}
	checkLPM(t, next, append(dsts, randomDsts(rng, next, 400)...), "after a table swap")
	if n := countMap(t, st); n.routes4+n.routes6 != len(next)+fixtureRoutes(t) {
		t.Errorf("route maps hold %d+%d entries, want %d: the old table was not removed", n.routes4, n.routes6, len(next)+fixtureRoutes(t))
	}
}

type mapCounts struct{ routes4, routes6 int }

func countMap(t *testing.T, st *state.Store) mapCounts {
	var c mapCounts
	var k4 dataplane.Seg6xRoute4Key
	var k6 dataplane.Seg6xRoute6Key
	var v dataplane.Seg6xEncapVal
	it := dataplane.MapsOf(st).Routes4.Iterate()
	for it.Next(&k4, &v) {
		c.routes4++
	}
	it = dataplane.MapsOf(st).Routes6.Iterate()
	for it.Next(&k6, &v) {
		c.routes6++
	}
	return c
}

func fixtureRoutes(t *testing.T) int {
	cfg, err := fixtures.Config()
	if err != nil {
		t.Fatal(err)
	}
	return len(cfg.Routes)
}

// TestRouteLookupsFollowTheTables: the program caches route lookups per CPU (route_cache); a route
// added, replaced or deleted reaches the very next frame, also where no prefix length of the table
// comes or goes (the tenant's port entry, whose write would make every cached answer stale anyway,
// does not change). The frames run on one CPU, so every check after the first is the cache's.
func TestRouteLookupsFollowTheTables(t *testing.T) {
	defer testsupport.OnOneCPU(t)()
	p, a := netip.MustParsePrefix, netip.MustParseAddr
	sid := func(n byte) netip.Addr { return netip.AddrFrom16([16]byte{0xfc, 0, 0, 2, 13: 7, 15: n}) }
	routes := []lpmRoute{{p("198.18.5.0/24"), sid(1)}, {p("198.18.7.0/24"), sid(2)}, {p("198.18.8.8/32"), sid(3)},
		{p("2001:db8:5::/64"), sid(4)}, {p("2001:db8:7::/64"), sid(5)}}
	ops := []state.Op{{Kind: model.OpAdd, Tenant: &model.Tenant{Name: "lpm", Ports: []model.Port{{Dev: "ta0", VLAN: lpmVLAN}}}}}
	for _, r := range toState(routes) {
		ops = append(ops, state.Op{Kind: model.OpAdd, Route: &r})
	}
	commit(t, ops...)
	defer commit(t, state.Op{Kind: model.OpReplace, TenantRoutes: &state.TenantRoutes{Tenant: "lpm"}},
		state.Op{Kind: model.OpDelete, Tenant: &model.Tenant{Name: "lpm"}})
	dsts := []netip.Addr{a("198.18.5.9"), a("198.18.5.8"), a("198.18.6.9"), a("2001:db8:5::9"), a("2001:db8:6::9")}
	for i := 0; i < 2; i++ {
		checkLPM(t, routes, dsts, "routes added")
	}
	set := func(when string, r lpmRoute, del bool) {
		t.Helper()
		sr := toState([]lpmRoute{r})[0]
		op := state.Op{Kind: model.OpReplace, Route: &sr}
		if del {
			op = state.Op{Kind: model.OpDelete, Route: &model.Route{Tenant: "lpm", Prefix: r.p}}
		}
		commit(t, op)
		var next []lpmRoute
		for _, o := range routes {
			if o.p != r.p {
				next = append(next, o)
			}
		}
		if !del {
			next = append(next, r)
		}
		routes = next
		checkLPM(t, routes, dsts, when)
	}
	set("a route's segment list replaced", lpmRoute{p("198.18.5.0/24"), sid(11)}, false)
	set("an IPv6 route's segment list replaced", lpmRoute{p("2001:db8:5::/64"), sid(14)}, false)
	set("a longer route added under it (a length in use)", lpmRoute{p("198.18.5.9/32"), sid(12)}, false)
	set("a route added where none matched", lpmRoute{p("198.18.6.0/24"), sid(13)}, false)
	set("an IPv6 route added where none matched", lpmRoute{p("2001:db8:6::/64"), sid(15)}, false)
	set("a route deleted (its length stays in use)", lpmRoute{p: p("198.18.5.0/24")}, true)
	set("an IPv6 route deleted (its length stays in use)", lpmRoute{p: p("2001:db8:5::/64")}, true)
}

// TestSIDLookupsFollowTheTables: the program caches SID lookups per CPU (sid_cache), the answer "not
// a SID" too; a SID added, replaced or deleted reaches the very next frame. The frames run on one
// CPU, so every run after the first is the cache's.
func TestSIDLookupsFollowTheTables(t *testing.T) {
	defer testsupport.OnOneCPU(t)()
	f := fixtures.Get(t, "end") // End at fc00:1::1: next SID fc00:3::64
	old, sid := netip.MustParseAddr("fc00:1::1").As16(), netip.MustParseAddr("fc00:1::70")
	s16 := sid.As16()
	in := bytes.ReplaceAll(f.Input, old[:], s16[:])
	endOut := bytes.ReplaceAll(f.Output, old[:], s16[:])
	run := func(when, action string, want []byte) {
		t.Helper()
		for i := 0; i < 2; i++ {
			g := *f
			g.Input = in
			res, err := rig.Run(nil, &g, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := dataplane.Actions[res.Action]; got != action || !bytes.Equal(res.Output, want) {
				t.Fatalf("%s (run %d): %s, want %s\n got %x\nwant %x", when, i, got, action, res.Output, want)
			}
		}
	}
	run("not a SID yet", "XDP_PASS", in)
	commit(t, state.Op{Kind: model.OpAdd, SID: &model.SID{SID: sid, Action: "End"}})
	defer func() { // the test deletes it at its end; a failure before leaves it to this
		for _, s := range rig.Store.SIDs() {
			if s.SID == sid {
				commit(t, state.Op{Kind: model.OpDelete, SID: &model.SID{SID: sid}})
			}
		}
	}()
	run("SID added", "XDP_REDIRECT", endOut)
	// End.X to nh6 fc00:12::3, another neighbor on fab0: the same packet, to that neighbor's MAC.
	testsupport.MustRun(t, "ip", "-6", "neigh", "replace", "fc00:12::3", "lladdr", "02:00:00:00:01:33", "dev", "fab0", "nud", "permanent")
	defer func() { _ = exec.Command("ip", "-6", "neigh", "del", "fc00:12::3", "dev", "fab0").Run() }()
	commit(t, state.Op{Kind: model.OpReplace, SID: &model.SID{SID: sid, Action: "End.X", NH6: netip.MustParseAddr("fc00:12::3")}})
	run("SID replaced by End.X", "XDP_REDIRECT", append([]byte{0x02, 0, 0, 0, 0x01, 0x33}, endOut[6:]...))
	commit(t, state.Op{Kind: model.OpDelete, SID: &model.SID{SID: sid}})
	run("SID deleted", "XDP_PASS", in)
}
