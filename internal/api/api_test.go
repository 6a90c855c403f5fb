package api

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport/testroot"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type fakeEnv map[string]int

func (f fakeEnv) Ifindex(dev string) (int, error) {
	if i, ok := f[dev]; ok {
		return i, nil
	}
	return 0, fmt.Errorf("no such interface %q", dev)
}

func (fakeEnv) SourceFor(netip.Addr) (netip.Addr, error) {
	return netip.MustParseAddr("fc00:1::1"), nil
}

// client serves a fresh instance through the real gRPC stack (in-memory connection).
func client(t *testing.T) (pb.ControlClient, *state.Store) {
	t.Helper()
	testroot.Need(t, "bpffs, BPF maps")
	dir := t.TempDir()
	st, err := dataplane.OpenStore(dir, fakeEnv{"eth1": 7, "eth2": 8}, state.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, stop, err := Local(NewServer(st, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		st.Close()
		dataplane.DropPins(dir)
	})
	return c, st
}

// tenantOp is tenant name with a port on eth1's vlan and a table of its own (the VLAN's number).
func tenantOp(kind pb.Op_Kind, name string, vlan uint32) *pb.Op {
	return &pb.Op{Kind: kind, Object: &pb.Op_Tenant{Tenant: &pb.Tenant{Name: name, Table: max(vlan, 1),
		Ports: []*pb.Port{{Dev: "eth1", Vlan: vlan}}}}}
}

func routeOp(kind pb.Op_Kind, tenant, prefix string, segs ...string) *pb.Op {
	return &pb.Op{Kind: kind, Object: &pb.Op_Route{Route: &pb.Route{Tenant: tenant, Prefix: prefix, Segs: segs}}}
}

func sidOp(kind pb.Op_Kind, s *pb.Sid) *pb.Op {
	return &pb.Op{Kind: kind, Object: &pb.Op_Sid{Sid: s}}
}

func entries(t *testing.T, m *ebpf.Map) int {
	t.Helper()
	n := 0
	var k, v []byte
	it := m.Iterate()
	for it.Next(&k, &v) {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// snapshot is what must not change when a request is refused.
type snapshot struct {
	state                string
	gen                  uint64
	ports, routes4, sids int
}

func take(t *testing.T, st *state.Store) snapshot {
	cur := st.Current()
	return snapshot{state: fmt.Sprintf("%+v", cur), gen: st.Gen(), ports: entries(t, dataplane.MapsOf(st).Ports),
		routes4: entries(t, dataplane.MapsOf(st).Routes4), sids: entries(t, dataplane.MapsOf(st).Sids)}
}

func TestBadRequestsChangeNothing(t *testing.T) {
	c, st := client(t)
	ctx := context.Background()
	base := []*pb.Op{
		tenantOp(pb.Op_ADD, "blue", 100),
		routeOp(pb.Op_ADD, "blue", "198.18.2.0/24", "fc00:2::64"),
		sidOp(pb.Op_ADD, &pb.Sid{Sid: "fc00:1::64", Action: "End.DT4", Tenant: "blue", Vlan: 100}),
	}
	rep, err := c.Commit(ctx, &pb.CommitRequest{Ops: base})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff.Added) != 3 || rep.Generation != 1 {
		t.Fatalf("first commit: %v generation %d", rep.Diff, rep.Generation)
	}
	before := take(t, st)

	cases := []struct {
		name string
		req  *pb.CommitRequest
		code codes.Code
		want string
	}{
		{"no object", &pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.Op_ADD}}}, codes.InvalidArgument, "operation 1 (add): object: missing (set one of"},
		{"no kind", &pb.CommitRequest{Ops: []*pb.Op{{Object: &pb.Op_Tenant{Tenant: &pb.Tenant{Name: "x"}}}}},
			codes.InvalidArgument, "kind: want ADD, REPLACE or DELETE"},
		{"bad prefix", &pb.CommitRequest{Ops: []*pb.Op{routeOp(pb.Op_ADD, "blue", "198.18.2.0/33", "fc00:2::64")}},
			codes.InvalidArgument, `route 198.18.2.0/33 tenant blue: prefix: "198.18.2.0/33" is not a prefix`},
		{"bad SID address", &pb.CommitRequest{Ops: []*pb.Op{routeOp(pb.Op_ADD, "blue", "198.18.4.0/24", "fc00:2::zz")}},
			codes.InvalidArgument, `segs[0]: "fc00:2::zz" is not an IP address`},
		{"17 SIDs", &pb.CommitRequest{Ops: []*pb.Op{routeOp(pb.Op_ADD, "blue", "198.18.4.0/24", strings.Split(strings.Repeat("fc00:2::1,", 17), ",")[:17]...)}},
			codes.InvalidArgument, "segs: 17 SIDs, at most 16"},
		{"add existing", &pb.CommitRequest{Ops: []*pb.Op{routeOp(pb.Op_ADD, "blue", "198.18.2.0/24", "fc00:2::65")}},
			codes.InvalidArgument, "already exists (use replace to change it)"},
		{"delete missing", &pb.CommitRequest{Ops: []*pb.Op{routeOp(pb.Op_DELETE, "blue", "198.18.9.0/24")}},
			codes.InvalidArgument, "route 198.18.9.0/24 tenant blue: does not exist"},
		{"unknown tenant", &pb.CommitRequest{Ops: []*pb.Op{routeOp(pb.Op_ADD, "red", "198.18.2.0/24", "fc00:2::64")}},
			codes.InvalidArgument, `tenant: unknown tenant "red"`},
		{"port taken", &pb.CommitRequest{Ops: []*pb.Op{tenantOp(pb.Op_ADD, "red", 100)}},
			codes.InvalidArgument, `port: dev eth1 vlan 100 already belongs to tenant "blue"`},
		{"vlan out of range", &pb.CommitRequest{Ops: []*pb.Op{tenantOp(pb.Op_ADD, "red", 5000)}},
			codes.InvalidArgument, "vlan: 5000 is not a VLAN ID (1-4094; 0: untagged)"},
		{"tenant with routes", &pb.CommitRequest{Ops: []*pb.Op{tenantOp(pb.Op_DELETE, "blue", 0)}},
			codes.InvalidArgument, "still has 1 routes"},
		{"sid needs tenant deleted in the same batch", &pb.CommitRequest{Ops: []*pb.Op{
			{Kind: pb.Op_REPLACE, Object: &pb.Op_TenantRoutes{TenantRoutes: &pb.TenantRoutes{Tenant: "blue"}}},
			tenantOp(pb.Op_DELETE, "blue", 0)}},
			codes.InvalidArgument, "SID fc00:1::64 still uses it"},
		{"second op fails: first not applied", &pb.CommitRequest{Ops: []*pb.Op{
			tenantOp(pb.Op_ADD, "green", 300),
			routeOp(pb.Op_ADD, "green", "198.18.2.0/24", "fc00:2::64"),
			routeOp(pb.Op_ADD, "green", "198.18.2.1/24", "fc00:2::64")}},
			codes.InvalidArgument, "operation 3 (add): route 198.18.2.1/24 tenant green: prefix: host bits set; did you mean 198.18.2.0/24"},
		{"End.DX4 without nh4", &pb.CommitRequest{Ops: []*pb.Op{sidOp(pb.Op_ADD, &pb.Sid{Sid: "fc00:1::65", Action: "End.DX4"})}},
			codes.InvalidArgument, "nh4: End.DX4 needs an IPv4 next hop"},
		{"unknown device", &pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.Op_ADD, Object: &pb.Op_Interface{Interface: &pb.Interface{Name: "eth9"}}}}},
			codes.InvalidArgument, `no such interface "eth9"`},
		{"stale generation", &pb.CommitRequest{IfGeneration: 7, Ops: []*pb.Op{routeOp(pb.Op_ADD, "blue", "198.18.4.0/24", "fc00:2::64")}},
			codes.FailedPrecondition, "generation is 1, not 7"},
		{"options only replaced", &pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.Op_ADD, Object: &pb.Op_Options{Options: &pb.Options{}}}}},
			codes.InvalidArgument, "options can only be replaced"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Commit(ctx, tc.req)
			s, _ := status.FromError(err)
			if err == nil || s.Code() != tc.code || !strings.Contains(s.Message(), tc.want) {
				t.Fatalf("got %v, want %v containing %q", err, tc.code, tc.want)
			}
			if after := take(t, st); after != before {
				t.Fatalf("a refused request changed the instance:\n%+v\n%+v", before, after)
			}
		})
	}

	// A dry run reports the change and makes none.
	rep, err = c.Commit(ctx, &pb.CommitRequest{DryRun: true, Ops: []*pb.Op{routeOp(pb.Op_ADD, "blue", "198.18.4.0/24", "fc00:2::64")}})
	if err != nil || len(rep.Diff.Added) != 1 {
		t.Fatalf("dry run: %v %v", rep, err)
	}
	if after := take(t, st); after != before {
		t.Fatal("a dry run changed the instance")
	}
	// A whole state with a duplicate is refused as a whole.
	_, err = c.ApplyState(ctx, &pb.ApplyStateRequest{State: &pb.State{
		Tenants: []*pb.Tenant{{Name: "blue", Table: 100, Ports: []*pb.Port{{Dev: "eth1", Vlan: 100}}}},
		Routes: []*pb.Route{{Tenant: "blue", Prefix: "198.18.2.0/24", Segs: []string{"fc00:2::64"}},
			{Tenant: "blue", Prefix: "198.18.2.0/24", Segs: []string{"fc00:2::65"}}}}})
	if s, _ := status.FromError(err); s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), "defined twice") {
		t.Fatalf("duplicate route in a whole state: %v", err)
	}
	if after := take(t, st); after != before {
		t.Fatal("a refused state changed the instance")
	}
	stat, err := c.Status(ctx, &pb.StatusRequest{})
	if err != nil || stat.ApiErrors == 0 || stat.LastError == "" {
		t.Fatalf("status does not count API errors: %v %v", stat, err)
	}
}
