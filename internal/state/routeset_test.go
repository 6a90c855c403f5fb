package state

// routeset_test.go: a RouteSet operation (applyRoutes' shortcut: shared fields checked once, one
// policy per family), and a run of Route operations the commit takes the same way (routeRun), leave
// exactly what one Route operation per prefix applied alone leaves: the same errors (naming the same
// operation), diff, routes, policies with their route counts, and data plane tables.

import (
	"fmt"
	"net/netip"
	"reflect"
	"regexp"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

// expand is ops with each RouteSet written as one Route operation per prefix.
func expand(ops []Op) []Op {
	var out []Op
	for _, op := range ops {
		if op.RouteSet == nil {
			out = append(out, op)
			continue
		}
		for _, p := range op.RouteSet.Prefixes {
			r := op.RouteSet.Route
			r.Prefix = p
			one := op
			one.RouteSet, one.Route = nil, &r
			out = append(out, one)
		}
	}
	return out
}

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = mustPrefix(s)
	}
	return out
}

func TestRouteSetsMatchRouteOps(t *testing.T) {
	segsA := []netip.Addr{mustAddr("fc00:2::1"), mustAddr("fc00:3::64")}
	segsB := []netip.Addr{mustAddr("fc00:2::9")}
	usids := &model.USIDList{Block: mustPrefix("fcbb:0::/32"), IDs: []string{"100", "200"}}
	set := func(kind model.OpKind, o model.Origin, r model.Route, ps ...string) Op {
		return Op{Kind: kind, Origin: o, RouteSet: &RouteSet{Route: r, Prefixes: prefixes(ps...)}}
	}
	blue := func(segs []netip.Addr) model.Route { return model.Route{Tenant: "blue", Segs: segs} }
	commits := []struct {
		name    string
		ops     []Op
		wantErr bool
	}{
		{"tenants and a named policy", []Op{
			{Kind: model.OpAdd, Tenant: &model.Tenant{Name: "blue", Table: 100, Ports: []model.Port{{Dev: "eth1", VLAN: 100}}}},
			{Kind: model.OpAdd, Tenant: &model.Tenant{Name: "red", Table: 101, Ports: []model.Port{{Dev: "eth1", VLAN: 101}}}},
			{Kind: model.OpAdd, Policy: &model.Policy{Name: "east", Lists: []model.SegList{{Segs: segsB}}}}}, false},
		{"both families, back and forth", []Op{set(model.OpAdd, "", blue(segsA),
			"198.18.1.0/24", "2001:db8:1::/64", "198.18.2.0/24", "198.18.3.7/32", "2001:db8:2::/48", "0.0.0.0/0")}, false},
		{"pass, uSIDs, a named policy, BGP's routes in a tenant of the API", []Op{
			set(model.OpAdd, "", model.Route{Tenant: "blue", Mode: model.ModePass}, "198.18.10.0/24", "198.18.11.0/24", "2001:db8:10::/64"),
			set(model.OpAdd, "", model.Route{Tenant: "red", USIDs: usids}, "198.18.1.0/24", "198.18.2.0/24"),
			set(model.OpAdd, "", model.Route{Tenant: "red", Policy: "east"}, "198.18.20.0/24", "2001:db8:20::/64", "198.18.21.0/24"),
			set(model.OpAdd, model.OriginBGP, blue(segsB), "198.18.30.0/24", "198.18.31.0/24")}, false},
		{"replace: some unchanged, some moved, one twice, one new", []Op{set(model.OpReplace, "", blue(segsA),
			"198.18.1.0/24", "198.18.10.0/24", "198.18.10.0/24", "2001:db8:1::/64", "198.18.40.0/24")}, false},
		{"replace with other fields", []Op{set(model.OpReplace, "", model.Route{Tenant: "blue", Segs: segsB, HopLimit: 9},
			"198.18.2.0/24", "198.18.11.0/24", "2001:db8:10::/64")}, false},
		{"the uSIDs' containers as segs: the same policy, the notation dropped", []Op{set(model.OpReplace, "",
			model.Route{Tenant: "red", Segs: []netip.Addr{mustAddr("fcbb:0:100:200::")}}, "198.18.1.0/24", "198.18.2.0/24")}, false},
		{"a prefix twice in an add", []Op{set(model.OpAdd, "", blue(segsA), "198.18.50.0/24", "198.18.51.0/24", "198.18.50.0/24")}, true},
		{"host bits in the third", []Op{set(model.OpAdd, "", blue(segsA), "198.18.52.0/24", "198.18.53.0/24", "198.18.54.1/24")}, true},
		{"an existing route in the second", []Op{set(model.OpAdd, "", blue(segsB), "198.18.55.0/24", "198.18.1.0/24")}, true},
		{"the API replaces BGP's route", []Op{set(model.OpReplace, "", blue(segsA), "198.18.56.0/24", "198.18.30.0/24")}, true},
		{"BGP replaces its own", []Op{set(model.OpReplace, model.OriginBGP, blue(segsA), "198.18.30.0/24", "198.18.31.0/24")}, false},
		{"an unknown policy", []Op{set(model.OpAdd, "", model.Route{Tenant: "red", Policy: "west"}, "198.18.60.0/24")}, true},
		{"delete some, then add them back", []Op{
			set(model.OpDelete, "", model.Route{Tenant: "blue"}, "198.18.1.0/24", "2001:db8:1::/64", "198.18.10.0/24"),
			set(model.OpAdd, "", blue(segsB), "198.18.1.0/24", "2001:db8:1::/64")}, false},
		{"delete the rest of a policy's routes", []Op{
			set(model.OpDelete, "", model.Route{Tenant: "blue"}, "198.18.2.0/24", "198.18.3.7/32", "2001:db8:2::/48", "0.0.0.0/0", "198.18.40.0/24")}, false},
	}
	// Three ways: route sets; the expansion into Route ops, which the commit takes in runs
	// (routeRun: coalesced); and the expansion taken one operation at a time, the reference.
	bySet, byOps, byEach := openTemp(t), openTemp(t), openTemp(t)
	opAt := regexp.MustCompile(`^operation \d+ `)
	for _, c := range commits {
		dSet, errSet := bySet.Commit(c.ops, false)
		dOps, errOps := byOps.Commit(expand(c.ops), false)
		coalesceRouteOps = false
		dEach, errEach := byEach.Commit(expand(c.ops), false)
		coalesceRouteOps = true
		// The errors name the operation by its place: the set's, or its route's in the expansion.
		if (errEach != nil) != c.wantErr || fmt.Sprint(errOps) != fmt.Sprint(errEach) ||
			opAt.ReplaceAllString(fmt.Sprint(errSet), "") != opAt.ReplaceAllString(fmt.Sprint(errEach), "") {
			t.Fatalf("%s: error by sets %v, by route operations in runs %v, one by one %v (want an error: %v)", c.name, errSet, errOps, errEach, c.wantErr)
		}
		for name, st := range map[string]*Store{"sets": bySet, "route operations in runs": byOps} {
			d := dSet
			if st == byOps {
				d = dOps
			}
			if fmt.Sprint(d) != fmt.Sprint(dEach) {
				t.Fatalf("%s: diff by %s\n%v\none by one\n%v", c.name, name, d, dEach)
			}
			if a, b := fmt.Sprintf("%+v", st.Current()), fmt.Sprintf("%+v", byEach.Current()); a != b {
				t.Fatalf("%s: state by %s\n%s\none by one\n%s", c.name, name, a, b)
			}
			if a, b := fmt.Sprintf("%+v", st.Policies()), fmt.Sprintf("%+v", byEach.Policies()); a != b {
				t.Fatalf("%s: policies by %s\n%s\none by one\n%s", c.name, name, a, b)
			}
			if a, b := fakeOf(st).tables, fakeOf(byEach).tables; !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: data plane tables by %s differ:\n%v\n%v", c.name, name, a, b)
			}
		}
	}
	if c := bySet.Counts(); c.Routes4 != 8 || c.Routes6 != 3 {
		t.Fatalf("routes at the end: %+v, want 8 IPv4 and 3 IPv6", c)
	}
}

// A diff limit lists at most that many objects per list and counts the rest; the commit itself is
// the same (state and tables as without a limit).
func TestDiffLimitListsSomeCountsAll(t *testing.T) {
	limited, full := openTemp(t), openTemp(t)
	segs := []netip.Addr{mustAddr("fc00:2::1")}
	var ps []string
	for i := 0; i < 10; i++ {
		ps = append(ps, fmt.Sprintf("198.18.%d.0/24", i))
	}
	commits := [][]Op{
		{{Kind: model.OpAdd, Tenant: &model.Tenant{Name: "blue", Table: 100}},
			{Kind: model.OpAdd, RouteSet: &RouteSet{Route: model.Route{Tenant: "blue", Segs: segs}, Prefixes: prefixes(ps...)}},
			{Kind: model.OpAdd, Route: &model.Route{Tenant: "blue", Prefix: mustPrefix("2001:db8::/64"), Segs: segs}}},
		{{Kind: model.OpReplace, RouteSet: &RouteSet{Route: model.Route{Tenant: "blue", Segs: segs, HopLimit: 9}, Prefixes: prefixes(ps[:5]...)}},
			{Kind: model.OpDelete, RouteSet: &RouteSet{Route: model.Route{Tenant: "blue"}, Prefixes: prefixes(ps[5:]...)}}},
	}
	want := []struct{ listed, counts [3]int }{
		{[3]int{3, 0, 0}, [3]int{12, 0, 0}},
		{[3]int{0, 3, 3}, [3]int{0, 5, 5}},
	}
	for i, ops := range commits {
		d, err := limited.CommitWith(ops, CommitOptions{DiffLimit: 3})
		if err != nil {
			t.Fatal(err)
		}
		dFull, err := full.Commit(ops, false)
		if err != nil {
			t.Fatal(err)
		}
		a, c, r := d.Counts()
		if got := [3]int{len(d.Added), len(d.Changed), len(d.Removed)}; got != want[i].listed || [3]int{a, c, r} != want[i].counts {
			t.Fatalf("commit %d: listed %v, counted %v; want %v and %v\n%s", i, got, [3]int{a, c, r}, want[i].listed, want[i].counts, d)
		}
		if fa, fc, fr := dFull.Counts(); [3]int{fa, fc, fr} != want[i].counts || dFull.MoreAdded+dFull.MoreChanged+dFull.MoreRemoved != 0 {
			t.Fatalf("commit %d without a limit: %+v", i, dFull)
		}
		if !slices.Equal(d.Added, dFull.Added[:len(d.Added)]) || !slices.Equal(d.Changed, dFull.Changed[:len(d.Changed)]) {
			t.Fatalf("commit %d: the listed lines are not the first ones: %v / %v", i, d, dFull)
		}
		if a, b := fmt.Sprintf("%+v", limited.Current()), fmt.Sprintf("%+v", full.Current()); a != b {
			t.Fatalf("commit %d: the limit changed the state:\n%s\n%s", i, a, b)
		}
	}
	if s := (&model.Diff{Added: []string{"x"}, MoreAdded: 2, Removed: []string{}, MoreRemoved: 1}).String(); s != "+ x\n+ ... and 2 more\n- ... and 1 more\n" {
		t.Fatalf("String: %q", s)
	}
}

// A commit's route records are sized for its routes once, not once per tenant: 20000 routes over
// 100 tenants (a BGP import across VRFs) allocate a few MiB, not a tenant's share of the commit
// times every tenant.
func TestRouteRecordsSizedOnce(t *testing.T) {
	st := openTemp(t)
	var ops []Op
	for i := 0; i < 100; i++ {
		ops = append(ops, Op{Kind: model.OpAdd, Tenant: &model.Tenant{Name: fmt.Sprintf("t%d", i), Table: uint32(1000 + i)}})
	}
	if _, err := st.Commit(ops, false); err != nil {
		t.Fatal(err)
	}
	ops = ops[:0]
	segs := []netip.Addr{mustAddr("fc00:2::1")}
	for i := 0; i < 20000; i++ {
		ops = append(ops, Op{Kind: model.OpAdd, Route: &model.Route{Tenant: fmt.Sprintf("t%d", i%100), Segs: segs,
			Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}), 32)}})
	}
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	if _, err := st.Commit(ops, true); err != nil { // a dry run: the records, without the maps
		t.Fatal(err)
	}
	goruntime.ReadMemStats(&m1)
	if mib := float64(m1.TotalAlloc-m0.TotalAlloc) / (1 << 20); mib > 40 {
		t.Fatalf("a dry run of 20000 routes over 100 tenants allocated %.0f MiB", mib)
	}
}

// A table replaced whole names the route in its errors (made only then): a route's own fields, and
// a named policy it asks for that does not exist.
func TestTableSwapErrorsNameTheRoute(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	segs := []netip.Addr{mustAddr("fc00:2::1")}
	for _, tc := range []struct {
		bad  model.Route
		want string
	}{
		{model.Route{Prefix: mustPrefix("198.18.3.1/24"), Segs: segs}, "route 198.18.3.1/24 tenant blue: prefix: host bits set"},
		{model.Route{Prefix: mustPrefix("198.18.4.0/24"), Policy: "west"}, `route 198.18.4.0/24 tenant blue: policy: unknown policy "west"`},
	} {
		routes := []model.Route{{Prefix: mustPrefix("198.18.2.0/24"), Segs: segs}, tc.bad}
		_, err := st.Commit([]Op{{Kind: model.OpReplace, TenantRoutes: &TenantRoutes{Tenant: "blue", Routes: routes}}}, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("swap with %+v: %v, want %q", tc.bad, err, tc.want)
		}
	}
	d, err := st.Commit([]Op{{Kind: model.OpReplace, TenantRoutes: &TenantRoutes{Tenant: "blue",
		Routes: []model.Route{{Prefix: mustPrefix("198.18.5.0/24"), Segs: segs}}}}}, false)
	if err != nil || fmt.Sprint(d.Added, d.Changed, d.Removed) != "[route 198.18.5.0/24 tenant blue] [] [route 198.18.2.0/24 tenant blue]" {
		t.Fatalf("swap: %v %v", d, err)
	}
}
