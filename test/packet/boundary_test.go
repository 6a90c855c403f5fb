package packet

// boundary_test.go: the SR domain boundary follows changes made at run time (an interface's role, the
// domain's locators and sources), and the incremental map writes leave exactly what a full rewrite
// would.

import (
	"net/netip"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/fixtures"
)

// expect runs f and checks the action and (when reason is set) that reason counted it once.
func expect(t *testing.T, when string, f *fixtures.Fixture, action, reason string) {
	t.Helper()
	before := uint64(0)
	if reason != "" {
		before, _ = rig.ReasonCount(reason)
	}
	res, err := rig.Run(nil, f, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := dataplane.Actions[res.Action]; got != action {
		t.Fatalf("%s: %s gave %s, want %s", when, f.Name, got, action)
	}
	if reason != "" {
		if after, _ := rig.ReasonCount(reason); after != before+1 {
			t.Fatalf("%s: %s: %s counted %d times, want 1", when, f.Name, reason, after-before)
		}
	}
}

func commit(t *testing.T, ops ...state.Op) {
	t.Helper()
	if _, err := rig.Store.Commit(ops, false); err != nil {
		t.Fatal(err)
	}
}

func TestBoundaryFollowsChanges(t *testing.T) {
	other := fixtures.Get(t, "boundary_sid_no_tenant_vlan") // ta0 VLAN 200 (no tenant) to the End SID
	tenant := fixtures.Get(t, "boundary_sid_dx4_srh")       // ta0 VLAN 100 (tenant blue) to End.DX4
	loc := fixtures.Get(t, "boundary_locator")              // tenant blue to fc00:3::99
	src := fixtures.Get(t, "sid_source_outside_domain")     // fab0, End SID from 2001:db8:66::1
	cfg, err := fixtures.Config()
	if err != nil {
		t.Fatal(err)
	}
	dom := cfg.Domain

	expect(t, "ta0 role auto", other, "XDP_DROP", "DROP_BOUNDARY_SID")
	commit(t, state.Op{Kind: model.OpReplace, Interface: &model.Interface{Name: "ta0", Role: model.RoleFabric}})
	// Fabric now: the packet reaches the SID, whose source check (2001:db8:1::2 is not in fc00::/16)
	// refuses it.
	expect(t, "ta0 role fabric: VLAN 200 is fabric now", other, "XDP_DROP", "DROP_SID_SOURCE")
	expect(t, "ta0 role fabric: VLAN 100 is still tenant blue's", tenant, "XDP_DROP", "DROP_BOUNDARY_SID")
	commit(t, state.Op{Kind: model.OpReplace, Interface: &model.Interface{Name: "ta0", Role: model.RoleAccess}})
	expect(t, "ta0 role access", other, "XDP_DROP", "DROP_BOUNDARY_SID")
	commit(t, state.Op{Kind: model.OpReplace, Interface: &model.Interface{Name: "ta0"}})
	expect(t, "ta0 role auto again", other, "XDP_DROP", "DROP_BOUNDARY_SID")

	commit(t, state.Op{Kind: model.OpReplace, Domain: &model.Domain{Sources: dom.Sources}})
	expect(t, "no locators: fc00:3::99 is not refused (blue has no route for it)", loc, "XDP_PASS", "")
	commit(t, state.Op{Kind: model.OpReplace, Domain: &model.Domain{Locators: dom.Locators}})
	expect(t, "locators back", loc, "XDP_DROP", "DROP_BOUNDARY_LOCATOR")
	expect(t, "no sources: any source may address a SID", src, "XDP_REDIRECT", "")
	commit(t, state.Op{Kind: model.OpReplace, Domain: &model.Domain{Locators: dom.Locators,
		Sources: []netip.Prefix{netip.MustParsePrefix("2001:db8:66::/48")}}})
	expect(t, "sources 2001:db8:66::/48", src, "XDP_REDIRECT", "")
	commit(t, state.Op{Kind: model.OpReplace, Domain: &dom})
	expect(t, "sources back to fc00::/16", src, "XDP_DROP", "DROP_SID_SOURCE")

	// Back at the fixture config: the maps hold exactly its image (nothing stale, nothing missing).
	rep, err := rig.Store.Reconcile()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != 0 || rep.Removed != 0 {
		t.Errorf("after the changes a full rewrite still wrote %d and removed %d entries", rep.Written, rep.Removed)
	}
}
