package core_test

// controller_test.go: the controller checks generations, records the last error, classifies errors by
// type, marks every operation with the caller's origin, and announces applied changes (not dry runs,
// not empty ones) to subscribers after the lock is released.

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func tenantOp(name string) []state.Op {
	return []state.Op{{Kind: model.OpAdd, Tenant: &model.Tenant{Name: name, Table: 100}}}
}

func TestControllerCommitsAndAnnounces(t *testing.T) {
	ctl := New(testsupport.OpenStore(t, t.TempDir(), testsupport.FakeEnv{}))
	var got []Change
	ctl.Subscribe(func(ch Change) {
		// Announced outside the lock: reading the store from here must not deadlock.
		ctl.Read(func(st *state.Store) {})
		got = append(got, ch)
	})

	if _, err := ctl.Commit(tenantOp("dry"), Options{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	res, err := ctl.Commit(tenantOp("blue"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Generation != 1 || len(res.Diff.Added) != 1 {
		t.Fatalf("result %+v", res)
	}
	if len(got) != 1 || got[0].Origin != model.OriginConfig || got[0].Generation != 1 {
		t.Fatalf("announced %+v, want one change of origin config at generation 1", got)
	}

	// Stale generation: refused, typed, recorded.
	_, err = ctl.Commit(tenantOp("red"), Options{IfGeneration: 7})
	var stale *StaleError
	if !errors.As(err, &stale) || stale.Have != 1 || stale.Want != 7 || KindOf(err) != KindStale {
		t.Fatalf("stale commit: %v (kind %v)", err, KindOf(err))
	}
	if last, n := ctl.LastError(); n != 1 || last == "" {
		t.Fatalf("last error %q, %d errors", last, n)
	}

	// Another origin cannot change the config's tenant: an invalid request, by type.
	_, err = ctl.Commit([]state.Op{{Kind: model.OpDelete, Tenant: &model.Tenant{Name: "blue"}}}, Options{Origin: model.OriginKernel})
	if err == nil || KindOf(err) != KindInvalid {
		t.Fatalf("kernel deleting a config tenant: %v (kind %v)", err, KindOf(err))
	}
	// Apply is the config file's: refused for another origin.
	if _, err := ctl.Apply(model.State{}, Options{Origin: model.OriginBGP}); err == nil {
		t.Fatal("Apply for origin bgp accepted")
	}
	if len(got) != 1 {
		t.Fatalf("refused changes were announced: %+v", got)
	}

	// The kernel's own objects: its origin is set on every operation by the controller.
	res, err = ctl.Commit([]state.Op{{Kind: model.OpAdd, SID: &model.SID{SID: netip.MustParseAddr("fc00:1::1"), Action: "End"}}},
		Options{Origin: model.OriginKernel})
	if err != nil {
		t.Fatal(err)
	}
	var sids []model.SID
	ctl.Read(func(st *state.Store) { sids = st.SIDs() })
	if len(sids) != 1 || sids[0].Origin != model.OriginKernel || len(got) != 2 || got[1].Origin != model.OriginKernel {
		t.Fatalf("sids %+v, announced %+v", sids, got)
	}
}

func TestKindOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Kind
	}{
		{&model.FieldError{Object: "x", Reason: "bad"}, KindInvalid},
		{model.Errors{&model.FieldError{Object: "x", Reason: "bad"}}, KindInvalid},
		{&state.OpError{Err: errors.New("no free id")}, KindInvalid},
		{&model.WriteError{Err: errors.New("write 3 entries to routes4: no space")}, KindInternal},
		{fmt.Errorf("wrapped: %w", &StaleError{Have: 2, Want: 1}), KindStale},
		{errors.New("anything else"), KindInternal},
	} {
		if got := KindOf(c.err); got != c.want {
			t.Errorf("%v: kind %v, want %v", c.err, got, c.want)
		}
	}
}

// A journal due to be folded into a snapshot is folded once commits pause, not by the commit that
// made it due (a bulk load would write the whole state again on its way).
func TestJournalFoldedOnceCommitsPause(t *testing.T) {
	dir := t.TempDir()
	ctl := New(testsupport.OpenStore(t, dir, testsupport.FakeEnv{}))
	if _, err := ctl.Commit(tenantOp("blue"), Options{}); err != nil {
		t.Fatal(err)
	}
	routes := func(lo, n int) []state.Op {
		set := &state.RouteSet{Route: model.Route{Tenant: "blue", Segs: []netip.Addr{netip.MustParseAddr("fc00:2::1")}}}
		for i := lo; i < lo+n; i++ {
			set.Prefixes = append(set.Prefixes, netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}), 32))
		}
		return []state.Op{{Kind: model.OpAdd, RouteSet: set}}
	}
	// 25000 routes: past 1 MiB of journal and four times the (near empty) snapshot: folded by the commit.
	if _, err := ctl.Commit(routes(0, 25000), Options{}); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(dir, "state.journal")
	if _, err := os.Stat(journal); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a journal four times the snapshot was not folded by its commit: %v", err)
	}
	// 32000 more: past the snapshot's size, not four times it: folded after the pause.
	if _, err := ctl.Commit(routes(25000, 32000), Options{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := os.Stat(journal)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the journal is still there 10 s after the last commit (%v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var due bool
	var n int
	ctl.Read(func(st *state.Store) { due, n = st.CompactDue(), st.Counts().Routes4 })
	if due || n != 57000 {
		t.Fatalf("after the fold: due %v, %d routes", due, n)
	}
	if last, _ := ctl.LastError(); last != "" {
		t.Fatalf("last error %q", last)
	}
}
