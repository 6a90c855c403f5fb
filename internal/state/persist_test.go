package state

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func reopen(t *testing.T, st *Store) *Store {
	t.Helper()
	dir, env := st.Dir, st.Env
	st.Close()
	n, err := Open(dir, env, openFake)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

// A state built by many commits (adds, a table swap, deletes, shared policies) reads back the same
// from snapshot + journal, and the maps already match it (Reconcile finds nothing to do).
func TestSavedStateReplays(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	seg := []netip.Addr{mustAddr("fc00:2::1")}
	var ops []Op
	for i := 0; i < 50; i++ {
		r := model.Route{Tenant: "blue", Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, byte(i), 0}), 24), Segs: seg}
		ops = append(ops, Op{Kind: model.OpAdd, Route: &r})
	}
	if _, err := st.Commit(ops, false); err != nil {
		t.Fatal(err)
	}
	if n := len(st.Policies()); n != 2 {
		t.Fatalf("%d policies for 51 routes over 2 segment lists, want 2", n)
	}
	if err := st.Compact(); err != nil { // some of it in the snapshot, the rest in the journal
		t.Fatal(err)
	}
	swap := []model.Route{{Tenant: "blue", Prefix: mustPrefix("198.18.7.0/24"), Segs: seg},
		{Tenant: "blue", Prefix: mustPrefix("2001:db8:7::/48"), Segs: seg}}
	if _, err := st.Commit([]Op{{Kind: model.OpReplace, TenantRoutes: &TenantRoutes{Tenant: "blue", Routes: swap}}}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Commit([]Op{{Kind: model.OpDelete, SID: &model.SID{SID: mustAddr("fc00:1::65")}}}, false); err != nil {
		t.Fatal(err)
	}
	want, gen := st.Current(), st.Gen()
	st = reopen(t, st)
	if got := st.Current(); !model.Same(got, want) || st.Gen() != gen {
		t.Fatalf("replayed state differs:\n got %+v gen %d\nwant %+v gen %d", got, st.Gen(), want, gen)
	}
	// One policy per inner family for fc00:2::1; the two-SID one lost its last route and is gone.
	if ps := st.Policies(); len(ps) != 2 || len(ps[0].Segs) != 1 || len(ps[1].Segs) != 1 || ps[0].Routes != 1 {
		t.Fatalf("policies after the swap: %+v", ps)
	}
	rep, err := st.Reconcile()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != 0 || rep.Removed != 0 {
		t.Fatalf("maps did not match the saved state: %+v", rep)
	}
	if n := countEntries(st, TableRoutes); n != 2 {
		t.Fatalf("route maps hold %d entries after the swap, want 2", n)
	}
	checkImage(t, st)
}

// What a crashed commit left (map entries without a journal line, a torn last line) is removed by
// Reconcile; what is missing is written back.
func TestReconcileAfterCrash(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(st.journalPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"gen":2,"recs":[{"sid":{"sid":"fc00:1::99","act`)
	f.Close()
	stale := RouteKey{TableID: 77, Prefix: mustPrefix("198.18.99.0/24")}
	fakeOf(st).table(TableRoutes)[stale] = uint32(1)
	delete(fakeOf(st).table(TableSIDs), netip.MustParsePrefix("fc00:1::64/128"))
	st = reopen(t, st)
	if len(st.Current().SIDs) != 2 {
		t.Fatalf("torn journal line: %d SIDs, want the 2 committed", len(st.Current().SIDs))
	}
	rep, err := st.Reconcile()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Removed != 1 || rep.Written != 1 {
		t.Fatalf("reconcile %+v, want 1 stale route removed and 1 SID written", rep)
	}
	if _, ok := fakeOf(st).table(TableRoutes)[stale]; ok {
		t.Fatal("stale route still in the data plane")
	}
	checkImage(t, st)
}

// A fresh data plane (no maps of this layout, as after a layout change or a lost bpffs) is filled
// from the saved state when the instance is opened.
func TestNewMapsFilledFromSavedState(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	dir, env := st.Dir, st.Env
	st.Close()
	dropFake(dir)
	n, err := Open(dir, env, openFake)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if n.NewMaps == nil || n.NewMaps.Written == 0 {
		t.Fatalf("a fresh data plane was not filled: %+v", n.NewMaps)
	}
	if c := countEntries(n, TableSIDs); c != 2 {
		t.Fatalf("new maps hold %d SIDs, want 2", c)
	}
	if c := countEntries(n, TableRoutes); c != 1 {
		t.Fatalf("new maps hold %d routes, want 1", c)
	}
	checkImage(t, n)
}

// A released policy id is not handed out again within the quarantine (a packet that read it just
// before must not find another policy there).
func TestPolicyIDQuarantine(t *testing.T) {
	p := newIDPool(10, "things")
	a, _ := p.alloc()
	p.release(a, true)
	b, _ := p.alloc()
	if a == b {
		t.Fatalf("id %d reused at once", a)
	}
	for i := 0; i < 7; i++ {
		if _, err := p.alloc(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.alloc(); err != nil { // only the quarantined one is left: waits it out
		t.Fatal(err)
	}
	if _, err := p.alloc(); err == nil {
		t.Fatal("allocated more ids than the pool has")
	}
}

// Several operations on one route in one commit (added then changed, added then deleted, replaced
// by itself), and a tenant deleted and added again in one commit: the data plane holds what the
// last operation left, and the journal reads back to the same state.
func TestRouteEditedTwiceInACommit(t *testing.T) {
	st := openTemp(t)
	x, y := []netip.Addr{mustAddr("fc00:2::1")}, []netip.Addr{mustAddr("fc00:2::2")}
	route := func(kind model.OpKind, p string, segs []netip.Addr) Op {
		return Op{Kind: kind, Route: &model.Route{Tenant: "red", Prefix: mustPrefix(p), Segs: segs}}
	}
	red := Op{Kind: model.OpAdd, Tenant: &model.Tenant{Name: "red", Ports: []model.Port{{Dev: "eth2", VLAN: 200}}}}
	commits := [][]Op{
		{red, route(model.OpAdd, "198.18.10.0/24", x), route(model.OpAdd, "198.18.11.0/24", x)},
		{route(model.OpAdd, "198.18.12.0/24", x), route(model.OpReplace, "198.18.12.0/24", y),
			route(model.OpAdd, "198.18.13.0/24", x), route(model.OpDelete, "198.18.13.0/24", nil),
			route(model.OpReplace, "198.18.10.0/24", x), route(model.OpDelete, "198.18.11.0/24", nil)},
		{route(model.OpDelete, "198.18.10.0/24", nil), route(model.OpDelete, "198.18.12.0/24", nil),
			{Kind: model.OpDelete, Tenant: &model.Tenant{Name: "red"}}, red, route(model.OpAdd, "198.18.10.0/24", y)},
	}
	want := []map[string]string{
		{"198.18.10.0/24": "fc00:2::1", "198.18.11.0/24": "fc00:2::1"},
		{"198.18.10.0/24": "fc00:2::1", "198.18.12.0/24": "fc00:2::2"},
		{"198.18.10.0/24": "fc00:2::2"},
	}
	for i, ops := range commits {
		if _, err := st.Commit(ops, false); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		checkImage(t, st)
		table, _ := st.TableIDOf("red")
		got := map[string]string{}
		for k, v := range fakeOf(st).table(TableRoutes) {
			if rk := k.(RouteKey); rk.TableID == table {
				got[rk.Prefix.String()] = st.rt.polByID[v.(uint32)].segs[0].String()
			}
		}
		if n := countEntries(st, TableRoutes); !maps.Equal(got, want[i]) || n != len(want[i]) {
			t.Fatalf("commit %d: routes of red %v (%d in all), want %v", i, got, n, want[i])
		}
		cur, gen := st.Current(), st.Gen()
		st = reopen(t, st)
		if !model.Same(st.Current(), cur) || st.Gen() != gen {
			t.Fatalf("commit %d: the journal reads back as another state", i)
		}
		if rep, err := st.Reconcile(); err != nil || rep.Written != 0 || rep.Removed != 0 {
			t.Fatalf("commit %d: reconcile after reopening: %+v, %v", i, rep, err)
		}
	}
}

// A crash between writing a snapshot and removing the journal it folded leaves both: the journal's
// lines (generations the snapshot includes) are skipped, not replayed over it (a line replayed
// again could name a policy id the snapshot has since given to another policy).
func TestJournalLinesInTheSnapshotAreSkipped(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(st.Dir, "state.journal")
	old, err := os.ReadFile(journal)
	if err != nil || len(old) == 0 {
		t.Fatalf("journal: %v (%d bytes)", err, len(old))
	}
	if err := st.Compact(); err != nil {
		t.Fatal(err)
	}
	// The old lines come back, one of them naming a tenant nobody has: replaying it would fail.
	bogus := fmt.Sprintf(`{"gen":%d,"recs":[{"r":{"t":"nobody","p":"198.18.9.0/24","pol":5}}]}`+"\n", st.Gen())
	if err := os.WriteFile(journal, append(old, bogus...), 0o600); err != nil {
		t.Fatal(err)
	}
	want, gen := st.Current(), st.Gen()
	st = reopen(t, st)
	if got := st.Current(); !model.Same(got, want) || st.Gen() != gen {
		t.Fatalf("state after the reopen:\n got %+v gen %d\nwant %+v gen %d", got, st.Gen(), want, gen)
	}
}

// An idle fold of the journal gives way when asked (a commit waits for the store): nothing changes,
// the fold is still due, and it completes when not asked to yield.
func TestCompactGivesWay(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	segs := []netip.Addr{mustAddr("fc00:2::1")}
	set := &RouteSet{Route: model.Route{Tenant: "blue", Segs: segs}}
	for i := 0; i < 50000; i++ { // past 1 MiB of journal, 4096 records many times over
		set.Prefixes = append(set.Prefixes, netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, byte(i >> 8), byte(i)}), 32))
	}
	snapshot, journal := filepath.Join(st.Dir, "state.snapshot"), filepath.Join(st.Dir, "state.journal")
	// 20000 routes into the snapshot, then 30000: the journal outgrows the snapshot without
	// reaching four times it.
	half := *set
	half.Prefixes = set.Prefixes[:20000]
	if _, err := st.Commit([]Op{{Kind: model.OpAdd, RouteSet: &half}}, false); err != nil {
		t.Fatal(err)
	}
	if err := st.Compact(); err != nil {
		t.Fatal(err)
	}
	snap0, _ := os.ReadFile(snapshot)
	half.Prefixes = set.Prefixes[20000:]
	if _, err := st.Commit([]Op{{Kind: model.OpAdd, RouteSet: &half}}, false); err != nil {
		t.Fatal(err)
	}
	if !st.CompactDue() {
		t.Fatal("the journal is not due for a fold")
	}
	asked := 0
	if err := st.CompactIfDue(func() bool { asked++; return asked >= 2 }); !errors.Is(err, ErrCompactYielded) {
		t.Fatalf("a fold asked to give way: %v", err)
	}
	if snap, _ := os.ReadFile(snapshot); !bytes.Equal(snap, snap0) || !st.CompactDue() {
		t.Fatalf("the fold that gave way changed the snapshot (%d -> %d bytes) or is no longer due", len(snap0), len(snap))
	}
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("the journal is gone after a fold that gave way: %v", err)
	}
	if err := st.CompactIfDue(func() bool { return false }); err != nil || st.CompactDue() {
		t.Fatalf("the fold: %v (due after it: %v)", err, st.CompactDue())
	}
	want, gen := st.Current(), st.Gen()
	st = reopen(t, st)
	if got := st.Current(); !model.Same(got, want) || st.Gen() != gen || st.Counts().Routes4 != 50001 {
		t.Fatalf("state after the fold and a reopen: %d routes, gen %d (want %d)", st.Counts().Routes4, st.Gen(), gen)
	}
}
