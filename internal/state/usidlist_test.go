package state

// usidlist_test.go: segment lists written as uSIDs: how they pack into containers, what is refused
// with which field, and how a route keeps its notation (shown, saved, changed, compared by Apply)
// while its policy holds only the containers.

import (
	"errors"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = mustAddr(s)
	}
	return out
}

func TestUSIDPacking(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []netip.Addr
		ids  []string // normalized, when not the input's
	}{
		// One container: the far PE's uDT4 e004 last.
		{"fcbb:0::/32 100 200 300 e004", addrs("fcbb:0:100:200:300:e004::"), nil},
		// Exactly full: 6 x 16 bits after a /32.
		{"fcbb:0::/32 1 2 3 4 5 6", addrs("fcbb:0:1:2:3:4:5:6"), nil},
		// One more starts a second container, zero-padded.
		{"fcbb:0::/32 1 2 3 4 5 6 7", addrs("fcbb:0:1:2:3:4:5:6", "fcbb:0:7::"), nil},
		// A /48 block holds five.
		{"fc00:e::/48 100,200,300,400,500,600", addrs("fc00:e:0:100:200:300:400:500", "fc00:e:0:600::"), nil},
		// 32-bit uSIDs: three per container after a /32.
		{"fcbb:0::/32 nf 32 1 abcdef01 e004 2", addrs("fcbb:0:0:1:abcd:ef01:0:e004", "fcbb:0:0:2::"), nil},
		// 8-bit uSIDs after a /64.
		{"fc00::/64 nf 8 1 2", addrs("fc00::102:0:0:0"), nil},
		// Written with leading zeros and capitals: kept normalized.
		{"fcbb:0::/32 0100 E004", addrs("fcbb:0:100:e004::"), []string{"100", "e004"}},
	} {
		u, err := model.ParseUSIDList(strings.Fields(tc.text))
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		var errs model.Errors
		got := u.Check("route", func(err error) { errs = append(errs, err) })
		if len(errs) > 0 || !slices.Equal(got, tc.want) {
			t.Errorf("%s: containers %v (%v), want %v", tc.text, got, errs, tc.want)
		}
		if tc.ids != nil && !slices.Equal(u.IDs, tc.ids) {
			t.Errorf("%s: ids %v, want %v", tc.text, u.IDs, tc.ids)
		}
		back, err := model.ParseUSIDList(strings.Fields(u.String()))
		if err == nil {
			back.Check("route", func(e error) { err = e })
		}
		if err != nil || !model.SameUSIDs(back, u) {
			t.Errorf("%s: String %q does not read back: %+v %v", tc.text, u.String(), back, err)
		}
	}
	// NF 16 is the default: not written in the text form.
	u := &model.USIDList{Block: mustPrefix("fcbb:0::/32"), NF: 16, IDs: []string{"100", "e004"}}
	if got := u.String(); got != "fcbb::/32 100 e004" {
		t.Errorf("String = %q", got)
	}
}

func TestUSIDErrors(t *testing.T) {
	r := func(text string) model.Route {
		u, err := model.ParseUSIDList(strings.Fields(text))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return model.Route{Tenant: "blue", Prefix: mustPrefix("198.18.2.0/24"), USIDs: u}
	}
	many := strings.Repeat("1 ", 6*model.MaxSegments+1)
	for _, tc := range []struct {
		route      model.Route
		field, why string
	}{
		{r("fcbb:0::/20 100"), "usids.block", "multiple of 8"},
		{r("fcbb:1::/16 100"), "usids.block", "host bits set; did you mean fcbb::/16"},
		{r("10.0.0.0/8 100"), "usids.block", "not a unicast IPv6 prefix"},
		{r("ff00::/32 100"), "usids.block", "not a unicast IPv6 prefix"},
		{r("fcbb:0::/120 nf 16 1"), "usids.block", "leaves no room for a 16-bit uSID"},
		{r("fcbb:0::/32 nf 12 1"), "usids.nf", "multiple of 8"},
		{r("fcbb:0::/32 nf 128 1"), "usids.nf", "from 8 to 120"},
		{r("fcbb:0::/32"), "usids.ids", "no uSIDs"},
		{r("fcbb:0::/32 100 0"), "usids.ids[1]", "uSID 0 ends a container"},
		{r("fcbb:0::/32 100 10000"), "usids.ids[1]", "does not fit in 16 bits"},
		{r("fcbb:0::/32 nf 8 100"), "usids.ids[0]", "does not fit in 8 bits"},
		{r("fcbb:0::/32 100 zz"), "usids.ids[1]", `"zz" is not a hexadecimal uSID`},
		{r("fcbb:0::/32 " + many), "usids.ids", "97 uSIDs make 17 containers of at most 6; at most 16"},
		{model.Route{Tenant: "blue", Prefix: mustPrefix("198.18.2.0/24"), USIDs: &model.USIDList{IDs: []string{"1"}}}, "usids.block", "missing"},
		{func() model.Route { x := r("fcbb:0::/32 100"); x.Segs = addrs("fcbb:0:200::"); return x }(), "segs", "not the containers of usids"},
		{func() model.Route { x := r("fcbb:0::/32 100"); x.Mode = model.ModePass; return x }(), "segs", "no segs, usids or src"},
	} {
		var errs model.Errors
		rt := tc.route
		model.ValidateRoute(&rt, func(err error) { errs = append(errs, err) })
		found := false
		for _, e := range errs {
			var fe *model.FieldError
			if errors.As(e, &fe) && fe.Field == tc.field && strings.Contains(fe.Reason, tc.why) {
				found = true
			}
		}
		if !found {
			t.Errorf("%v: errors %v, want %s: ...%s...", tc.route.USIDs, errs, tc.field, tc.why)
		}
		if len(errs) != 1 {
			t.Errorf("%v: %d errors, want 1: %v", tc.route.USIDs, len(errs), errs)
		}
	}
	// Segs equal to the containers (what show gives back) are accepted.
	ok := r("fcbb:0::/32 100 e004")
	ok.Segs = addrs("fcbb:0:100:e004::")
	if err := model.Collect(func(add func(error)) { model.ValidateRoute(&ok, add) }); err != nil {
		t.Errorf("segs equal to the containers: %v", err)
	}
	// The caller's list is not changed by the checks.
	in := &model.USIDList{Block: mustPrefix("fcbb:0::/32"), IDs: []string{"0E004"}}
	rt := model.Route{Tenant: "blue", Prefix: mustPrefix("198.18.2.0/24"), USIDs: in}
	model.ValidateRoute(&rt, func(error) {})
	if in.NF != 0 || in.IDs[0] != "0E004" || rt.USIDs.NF != 16 || rt.USIDs.IDs[0] != "e004" {
		t.Errorf("caller's list %+v, checked %+v", in, rt.USIDs)
	}
}

// A route written as uSIDs: shown with its notation and its containers, sharing the policy of a
// route written as those containers; a change of notation alone is a change (saved, nothing
// written to the data plane); Apply compares notations; everything survives a restart.
func TestRouteKeepsUSIDNotation(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	u := &model.USIDList{Block: mustPrefix("fcbb:0::/32"), IDs: []string{"100", "200", "300", "e004"}}
	containers := addrs("fcbb:0:100:200:300:e004::")
	compressed := model.Route{Tenant: "blue", Prefix: mustPrefix("198.19.1.0/24"), Mode: model.ModeEncapRed, USIDs: u}
	plain := model.Route{Tenant: "blue", Prefix: mustPrefix("198.19.2.0/24"), Mode: model.ModeEncapRed, Segs: containers}
	if _, err := st.Commit([]Op{{Kind: model.OpAdd, Route: &compressed}, {Kind: model.OpAdd, Route: &plain}}, false); err != nil {
		t.Fatal(err)
	}
	routes := st.TenantRoutes("blue")
	got := routes[compressed.Prefix]
	if got.USIDs == nil || got.USIDs.String() != "fcbb::/32 100 200 300 e004" || got.USIDs.NF != 16 || !slices.Equal(got.Segs, containers) {
		t.Fatalf("route as shown: %+v usids %+v", got, got.USIDs)
	}
	if p := routes[plain.Prefix]; p.USIDs != nil || p.ID != got.ID {
		t.Fatalf("the plain route: %+v, want no usids and the same policy %d", p, got.ID)
	}
	routesBefore := maps.Clone(fakeOf(st).table(TableRoutes))

	// The plain route rewritten as uSIDs: changed, but not in the data plane.
	plain.Segs, plain.USIDs = nil, u
	d, err := st.Commit([]Op{{Kind: model.OpReplace, Route: &plain}}, false)
	if err != nil || !slices.Equal(d.Changed, []string{"route 198.19.2.0/24 tenant blue"}) {
		t.Fatalf("notation change: %v %v", d, err)
	}
	if r := st.TenantRoutes("blue")[plain.Prefix]; r.USIDs == nil || r.ID != got.ID {
		t.Fatalf("after the notation change: %+v", r)
	}
	if after := fakeOf(st).table(TableRoutes); !maps.Equal(after, routesBefore) {
		t.Errorf("route entries %v, were %v", after, routesBefore)
	}
	if d, err := st.Commit([]Op{{Kind: model.OpReplace, Route: &plain}}, false); err != nil || !d.Empty() {
		t.Fatalf("the same again: %v %v", d, err)
	}
	checkImage(t, st)

	// Apply: the same notation changes nothing; the same containers as segs change the route.
	want := st.Current()
	if d, err := st.Apply(want, true); err != nil || !d.Empty() {
		t.Fatalf("Apply of the running state: %v %v", d, err)
	}
	asSegs := st.Current()
	for i := range asSegs.Routes {
		asSegs.Routes[i].USIDs = nil
	}
	if d, err := st.Apply(asSegs, true); err != nil || len(d.Changed) != 2 {
		t.Fatalf("Apply without the notation: %v %v, want 2 routes changed", d, err)
	}

	// Saved: the journal, then the snapshot.
	st = reopen(t, st)
	if got := st.Current(); !model.Same(got, want) {
		t.Fatalf("replayed from the journal:\n got %+v\nwant %+v", got.Routes, want.Routes)
	}
	if err := st.Compact(); err != nil {
		t.Fatal(err)
	}
	st = reopen(t, st)
	if got := st.Current(); !model.Same(got, want) {
		t.Fatalf("replayed from the snapshot:\n got %+v\nwant %+v", got.Routes, want.Routes)
	}

	// A table swap keeps what each route says, and a notation dropped from a route is gone.
	plain.USIDs, plain.Segs = nil, containers
	tr := TenantRoutes{Tenant: "blue", Routes: []model.Route{compressed, plain}}
	d, err = st.Commit([]Op{{Kind: model.OpReplace, TenantRoutes: &tr}}, false)
	if err != nil {
		t.Fatal(err)
	}
	routes = st.TenantRoutes("blue")
	if routes[compressed.Prefix].USIDs == nil || routes[plain.Prefix].USIDs != nil {
		t.Fatalf("after the swap: %+v / %+v (diff %v)", routes[compressed.Prefix], routes[plain.Prefix], d)
	}
	if !slices.Contains(d.Changed, "route 198.19.2.0/24 tenant blue") {
		t.Errorf("swap diff %v lacks the plain route's notation change", d)
	}
	want = st.Current()
	if st = reopen(t, st); !model.Same(st.Current(), want) {
		t.Fatalf("after the swap, replayed: %+v", st.Current().Routes)
	}
}
