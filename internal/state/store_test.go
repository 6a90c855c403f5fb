package state

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

// fakeEnv resolves names without touching the host's interfaces.
type fakeEnv map[string]int

func (f fakeEnv) Ifindex(dev string) (int, error) {
	if i, ok := f[dev]; ok {
		return i, nil
	}
	return 0, fmt.Errorf("no such interface %q", dev)
}

func (f fakeEnv) SourceFor(dst netip.Addr) (netip.Addr, error) {
	return netip.MustParseAddr("fc00:1::1"), nil
}

// openTemp opens a store in a new directory on the in-memory data plane (fake_test.go).
func openTemp(t *testing.T) *Store {
	t.Helper()
	dir := t.TempDir()
	st, err := Open(dir, fakeEnv{"eth1": 7, "eth2": 8}, openFake)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		dropFake(dir)
	})
	return st
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func mustAddr(s string) netip.Addr     { return netip.MustParseAddr(s) }

func baseState() model.State {
	return model.State{
		Tenants: []model.Tenant{{Name: "blue", Table: 100, Ports: []model.Port{{Dev: "eth1", VLAN: 100}}}},
		Routes: []model.Route{{Tenant: "blue", Prefix: mustPrefix("198.18.2.0/24"),
			Segs: []netip.Addr{mustAddr("fc00:2::1"), mustAddr("fc00:3::64")}}},
		SIDs: []model.SID{
			{SID: mustAddr("fc00:1::64"), Action: "End.DT4", Tenant: "blue", VLAN: 100},
			{SID: mustAddr("fc00:1::65"), Action: "End.DX4", NH4: mustAddr("198.18.9.2")},
		},
	}
}

// countEntries is the number of entries of one data plane table.
func countEntries(st *Store, tb Table) int { return fakeOf(st).count(tb) }

func TestApplyIdempotentAndRemoves(t *testing.T) {
	st := openTemp(t)
	d, err := st.Apply(baseState(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Added) != 4 {
		t.Fatalf("first apply added %v", d.Added)
	}
	if n := countEntries(st, TableSIDs); n != 2 {
		t.Fatalf("sids map has %d entries, want 2", n)
	}
	if n := countEntries(st, TableRoutes); n != 1 {
		t.Fatalf("routes4 has %d entries, want 1", n)
	}
	d, err = st.Apply(baseState(), false)
	if err != nil || !d.Empty() {
		t.Fatalf("second apply of the same state: diff %v err %v", d, err)
	}
	next := baseState()
	next.SIDs = next.SIDs[:1]
	next.Routes = nil
	if d, err = st.Apply(next, false); err != nil {
		t.Fatal(err)
	}
	if len(d.Removed) != 2 {
		t.Fatalf("removed %v", d.Removed)
	}
	if n := countEntries(st, TableSIDs); n != 1 {
		t.Fatalf("sids map has %d entries after removal, want 1", n)
	}
	if n := countEntries(st, TableRoutes); n != 0 {
		t.Fatalf("routes4 has %d entries after removal, want 0", n)
	}
	checkImage(t, st)
}

func TestInvalidInputChangesNothing(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	before := st.Current()
	seventeen := make([]netip.Addr, 17)
	for i := range seventeen {
		seventeen[i] = mustAddr(fmt.Sprintf("fc00:2::%x", i+1))
	}
	cases := []struct {
		name string
		edit func(s *model.State)
		want string
	}{
		{"17 SIDs", func(s *model.State) { s.Routes[0].Segs = seventeen }, "segs: 17 SIDs, at most 16"},
		{"unknown tenant", func(s *model.State) { s.Routes[0].Tenant = "red" }, `tenant: unknown tenant "red"`},
		{"duplicate SID", func(s *model.State) { s.SIDs = append(s.SIDs, s.SIDs[0]) }, "duplicate SID"},
		{"DX4 without nh4", func(s *model.State) { s.SIDs[1].NH4 = netip.Addr{} }, "nh4: End.DX4 needs an IPv4 next hop"},
		{"End with table", func(s *model.State) { s.SIDs[1] = model.SID{SID: mustAddr("fc00:1::9"), Action: "End", Table: 5} }, "table: End takes no table"},
		{"bad action", func(s *model.State) { s.SIDs[1].Action = "End.DX9" }, `action: "End.DX9" is not one of`},
		{"host bits", func(s *model.State) { s.Routes[0].Prefix = mustPrefix("198.18.2.1/24") }, "did you mean 198.18.2.0/24"},
		{"vlan on End", func(s *model.State) { s.SIDs[1] = model.SID{SID: mustAddr("fc00:1::9"), Action: "End", VLAN: 5} }, "vlan: End does not decapsulate"},
		{"cache too long", func(s *model.State) { s.Options.NextHopCacheMs = 20000 }, "nexthop_cache_ms: 20000 is more than 10000"},
		{"unknown device", func(s *model.State) { s.Tenants[0].Ports[0].Dev = "eth9" }, `no such interface "eth9"`},
		{"port twice", func(s *model.State) {
			s.Tenants = append(s.Tenants, model.Tenant{Name: "red", Ports: []model.Port{{Dev: "eth1", VLAN: 100}}})
		}, `already belongs to tenant "blue"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			next := st.Current()
			tc.edit(&next)
			_, err := st.Apply(next, false)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if !model.Same(before, st.Current()) {
				t.Fatal("running state changed after a rejected apply")
			}
			if n := countEntries(st, TableSIDs); n != 2 {
				t.Fatalf("sids map has %d entries, want 2", n)
			}
		})
	}
}

// A failure half way through the data plane steps (here: attaching an interface, after tx_ports,
// policies, SIDs, routes and ports were written) must undo what was already written.
func TestFailedApplyRollsBack(t *testing.T) {
	st := openTemp(t)
	st.Env = fakeEnv{"eth1": 7, "eth2": 8, "lo": 1}
	fakeOf(st).failOn = "lo"
	next := baseState()
	next.Interfaces = []model.Interface{{Name: "lo", Mode: "native"}}
	_, err := st.Apply(next, false)
	if err == nil || !strings.Contains(err.Error(), "attach lo") {
		t.Fatalf("error %v, want an attach failure", err)
	}
	for _, tb := range []Table{TableTxPorts, TableSIDs, TableRoutes, TablePorts} {
		if n := countEntries(st, tb); n != 0 {
			t.Errorf("table %d has %d entries after a failed apply", tb, n)
		}
	}
	if len(st.Current().SIDs) != 0 {
		t.Error("state recorded objects of a failed apply")
	}
	var zero model.Errors
	if errors.As(err, &zero) {
		t.Error("an attach failure is not a validation error")
	}
	var we *model.WriteError
	if !errors.As(err, &we) {
		t.Errorf("an attach failure is a WriteError: %T %v", err, err)
	}
}

// Objects of the kernel mirror and of the API live side by side; neither changes the other's.
func TestOriginsKeepApart(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	kt := model.Tenant{Name: "kernel-main", Ports: []model.Port{{Dev: "eth2"}}}
	kr := model.Route{Tenant: "kernel-main", Prefix: mustPrefix("198.18.0.0/16"), Segs: []netip.Addr{mustAddr("fc00:2::9")}}
	kp := model.Route{Tenant: "kernel-main", Prefix: mustPrefix("198.18.5.0/24"), Mode: model.ModePass}
	ks := model.SID{SID: mustAddr("fc00:1::70"), Action: "End"}
	ops := []Op{{Kind: model.OpAdd, Origin: model.OriginKernel, Tenant: &kt}, {Kind: model.OpAdd, Origin: model.OriginKernel, Route: &kr},
		{Kind: model.OpAdd, Origin: model.OriginKernel, Route: &kp}, {Kind: model.OpAdd, Origin: model.OriginKernel, SID: &ks}}
	if _, err := st.Commit(ops, false); err != nil {
		t.Fatal(err)
	}
	// The API cannot touch them ...
	for _, op := range []Op{{Kind: model.OpDelete, SID: &model.SID{SID: ks.SID}}, {Kind: model.OpReplace, Route: &kr},
		{Kind: model.OpDelete, Tenant: &model.Tenant{Name: "kernel-main"}}} {
		if _, err := st.Commit([]Op{op}, false); err == nil || !strings.Contains(err.Error(), "owned by the kernel mirror") {
			t.Fatalf("API op on a kernel object: %v", err)
		}
	}
	// ... the mirror cannot touch the API's ...
	if _, err := st.Commit([]Op{{Kind: model.OpDelete, Origin: model.OriginKernel, SID: &model.SID{SID: mustAddr("fc00:1::64")}}}, false); err == nil ||
		!strings.Contains(err.Error(), "conflicts with an object set through the seg6x API") {
		t.Fatalf("mirror op on an API object: %v", err)
	}
	// ... and re-applying the config file leaves the mirror's objects alone.
	if d, err := st.Apply(baseState(), false); err != nil || !d.Empty() {
		t.Fatalf("re-apply: %v %v", d, err)
	}
	cur := st.Current()
	if len(cur.SIDs) != 3 || len(cur.Routes) != 3 {
		t.Fatalf("after re-apply: %d SIDs, %d routes", len(cur.SIDs), len(cur.Routes))
	}
	for _, r := range cur.Routes {
		if r.Prefix == kp.Prefix && (r.Mode != model.ModePass || r.ID != 0) {
			t.Fatalf("pass route read back as %+v", r)
		}
	}
	checkImage(t, st)
	st = reopen(t, st)
	if got := st.Current(); !model.Same(got, cur) {
		t.Fatalf("pass route or origins not saved:\n%+v\n%+v", got, cur)
	}
}

// Removals come out in a fixed order (sorted), not the order of Go's maps: the same file applied
// to the same state gives the same plan and the same diff every time.
func TestApplyRemovesInOrder(t *testing.T) {
	st := openTemp(t)
	s := baseState()
	for i := 0; i < 40; i++ {
		s.Routes = append(s.Routes, model.Route{Tenant: "blue", Prefix: mustPrefix(fmt.Sprintf("198.18.%d.0/24", 100+i)),
			Segs: []netip.Addr{mustAddr("fc00:2::1")}})
		s.SIDs = append(s.SIDs, model.SID{SID: netip.AddrFrom16([16]byte{0xfc, 0, 0, 9, 15: byte(i + 1)}), Action: "End"})
	}
	if _, err := st.Apply(s, false); err != nil {
		t.Fatal(err)
	}
	b := baseState()
	ops := st.Plan(&b)
	var sids []string
	for _, op := range ops {
		if op.SID != nil && op.Kind == model.OpDelete {
			sids = append(sids, op.SID.SID.String())
		}
	}
	if len(sids) != 40 || !slices.IsSortedFunc(sids, func(a, b string) int { return mustAddr(a).Compare(mustAddr(b)) }) {
		t.Errorf("SID deletions: %v", sids)
	}
	d, err := st.Apply(b, false)
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	for _, r := range d.Removed {
		if strings.HasPrefix(r, "route ") {
			routes = append(routes, r)
		}
	}
	if len(routes) != 40 || !slices.IsSorted(routes) { // 198.18.100.0/24 .. 198.18.139.0/24 sort as text too
		t.Errorf("removed routes: %v", routes)
	}
}

// A rejected commit leaves every policy's reference count as it was: policies the commit shared,
// dropped or created before its failing operation. Removing the one route then frees its policy
// (its id; the map entry stays, unused).
func TestRejectedCommitKeepsPolicyRefs(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	before := st.Policies()
	segs := baseState().Routes[0].Segs
	other := []netip.Addr{mustAddr("fc00:2::9")}
	ops := []Op{
		{Kind: model.OpAdd, Route: &model.Route{Tenant: "blue", Prefix: mustPrefix("198.18.3.0/24"), Segs: segs}},  // shares
		{Kind: model.OpAdd, Route: &model.Route{Tenant: "blue", Prefix: mustPrefix("198.18.4.0/24"), Segs: segs}},  // shares
		{Kind: model.OpAdd, Route: &model.Route{Tenant: "blue", Prefix: mustPrefix("198.18.6.0/24"), Segs: other}}, // creates
		{Kind: model.OpDelete, Route: &model.Route{Tenant: "blue", Prefix: mustPrefix("198.18.4.0/24")}},           // drops
		{Kind: model.OpAdd, Route: &model.Route{Tenant: "red", Prefix: mustPrefix("198.18.5.0/24"), Segs: segs}},   // fails
	}
	if _, err := st.Commit(ops, false); err == nil {
		t.Fatal("a route of an unknown tenant was accepted")
	}
	if after := st.Policies(); len(after) != 1 || after[0].Routes != 1 || !slices.Equal(after[0].Segs, segs) ||
		after[0].ID != before[0].ID {
		t.Fatalf("policies after a rejected commit: %+v, want %+v", after, before)
	}
	if _, err := st.Commit([]Op{{Kind: model.OpDelete, Route: &model.Route{Tenant: "blue", Prefix: mustPrefix("198.18.2.0/24")}}}, false); err != nil {
		t.Fatal(err)
	}
	if after := st.Policies(); len(after) != 0 {
		t.Fatalf("the last route's policy is still there: %+v", after)
	}
}
