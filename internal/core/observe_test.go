package core_test

// observe_test.go: the controller counts every commit by origin and result from the start (zeros
// included), times the applied ones, and reports each to OnCommit after the lock is released.

import (
	"errors"
	"testing"

	. "github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestCommitsCountedByOriginAndResult(t *testing.T) {
	dir := t.TempDir()
	t.Cleanup(func() { testsupport.RemoveInstance(dir) }) // its pins too, after the store is closed
	ctl := New(testsupport.OpenStore(t, dir, testsupport.FakeEnv{}))
	count := func() map[[2]string]uint64 {
		counts, _ := ctl.CommitStats()
		out := map[[2]string]uint64{}
		for _, c := range counts {
			out[[2]string{c.Origin, c.Result}] = c.N
		}
		return out
	}
	start := count()
	if len(start) != len(CommitOrigins)*len(CommitResults) {
		t.Fatalf("%d series at the start, want every origin with every result", len(start))
	}
	for k, n := range start {
		if n != 0 {
			t.Fatalf("%v = %d at the start", k, n)
		}
	}

	tenant := func(name string, table uint32) []state.Op {
		return []state.Op{{Kind: model.OpAdd, Tenant: &model.Tenant{Name: name, Table: table}}}
	}
	var recs []Record
	ctl.OnCommit(func(r Record) {
		ctl.Read(func(*state.Store) {}) // reported outside the lock
		recs = append(recs, r)
	})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := ctl.Commit(tenantOp("blue"), Options{})
	must(err)
	_, err = ctl.Commit(tenant("dry", 200), Options{DryRun: true})
	must(err)
	_, err = ctl.Apply(model.State{Tenants: []model.Tenant{{Name: "blue", Table: 100}}}, Options{Via: "config"})
	must(err)
	_, err = ctl.Commit(tenant("red", 300), Options{IfGeneration: 9})
	var stale *StaleError
	if !errors.As(err, &stale) {
		t.Fatalf("stale commit: %v", err)
	}
	_, err = ctl.Commit([]state.Op{{Kind: model.OpDelete, Tenant: &model.Tenant{Name: "blue"}}}, Options{Origin: model.OriginKernel})
	if KindOf(err) != KindInvalid {
		t.Fatalf("kernel removing the API's tenant: %v", err)
	}
	_, err = ctl.Commit(tenant("bgp1", 400), Options{Origin: model.OriginBGP, Via: "elsewhere"})
	must(err)

	got := count()
	want := map[[2]string]uint64{{"api", "ok"}: 1, {"api", "dry_run"}: 1, {"config", "ok"}: 1, {"api", "stale"}: 1,
		{"kernel", "invalid"}: 1, {"elsewhere", "ok"}: 1}
	for k, n := range got {
		if n != want[k] {
			t.Errorf("%v = %d, want %d", k, n, want[k])
		}
	}
	if _, ok := got[[2]string{"elsewhere", "error"}]; !ok {
		t.Errorf("an origin seen is not listed with every result: %v", got)
	}

	if len(recs) != 6 {
		t.Fatalf("%d records, want one per commit: %+v", len(recs), recs)
	}
	if r := recs[0]; r.Origin != "api" || r.Result != ResultOK || r.Generation != 1 || r.Diff == nil || r.Err != nil || r.Duration <= 0 {
		t.Errorf("first record %+v", r)
	}
	if r := recs[1]; r.Result != ResultDryRun || !r.DryRun || r.Generation != 1 {
		t.Errorf("dry run record %+v", r)
	}
	if r := recs[3]; r.Result != ResultStale || r.Err == nil || r.Diff != nil {
		t.Errorf("stale record %+v", r)
	}

	// The latency of applied commits only: api 1, config 1 (an empty diff is applied too).
	_, lats := ctl.CommitStats()
	for _, l := range lats {
		n := map[string]uint64{"api": 1, "config": 1, "elsewhere": 1}[l.Origin]
		if l.Count != n || l.Buckets[CommitBuckets[len(CommitBuckets)-1]] != n || (n > 0) != (l.Sum > 0) {
			t.Errorf("latency of %s: %+v, want %d commits", l.Origin, l, n)
		}
	}
}
