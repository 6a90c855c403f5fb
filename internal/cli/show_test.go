package cli

// show_test.go: show's filters keep exactly the objects asked for.

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestShowFilters(t *testing.T) {
	st := func() model.State {
		return model.State{
			Tenants: []model.Tenant{{Name: "blue"}, {Name: "red", Origin: model.OriginBGP}},
			Routes: []model.Route{
				{Tenant: "blue", Prefix: netip.MustParsePrefix("198.18.2.0/24"), ID: 1},
				{Tenant: "blue", Prefix: netip.MustParsePrefix("198.18.0.0/16"), ID: 2},
				{Tenant: "red", Prefix: netip.MustParsePrefix("198.18.2.128/25"), Policy: "p", Origin: model.OriginBGP},
				{Tenant: "red", Prefix: netip.MustParsePrefix("2001:db8::/32"), ID: 3, Origin: model.OriginBGP},
			},
			SIDs: []model.SID{{SID: netip.MustParseAddr("fc00:1::64"), Tenant: "blue"}, {SID: netip.MustParseAddr("fc00:9::1")}},
		}
	}
	prefixes := func(rs []model.Route) (out []string) {
		for _, r := range rs {
			out = append(out, r.Prefix.String())
		}
		return out
	}
	for _, c := range []struct {
		o       showOptions
		routes  []string
		tenants int
		sids    int
	}{
		{showOptions{}, []string{"198.18.2.0/24", "198.18.0.0/16", "198.18.2.128/25", "2001:db8::/32"}, 2, 2},
		{showOptions{tenant: "blue"}, []string{"198.18.2.0/24", "198.18.0.0/16"}, 1, 1},
		{showOptions{prefix: "198.18.2.0/24"}, []string{"198.18.2.0/24", "198.18.2.128/25"}, 2, 0},
		{showOptions{prefix: "198.18.2.200"}, []string{"198.18.2.0/24", "198.18.0.0/16", "198.18.2.128/25"}, 2, 0},
		{showOptions{prefix: "fc00:1::/32"}, nil, 2, 1},
		{showOptions{policy: "p"}, []string{"198.18.2.128/25"}, 2, 0},
		{showOptions{policy: "2"}, []string{"198.18.0.0/16"}, 2, 0},
		{showOptions{origin: "bgp"}, []string{"198.18.2.128/25", "2001:db8::/32"}, 1, 0},
		{showOptions{origin: "api", tenant: "blue", prefix: "198.18.2.0/23"}, []string{"198.18.2.0/24"}, 1, 0},
	} {
		s := st()
		if err := c.o.filter(&s); err != nil {
			t.Fatalf("%+v: %v", c.o, err)
		}
		if got := prefixes(s.Routes); !slices.Equal(got, c.routes) || len(s.Tenants) != c.tenants || len(s.SIDs) != c.sids {
			t.Errorf("%+v: routes %v (want %v), %d tenants (want %d), %d SIDs (want %d)", c.o, got, c.routes, len(s.Tenants), c.tenants, len(s.SIDs), c.sids)
		}
	}
	for _, bad := range []showOptions{{prefix: "198.18.2"}, {origin: "ospf"}} {
		s := st()
		if err := bad.filter(&s); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
