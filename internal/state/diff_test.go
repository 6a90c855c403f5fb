package state

// diff_test.go: a diff's lines read back as objects (every kind a commit notes), its counts per kind
// (listed or not), its summary and its JSON.

import (
	"encoding/json"
	"net/netip"
	"slices"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestParseChangeEveryKind(t *testing.T) {
	r := model.Route{Tenant: "blue", Prefix: netip.MustParsePrefix("2001:db8:5::/48")}
	sd := model.SID{SID: netip.MustParseAddr("fc00:1::64")}
	for _, c := range []struct {
		line string
		want model.Change
	}{
		{model.RouteObj(&r), model.Change{Op: "add", Kind: "route", Tenant: "blue", Prefix: "2001:db8:5::/48"}},
		{model.TenantObj(&model.Tenant{Name: "a b"}), model.Change{Op: "add", Kind: "tenant", Name: "a b"}},
		{`interface "eth0"`, model.Change{Op: "add", Kind: "interface", Name: "eth0"}},
		{model.PolicyObj("p1"), model.Change{Op: "add", Kind: "policy", Name: "p1"}},
		{model.VXLANObj(&model.VXLAN{Dev: "vx0"}), model.Change{Op: "add", Kind: "vxlan", Name: "vx0"}},
		{model.SIDObj(&sd), model.Change{Op: "add", Kind: "sid", SID: "fc00:1::64"}},
		{model.BGPObj(), model.Change{Op: "add", Kind: "bgp"}},
		{"options (nexthop_cache_ms 0 -> 5)", model.Change{Op: "add", Kind: "options", Detail: "nexthop_cache_ms 0 -> 5"}},
		{"domain (1 locators, 0 sources)", model.Change{Op: "add", Kind: "domain", Detail: "1 locators, 0 sources"}},
	} {
		if got := model.ParseChange("add", c.line); got != c.want {
			t.Errorf("%q: %+v, want %+v", c.line, got, c.want)
		}
	}
}

// A commit listing at most 2 lines per list still counts every object by kind; the JSON has the
// totals, the kinds and the listed changes; the summary says the counts.
func TestDiffCountsKindsPastTheLimit(t *testing.T) {
	s, err := Open(t.TempDir(), fakeEnv{}, openFake)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ops := []Op{{Kind: model.OpAdd, Tenant: &model.Tenant{Name: "blue", Table: 1000}}}
	for i := range 5 {
		ops = append(ops, Op{Kind: model.OpAdd, Route: &model.Route{Tenant: "blue", Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(i), 0}), 24),
			Segs: []netip.Addr{netip.MustParseAddr("fc00:2::1")}, Src: netip.MustParseAddr("fc00:1::1")}})
	}
	d, err := s.CommitWith(ops, CommitOptions{DiffLimit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if k := d.Kinds; len(k) != 2 || *k["route"] != (model.KindCounts{Added: 5}) || *k["tenant"] != (model.KindCounts{Added: 1}) {
		t.Fatalf("kinds %v", k)
	}
	if got, want := d.Summary(), "routes:       5 added\ntenants:      1 added\n"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Added, Changed, Removed int
		Kinds                   map[string]model.KindCounts
		Changes                 []model.Change
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	want := []model.Change{{Op: "add", Kind: "tenant", Name: "blue"}, {Op: "add", Kind: "route", Tenant: "blue", Prefix: "198.18.0.0/24"}}
	if j.Added != 6 || j.Changed+j.Removed != 0 || j.Kinds["route"].Added != 5 || !slices.Equal(j.Changes, want) {
		t.Errorf("JSON %s", b)
	}

	// Applying an empty state removes the tenant and its routes: each counted by its kind.
	d, err = s.Apply(model.State{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Summary(), "routes:       5 removed\ntenants:      1 removed\n"; got != want {
		t.Errorf("dry-run removal: summary %q, want %q", got, want)
	}
	var empty model.Diff
	if b, _ := json.Marshal(&empty); string(b) != `{"added":0,"changed":0,"removed":0,"kinds":{},"changes":[]}` {
		t.Errorf("empty diff JSON %s", b)
	}
	// Lines alone (an older daemon's reply) are counted by their first word.
	old := model.Diff{Added: []string{`tenant "x"`}, Removed: []string{"route 198.18.0.0/24 tenant x", "route 198.18.1.0/24 tenant x"}}
	old.CountListed()
	if len(old.Kinds) != 2 || *old.Kinds["route"] != (model.KindCounts{Removed: 2}) || *old.Kinds["tenant"] != (model.KindCounts{Added: 1}) {
		t.Errorf("counted from lines: %v", old.Kinds)
	}
}
