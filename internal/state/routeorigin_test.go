package state

// routeorigin_test.go: routes BGP learns into a tenant of the API are BGP's: a config apply keeps them
// and cannot take their prefixes, BGP cannot touch the API's routes, removing the tenant removes them,
// and they survive a restart with their origin.

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func bgpRoute(prefix string) *model.Route {
	return &model.Route{Tenant: "blue", Prefix: mustPrefix(prefix), Segs: []netip.Addr{mustAddr("fc00:9::1"), mustAddr("fc00:9::64")}}
}

// routesByPrefix is the routes of tenant blue by prefix, with their origins.
func routesByPrefix(st *Store) map[string]model.Origin {
	out := map[string]model.Origin{}
	for p, r := range st.TenantRoutes("blue") {
		out[p.String()] = r.Origin
	}
	return out
}

func wantRoutes(t *testing.T, st *Store, want map[string]model.Origin) {
	t.Helper()
	got := routesByPrefix(st)
	if len(got) != len(want) {
		t.Fatalf("routes %v, want %v", got, want)
	}
	for p, o := range want {
		if g, ok := got[p]; !ok || g != o {
			t.Fatalf("routes %v, want %v", got, want)
		}
	}
	if n := countEntries(st, TableRoutes); n != len(want) {
		t.Fatalf("the data plane holds %d routes, want %d", n, len(want))
	}
}

func TestBGPRoutesInATenantOfTheAPI(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	// BGP adds two routes to blue (a tenant of the API).
	if _, err := st.Commit([]Op{{Kind: model.OpAdd, Origin: model.OriginBGP, Route: bgpRoute("198.18.5.0/24")},
		{Kind: model.OpAdd, Origin: model.OriginBGP, Route: bgpRoute("198.18.6.0/24")}}, false); err != nil {
		t.Fatalf("BGP adding routes to a tenant of the API: %v", err)
	}
	wantRoutes(t, st, map[string]model.Origin{"198.18.2.0/24": model.OriginConfig, "198.18.5.0/24": model.OriginBGP, "198.18.6.0/24": model.OriginBGP})

	// The same config file again changes nothing; BGP's routes stay.
	if d, err := st.Apply(baseState(), false); err != nil || !d.Empty() {
		t.Fatalf("re-applying the file: diff %v, err %v", d, err)
	}
	// A file with other routes for blue replaces the API's routes only.
	next := baseState()
	next.Routes = append(next.Routes, model.Route{Tenant: "blue", Prefix: mustPrefix("198.18.7.0/24"), Segs: []netip.Addr{mustAddr("fc00:2::1")}})
	if _, err := st.Apply(next, false); err != nil {
		t.Fatal(err)
	}
	wantRoutes(t, st, map[string]model.Origin{"198.18.2.0/24": model.OriginConfig, "198.18.7.0/24": model.OriginConfig,
		"198.18.5.0/24": model.OriginBGP, "198.18.6.0/24": model.OriginBGP})

	// A file may not take a prefix BGP holds: refused whole, nothing changed.
	clash := baseState()
	clash.Routes = append(clash.Routes, model.Route{Tenant: "blue", Prefix: mustPrefix("198.18.5.0/24"), Segs: []netip.Addr{mustAddr("fc00:2::1")}})
	if _, err := st.Apply(clash, false); err == nil || !strings.Contains(err.Error(), "owned by BGP") {
		t.Fatalf("a file taking BGP's prefix: %v", err)
	}
	wantRoutes(t, st, map[string]model.Origin{"198.18.2.0/24": model.OriginConfig, "198.18.7.0/24": model.OriginConfig,
		"198.18.5.0/24": model.OriginBGP, "198.18.6.0/24": model.OriginBGP})

	// BGP may not replace or delete the API's routes, nor the API BGP's.
	for _, c := range []struct {
		name string
		op   Op
		want string
	}{
		{"BGP replacing the API's route", Op{Kind: model.OpReplace, Origin: model.OriginBGP, Route: bgpRoute("198.18.2.0/24")}, "set through the seg6x API"},
		{"BGP deleting the API's route", Op{Kind: model.OpDelete, Origin: model.OriginBGP, Route: bgpRoute("198.18.7.0/24")}, "set through the seg6x API"},
		{"the API replacing BGP's route", Op{Kind: model.OpReplace, Route: bgpRoute("198.18.5.0/24")}, "owned by BGP"},
		{"the API deleting BGP's route", Op{Kind: model.OpDelete, Route: bgpRoute("198.18.6.0/24")}, "owned by BGP"},
		{"the kernel mirror adding to a tenant of the API", Op{Kind: model.OpAdd, Origin: model.OriginKernel, Route: bgpRoute("198.18.8.0/24")}, "set through the seg6x API"},
		{"BGP emptying the whole table", Op{Kind: model.OpReplace, Origin: model.OriginBGP, TenantRoutes: &TenantRoutes{Tenant: "blue", All: true}}, "set through the seg6x API"},
	} {
		if _, err := st.Commit([]Op{c.op}, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	// BGP replaces its own routes of blue in one swap; the API's stay.
	if _, err := st.Commit([]Op{{Kind: model.OpReplace, Origin: model.OriginBGP, TenantRoutes: &TenantRoutes{Tenant: "blue",
		Routes: []model.Route{*bgpRoute("198.18.6.0/24"), *bgpRoute("2001:db8:6::/48")}}}}, false); err != nil {
		t.Fatal(err)
	}
	want := map[string]model.Origin{"198.18.2.0/24": model.OriginConfig, "198.18.7.0/24": model.OriginConfig,
		"198.18.6.0/24": model.OriginBGP, "2001:db8:6::/48": model.OriginBGP}
	wantRoutes(t, st, want)

	// Restart: the origins come back from the saved state.
	st = reopen(t, st)
	wantRoutes(t, st, want)
	if d, err := st.Apply(next, false); err != nil || !d.Empty() {
		t.Fatalf("after the restart, the file again: diff %v, err %v", d, err)
	}

	// A file without blue removes it, BGP's routes with it.
	none := baseState()
	none.Tenants, none.Routes, none.SIDs = nil, nil, none.SIDs[1:]
	if _, err := st.Apply(none, false); err != nil {
		t.Fatalf("removing a tenant holding BGP routes: %v", err)
	}
	if st.TenantRoutes("blue") != nil || countEntries(st, TableRoutes) != 0 {
		t.Fatalf("tenant blue or its routes left: %v, %d entries", st.TenantRoutes("blue"), countEntries(st, TableRoutes))
	}
}
