package state

// counts_test.go: the store's counters (status, /metrics, the capacity checks) equal what it lists,
// after any sequence of commits: route adds and deletes (one at a time, as sets, as whole tenant
// tables), whole-state applies, tenant deletions, refused commits and restarts.

import (
	"fmt"
	"math/rand"
	"net/netip"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestCountsMatchListing(t *testing.T) {
	for _, seed := range []int64{7, 11, 13} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { countsMatchListing(t, seed, 1500) })
	}
}

func countsMatchListing(t *testing.T, seed int64, steps int) {
	dir := t.TempDir()
	open := func() *Store {
		st, err := Open(dir, fakeEnv{"eth1": 7, "eth2": 8}, openFake)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	t.Cleanup(func() { st.Close(); dropFake(dir) })
	r := rand.New(rand.NewSource(seed))
	tenants := []string{"blue", "red", "green"}
	prefix := func() netip.Prefix {
		if r.Intn(3) == 0 {
			return netip.MustParsePrefix(fmt.Sprintf("2001:db8:%x::/48", r.Intn(12)))
		}
		return netip.MustParsePrefix(fmt.Sprintf("198.18.%d.0/24", r.Intn(24)))
	}
	route := func(tn string, p netip.Prefix) model.Route {
		return model.Route{Tenant: tn, Prefix: p, Segs: []netip.Addr{mustAddr(fmt.Sprintf("fc00:2::%x", 1+r.Intn(3)))},
			Src: mustAddr("fc00:1::1")}
	}
	tenant := func(i int) model.Tenant {
		return model.Tenant{Name: tenants[i], Table: uint32(100 + i), Ports: []model.Port{{Dev: "eth1", VLAN: uint16(100 + i)}}}
	}
	check := func(step int, what string) {
		t.Helper()
		c, cur := st.Counts(), st.Current()
		var n [2]int
		for _, rt := range cur.Routes {
			n[famOf(rt.Prefix)]++
		}
		if c.Routes4 != n[0] || c.Routes6 != n[1] || c.Tenants != len(cur.Tenants) || c.SIDs != len(cur.SIDs) ||
			c.Interfaces != len(cur.Interfaces) {
			t.Fatalf("step %d (%s): counts %+v, listed %d IPv4 and %d IPv6 routes, %d tenants, %d SIDs, %d interfaces",
				step, what, c, n[0], n[1], len(cur.Tenants), len(cur.SIDs), len(cur.Interfaces))
		}
	}
	for step := 0; step < steps; step++ {
		var what string
		var ops []Op
		switch k := r.Intn(100); {
		case k < 30:
			what = "route add"
			rt := route(tenants[r.Intn(3)], prefix())
			ops = []Op{{Kind: []model.OpKind{model.OpAdd, model.OpReplace}[r.Intn(2)], Route: &rt}}
		case k < 45:
			what = "route delete"
			rt := model.Route{Tenant: tenants[r.Intn(3)], Prefix: prefix()}
			ops = []Op{{Kind: model.OpDelete, Route: &rt}}
		case k < 55:
			what = "route set"
			rs := RouteSet{Route: route(tenants[r.Intn(3)], netip.Prefix{})}
			for i := r.Intn(6); i > 0; i-- {
				rs.Prefixes = append(rs.Prefixes, prefix())
			}
			ops = []Op{{Kind: []model.OpKind{model.OpAdd, model.OpReplace, model.OpDelete}[r.Intn(3)], RouteSet: &rs}}
		case k < 62:
			what = "tenant table"
			tr := TenantRoutes{Tenant: tenants[r.Intn(3)]}
			for i := r.Intn(8); i > 0; i-- {
				tr.Routes = append(tr.Routes, route(tr.Tenant, prefix()))
			}
			ops = []Op{{Kind: model.OpReplace, TenantRoutes: &tr}}
		case k < 72:
			what = "tenant add"
			tn := tenant(r.Intn(3))
			ops = []Op{{Kind: model.OpReplace, Tenant: &tn}}
		case k < 78:
			what = "tenant delete"
			ops = []Op{{Kind: model.OpDelete, Tenant: &model.Tenant{Name: tenants[r.Intn(3)]}}}
		case k < 85:
			what = "sid add/delete"
			sd := model.SID{SID: mustAddr(fmt.Sprintf("fc00:1::%x", 0x64+r.Intn(4))), Action: "End.DT4", Tenant: tenants[r.Intn(3)]}
			ops = []Op{{Kind: []model.OpKind{model.OpReplace, model.OpDelete}[r.Intn(2)], SID: &sd}}
		case k < 95:
			what = "apply"
			var s model.State
			for i := range tenants {
				if r.Intn(2) == 0 {
					s.Tenants = append(s.Tenants, tenant(i))
					for j := r.Intn(5); j > 0; j-- {
						s.Routes = append(s.Routes, route(tenants[i], prefix()))
					}
				}
			}
			s.Routes = dedupRoutes(s.Routes)
			_, _ = st.Apply(s, r.Intn(5) == 0)
			check(step, what)
			continue
		default:
			what = "restart"
			st.Close()
			st = open()
			check(step, what)
			continue
		}
		_, _ = st.Commit(ops, r.Intn(10) == 0) // refused ones too: nothing may move
		check(step, what)
	}
}

// dedupRoutes keeps the first route of each (tenant, prefix).
func dedupRoutes(rs []model.Route) []model.Route {
	seen := map[string]bool{}
	var out []model.Route
	for _, r := range rs {
		k := r.Tenant + " " + r.Prefix.String()
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}
