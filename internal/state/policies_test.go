package state

// policies_test.go: named weighted policies: slots by weight, a list marked down moves only its own
// slots and writes only the groups (never a route), references, persistence, refusals.

import (
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func weighted(name string, weights ...uint32) model.Policy {
	p := model.Policy{Name: name}
	for i, w := range weights {
		p.Lists = append(p.Lists, model.SegList{Segs: []netip.Addr{netip.AddrFrom16([16]byte{0xfc, 0, 0, 0x20, 15: byte(i + 1)})}, Weight: w})
	}
	return p
}

func slotsOf(b [model.GroupBuckets]uint32) map[uint32]int {
	n := map[uint32]int{}
	for _, id := range b {
		n[id]++
	}
	return n
}

func TestGroupBucketsByWeight(t *testing.T) {
	for _, c := range []struct {
		weights []uint32
		want    []int
	}{
		{[]uint32{1, 1}, []int{32, 32}},
		{[]uint32{2, 1, 1}, []int{32, 16, 16}},
		{[]uint32{1, 1, 1}, []int{22, 21, 21}},
		{[]uint32{1000, 1}, []int{63, 1}}, // every list up gets a slot
		{[]uint32{3, 0}, []int{48, 16}},   // weight 0 is 1 (filled by validation): here as given
	} {
		p := weighted("p", c.weights...)
		for i := range p.Lists {
			if p.Lists[i].Weight == 0 {
				p.Lists[i].Weight = 1
			}
		}
		ids := []uint32{11, 12, 13}[:len(c.weights)]
		got := slotsOf(groupBuckets(p.Lists, ids))
		for i, w := range c.want {
			if got[ids[i]] != w {
				t.Errorf("weights %v: list %d has %d slots, want %d (%v)", c.weights, i, got[ids[i]], w, got)
			}
		}
	}
}

func TestListDownMovesOnlyItsSlots(t *testing.T) {
	p := weighted("p", 1, 1, 2)
	ids := []uint32{11, 12, 13}
	before := groupBuckets(p.Lists, ids)
	p.Lists[0].Down = true
	after := groupBuckets(p.Lists, ids)
	for b := range after {
		if before[b] != 11 && after[b] != before[b] {
			t.Errorf("slot %d of a list still up moved: %d -> %d", b, before[b], after[b])
		}
		if after[b] == 11 {
			t.Errorf("slot %d still on the list that is down", b)
		}
	}
	if n := slotsOf(after); n[12]+n[13] != model.GroupBuckets || n[13] <= n[12] {
		t.Errorf("after list 0 down: %v (the weight-2 list should take more)", n)
	}
	for i := range p.Lists {
		p.Lists[i].Down = true
	}
	if n := slotsOf(groupBuckets(p.Lists, ids)); n[0] != model.GroupBuckets {
		t.Errorf("every list down: %v, want every slot 0", n)
	}
}

func TestNamedPolicyRoutesAndDown(t *testing.T) {
	st := openTemp(t)
	s := baseState()
	s.Policies = []model.Policy{weighted("east", 2, 1, 1)}
	s.Routes = append(s.Routes, model.Route{Tenant: "blue", Prefix: mustPrefix("198.18.40.0/24"), Policy: "east"},
		model.Route{Tenant: "blue", Prefix: mustPrefix("2001:db8:40::/48"), Policy: "east"})
	if _, err := st.Apply(s, false); err != nil {
		t.Fatal(err)
	}
	checkImage(t, st)
	im := st.Image()
	if len(im.Groups) != 2 {
		t.Fatalf("%d groups, want 2 (IPv4 and IPv6 inner)", len(im.Groups))
	}
	r4 := im.Routes[RouteKey{TableID: st.rt.tenants["blue"].tableID, Prefix: mustPrefix("198.18.40.0/24")}]
	if r4&model.GroupFlag == 0 || im.Groups[r4&^model.GroupFlag].Buckets[0] == 0 {
		t.Fatalf("route 198.18.40.0/24 -> %#x, not a group with lists", r4)
	}
	if d, err := st.Apply(s, false); err != nil || !d.Empty() {
		t.Fatalf("applying the same state again: %v %v", d, err)
	}

	// A list down: one commit that writes the two groups and nothing else.
	var steps []Step
	fakeOf(st).onApply = func(s []Step) { steps = s }
	s.Policies[0].Lists[0].Down = true
	if _, err := st.Apply(s, false); err != nil {
		t.Fatal(err)
	}
	for _, step := range steps {
		if w, ok := step.Writes.(GroupWrites); !ok || step.Kind != StepPut || len(w) != 2 {
			t.Errorf("marking a list down wrote %T to table %d (kind %d); want only the 2 groups", step.Writes, step.Table(), step.Kind)
		}
	}
	checkImage(t, st)
	down := st.rt.state().Policies[0]
	for _, b := range st.Image().Groups[r4&^model.GroupFlag].Buckets {
		if b == down.Lists[0].PolicyID[0] || b == 0 {
			t.Fatalf("a slot still names the list that is down (%d)", b)
		}
	}

	st = reopen(t, st)
	checkImage(t, st)
	if got := st.rt.state().Policies; len(got) != 1 || !got[0].Lists[0].Down {
		t.Fatalf("after reopening: %+v", got)
	}
	// In use: not deleted; its routes gone, it goes and its lists' policies with it.
	if _, err := st.Commit([]Op{{Kind: model.OpDelete, Policy: &model.Policy{Name: "east"}}}, false); err == nil ||
		!strings.Contains(err.Error(), "2 routes still use it") {
		t.Fatalf("deleting a policy in use: %v", err)
	}
	// Each list's encap policies say whose list they are (stats), and count no route.
	lists := 0
	for _, pi := range st.Policies() {
		if len(pi.Lists) == 0 {
			continue
		}
		lists++
		if len(pi.Lists) != 1 || !strings.HasPrefix(pi.Lists[0], "east list ") || pi.Routes != 0 {
			t.Errorf("list policy %d: lists %v, %d routes", pi.ID, pi.Lists, pi.Routes)
		}
	}
	if lists != 6 {
		t.Errorf("%d encap policies name a list, want 6 (3 lists x 2 families)", lists)
	}
	n := len(st.Policies())
	s.Policies, s.Routes = nil, s.Routes[:1]
	if _, err := st.Apply(s, false); err != nil {
		t.Fatal(err)
	}
	checkImage(t, st)
	if len(st.Policies()) != n-6 || len(st.Image().Groups) != 0 {
		t.Errorf("after deleting the policy: %d encap policies (was %d, 3 lists x 2 families go), %d groups", len(st.Policies()), n, len(st.Image().Groups))
	}
	st = reopen(t, st)
	checkImage(t, st)
}

func TestNamedPolicyRefusals(t *testing.T) {
	st := openTemp(t)
	for _, c := range []struct {
		s    model.State
		want string
	}{
		{model.State{Policies: []model.Policy{{Name: "x"}}}, `policy "x": lists: no segment lists`},
		{model.State{Policies: []model.Policy{weighted("x", 1), weighted("x", 1)}}, `policy "x": defined twice`},
		{model.State{Policies: []model.Policy{{Name: "x", Lists: []model.SegList{{Segs: []netip.Addr{mustAddr("198.18.0.1")}}}}}},
			`policy "x": lists[0].segs[0]: 198.18.0.1 is not a unicast IPv6 address`},
		{model.State{Tenants: baseState().Tenants, Routes: []model.Route{{Tenant: "blue", Prefix: mustPrefix("198.18.40.0/24"), Policy: "nope"}}},
			`policy: unknown policy "nope"`},
		{model.State{Tenants: baseState().Tenants, Policies: []model.Policy{weighted("x", 1)}, Routes: []model.Route{{Tenant: "blue",
			Prefix: mustPrefix("198.18.40.0/24"), Policy: "x", Segs: []netip.Addr{mustAddr("fc00:2::1")}}}}, "takes no mode, segs"},
	} {
		if _, err := st.Apply(c.s, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

func TestNamedPolicyListAsUSIDs(t *testing.T) {
	p := model.Policy{Name: "u", Lists: []model.SegList{{USIDs: &model.USIDList{Block: mustPrefix("fcbb:0::/32"), IDs: []string{"100", "200"}}},
		{USIDs: &model.USIDList{Block: mustPrefix("fcbb:0::/32"), IDs: []string{"zz"}}}}}
	var errs model.Errors
	model.ValidateNamedPolicy(&p, func(err error) { errs = append(errs, err) })
	if len(p.Lists[0].Segs) != 1 || p.Lists[0].Segs[0] != mustAddr("fcbb:0:100:200::") {
		t.Errorf("list 0 as uSIDs: segs %v", p.Lists[0].Segs)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `policy "u": lists[1].usids.ids[0]`) {
		t.Errorf("errors %v, want one naming lists[1].usids.ids[0]", errs)
	}
}

// A file that drops a named policy and its routes swaps the tenant's table, then deletes the
// policy. When saving that commit fails, the data plane is undone from what each entry says the
// map held: the old table's routes come back with the deleted policy's group ids (the entries
// carry the index's ids, not a lookup of a policy the commit already removed).
func TestSwapAwayFromDeletedPolicyUndoes(t *testing.T) {
	st := openTemp(t)
	s := baseState()
	s.Policies = []model.Policy{weighted("east", 2, 1, 1)}
	s.Routes = append(s.Routes, model.Route{Tenant: "blue", Prefix: mustPrefix("198.18.40.0/24"), Policy: "east"})
	if _, err := st.Apply(s, false); err != nil {
		t.Fatal(err)
	}
	before := maps.Clone(fakeOf(st).table(TableRoutes))
	journal := filepath.Join(st.Dir, "state.journal")
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(journal, 0o700); err != nil { // the next journal write fails
		t.Fatal(err)
	}
	s.Policies, s.Routes = nil, s.Routes[:1]
	if _, err := st.Apply(s, false); err == nil || !strings.Contains(err.Error(), "saving state") {
		t.Fatalf("apply with an unwritable journal: %v", err)
	}
	if after := fakeOf(st).table(TableRoutes); !maps.Equal(after, before) {
		t.Fatalf("routes after the failed commit %v, want %v", after, before)
	}
	if n := len(st.Current().Policies); n != 1 {
		t.Fatalf("%d named policies after the failed commit, want 1", n)
	}
}
