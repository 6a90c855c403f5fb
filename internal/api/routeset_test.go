package api

// routeset_test.go: RouteSet operations (many routes differing only in their prefix) do what one Route
// operation per prefix does, and are refused as a whole when any of their routes is.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/dataplane"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func routeSetOp(kind pb.Op_Kind, tenant string, prefixes []string, segs ...string) *pb.Op {
	return &pb.Op{Kind: kind, Object: &pb.Op_RouteSet{RouteSet: &pb.RouteSet{Route: &pb.Route{Tenant: tenant, Segs: segs}, Prefixes: prefixes}}}
}

func TestRouteSetIsOneRouteOpPerPrefix(t *testing.T) {
	ctx := context.Background()
	prefixes := []string{"198.18.1.0/24", "198.18.2.0/24", "198.18.3.7/32", "2001:db8:5::/64"}
	bySet, stSet := client(t)
	byOps, stOps := client(t)
	for _, c := range []pb.ControlClient{bySet, byOps} {
		if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{tenantOp(pb.Op_ADD, "blue", 100)}}); err != nil {
			t.Fatal(err)
		}
	}
	var ops []*pb.Op
	for _, p := range prefixes {
		ops = append(ops, routeOp(pb.Op_ADD, "blue", p, "fc00:2::64", "fc00:3::64"))
	}
	repOps, err := byOps.Commit(ctx, &pb.CommitRequest{Ops: ops})
	if err != nil {
		t.Fatal(err)
	}
	repSet, err := bySet.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{routeSetOp(pb.Op_ADD, "blue", prefixes, "fc00:2::64", "fc00:3::64")}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(repSet.Diff.Added), fmt.Sprint(repOps.Diff.Added); got != want || len(repSet.Diff.Added) != 4 {
		t.Fatalf("diff of the set %s, of the routes %s", got, want)
	}
	same := func(step string) {
		t.Helper()
		a, b := stSet.Current(), stOps.Current()
		if fmt.Sprintf("%+v", a.Routes) != fmt.Sprintf("%+v", b.Routes) || len(a.Routes) == 0 && step == "add" {
			t.Fatalf("%s: routes by set %+v, by operations %+v", step, a.Routes, b.Routes)
		}
		for name, m := range map[string]func(*dataplane.Seg6xMaps) int{
			"routes4": func(m *dataplane.Seg6xMaps) int { return entries(t, m.Routes4) },
			"routes6": func(m *dataplane.Seg6xMaps) int { return entries(t, m.Routes6) }} {
			if x, y := m(dataplane.MapsOf(stSet)), m(dataplane.MapsOf(stOps)); x != y {
				t.Fatalf("%s: %s entries %d by set, %d by operations", step, name, x, y)
			}
		}
	}
	same("add")
	if n := entries(t, dataplane.MapsOf(stSet).Routes4); n != 3 {
		t.Fatalf("routes4 holds %d entries, want 3", n)
	}

	// REPLACE: two routes move to another list; DELETE: one goes (only tenant and prefixes are read).
	repSet, err = bySet.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{
		routeSetOp(pb.Op_REPLACE, "blue", prefixes[:2], "fc00:2::65"),
		{Kind: pb.Op_DELETE, Object: &pb.Op_RouteSet{RouteSet: &pb.RouteSet{Route: &pb.Route{Tenant: "blue", Src: "not an address"}, Prefixes: prefixes[3:]}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(repSet.Diff.Changed) != 2 || len(repSet.Diff.Removed) != 1 || len(repSet.Diff.Added) != 0 {
		t.Fatalf("replace and delete: diff %v", repSet.Diff)
	}
	_, err = byOps.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{routeOp(pb.Op_REPLACE, "blue", prefixes[0], "fc00:2::65"),
		routeOp(pb.Op_REPLACE, "blue", prefixes[1], "fc00:2::65"), routeOp(pb.Op_DELETE, "blue", prefixes[3])}})
	if err != nil {
		t.Fatal(err)
	}
	same("replace and delete")
}

func TestBadRouteSetsChangeNothing(t *testing.T) {
	c, st := client(t)
	ctx := context.Background()
	if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{tenantOp(pb.Op_ADD, "blue", 100),
		routeSetOp(pb.Op_ADD, "blue", []string{"198.18.2.0/24", "198.18.3.0/24"}, "fc00:2::64")}}); err != nil {
		t.Fatal(err)
	}
	before := take(t, st)
	var bad []string
	for i := 0; i < 12; i++ {
		bad = append(bad, fmt.Sprintf("198.18.%d.0/40", i))
	}
	cases := []struct {
		name string
		op   *pb.Op
		want string
	}{
		{"no route", &pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_RouteSet{RouteSet: &pb.RouteSet{Prefixes: []string{"198.18.4.0/24"}}}},
			`route set of tenant "": route: missing`},
		{"no prefixes", routeSetOp(pb.Op_ADD, "blue", nil, "fc00:2::64"), `route set of tenant "blue": prefixes: missing`},
		{"a prefix in the route", &pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_RouteSet{RouteSet: &pb.RouteSet{
			Route: &pb.Route{Tenant: "blue", Prefix: "198.18.4.0/24", Segs: []string{"fc00:2::64"}}, Prefixes: []string{"198.18.5.0/24"}}}},
			`route.prefix: "198.18.4.0/24": leave it empty`},
		{"bad prefixes named, the rest counted", routeSetOp(pb.Op_ADD, "blue", bad, "fc00:2::64"),
			"prefixes[9]: \"198.18.9.0/40\" is not a prefix (ADDR/LEN)\nroute set of tenant \"blue\": prefixes: 2 more are not prefixes"},
		{"bad segment list", routeSetOp(pb.Op_ADD, "blue", []string{"198.18.4.0/24"}, "fc00:2::zz"), `segs[0]: "fc00:2::zz" is not an IP address`},
		{"third route exists: none added", routeSetOp(pb.Op_ADD, "blue", []string{"198.18.4.0/24", "198.18.5.0/24", "198.18.3.0/24"}, "fc00:2::64"),
			"operation 2 (add): route 198.18.3.0/24 tenant blue: already exists"},
		{"host bits: none replaced", routeSetOp(pb.Op_REPLACE, "blue", []string{"198.18.2.0/24", "198.18.6.1/24"}, "fc00:2::65"),
			"route 198.18.6.1/24 tenant blue: prefix: host bits set"},
		{"delete of a missing route: none deleted", routeSetOp(pb.Op_DELETE, "blue", []string{"198.18.2.0/24", "198.18.9.0/24"}),
			"route 198.18.9.0/24 tenant blue: does not exist"},
		{"unknown tenant", routeSetOp(pb.Op_ADD, "red", []string{"198.18.4.0/24"}, "fc00:2::64"), `tenant: unknown tenant "red"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ops := []*pb.Op{routeOp(pb.Op_ADD, "blue", "198.18.7.0/24", "fc00:2::64"), tc.op}
			_, err := c.Commit(ctx, &pb.CommitRequest{Ops: ops})
			s, _ := status.FromError(err)
			if err == nil || s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), tc.want) {
				t.Fatalf("got %v, want InvalidArgument containing %q", err, tc.want)
			}
			if after := take(t, st); after != before {
				t.Fatalf("a refused request changed the instance:\n%+v\n%+v", before, after)
			}
		})
	}
}

// diff_limit caps the reply's lists and counts the rest; 0 lists everything.
func TestCommitDiffLimit(t *testing.T) {
	c, _ := client(t)
	ctx := context.Background()
	var ps []string
	for i := 0; i < 20; i++ {
		ps = append(ps, fmt.Sprintf("198.18.%d.0/24", i))
	}
	rep, err := c.Commit(ctx, &pb.CommitRequest{DiffLimit: 5, Ops: []*pb.Op{tenantOp(pb.Op_ADD, "blue", 100),
		routeSetOp(pb.Op_ADD, "blue", ps, "fc00:2::64")}})
	if err != nil {
		t.Fatal(err)
	}
	if d := rep.GetDiff(); len(d.Added) != 5 || d.MoreAdded != 16 || d.Added[0] != `tenant "blue"` || d.MoreChanged+d.MoreRemoved != 0 {
		t.Fatalf("limited diff %v", d)
	}
	rep, err = c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.Op_DELETE, Object: &pb.Op_RouteSet{RouteSet: &pb.RouteSet{Route: &pb.Route{Tenant: "blue"}, Prefixes: ps}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if d := rep.GetDiff(); len(d.Removed) != 20 || d.MoreRemoved != 0 {
		t.Fatalf("unlimited diff %v", d)
	}
}

// Packed prefixes (RouteSet.prefixes4 / prefixes6) are the same routes as their text, after the
// text ones; malformed packing and lengths are named.
func TestRouteSetPackedPrefixes(t *testing.T) {
	ctx := context.Background()
	byText, stText := client(t)
	byPacked, stPacked := client(t)
	for _, c := range []pb.ControlClient{byText, byPacked} {
		if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{tenantOp(pb.Op_ADD, "blue", 100)}}); err != nil {
			t.Fatal(err)
		}
	}
	text := routeSetOp(pb.Op_ADD, "blue", []string{"198.18.1.0/24", "198.18.3.7/32", "0.0.0.0/0", "2001:db8:5::/64", "::/0"}, "fc00:2::64")
	packed := routeSetOp(pb.Op_ADD, "blue", []string{"198.18.1.0/24"}, "fc00:2::64")
	rs := packed.GetRouteSet()
	rs.Prefixes4 = []byte{198, 18, 3, 7, 32, 0, 0, 0, 0, 0}
	rs.Prefixes6 = append(append([]byte{0x20, 0x01, 0x0d, 0xb8, 0, 5, 14: 0, 15: 0}, 64), make([]byte, 17)...)
	repText, err := byText.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{text}})
	if err != nil {
		t.Fatal(err)
	}
	repPacked, err := byPacked.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{packed}})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := fmt.Sprint(repPacked.Diff.Added), fmt.Sprint(repText.Diff.Added); a != b || len(repText.Diff.Added) != 5 {
		t.Fatalf("diff of the packed set %s, of the text %s", a, b)
	}
	if a, b := fmt.Sprintf("%+v", stPacked.Current().Routes), fmt.Sprintf("%+v", stText.Current().Routes); a != b {
		t.Fatalf("routes by packed prefixes %s, by text %s", a, b)
	}
	for _, tc := range []struct {
		p4, p6 []byte
		want   string
	}{
		{[]byte{198, 18, 9, 0}, nil, "prefixes4: 4 bytes: not whole 5-byte prefixes"},
		{nil, make([]byte, 18), "prefixes6: 18 bytes: not whole 17-byte prefixes"},
		{[]byte{198, 18, 9, 0, 24, 198, 18, 10, 0, 33}, nil, "prefixes4[1]: length 33 (at most 32)"},
		{nil, append(make([]byte, 16), 129), "prefixes6[0]: length 129 (at most 128)"},
		{[]byte{198, 18, 9, 1, 24}, nil, "route 198.18.9.1/24 tenant blue: prefix: host bits set"},
	} {
		op := routeSetOp(pb.Op_ADD, "blue", nil, "fc00:2::64")
		op.GetRouteSet().Prefixes4, op.GetRouteSet().Prefixes6 = tc.p4, tc.p6
		_, err := byPacked.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{op}})
		if s, _ := status.FromError(err); err == nil || s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), tc.want) {
			t.Fatalf("packed %v %v: %v, want InvalidArgument containing %q", tc.p4, tc.p6, err, tc.want)
		}
	}
}
