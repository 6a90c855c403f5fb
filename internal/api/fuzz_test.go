package api

// fuzz_test.go: `go test -fuzz FuzzCommitRequest ./internal/api/`: any bytes a client can send as a
// Commit or ApplyState request go through the server's conversion and the store's checks (dry run,
// on a store holding a small configuration) without a panic; every error names the object and
// field it is about, reaches the client as InvalidArgument, and the store is left unchanged.
// `go test` runs the seeds (and testdata/fuzz/FuzzCommitRequest). Needs root (BPF maps).

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport/testroot"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// What "names the field" means: after the operation (OpError: "operation N (kind): ..."), every
// problem is a FieldError about an object of the model (or the operation's own kind or object
// field), and its field, when it gives one, is a field of that object (as the API's message and the
// store's checks name it: `gateway[1]`, `vpn.sid`, `neighbors[0].address`).
var (
	objectFields = []struct{ object, fields *regexp.Regexp }{
		{re(`options`), re(`nexthop_cache_ms`)},
		{re(`domain`), re(`(locators|sources)(\[\d+\])?`)},
		{re(`interface|interface ".*"`), re(`name|mode|role`)},
		{re(`tenant ".*"`), re(`name|table|port|dev|vlan|gateway(\[\d+\])?|mss_clamp|` +
			`vpn(\.(rd|import_rt/export_rt|behavior|encap|locator|sid|advertise(\[\d+\])?|advertise_kernel))?`)},
		{re(`routes of tenant ".*"`), re(`tenant`)},
		{re(`route .* tenant .*`), re(`tenant|prefix|mode|segs(\[\d+\])?|src|hoplimit|usids\.(block|nf|ids(\[\d+\])?)|policy`)},
		{re(`policy ".*"( lists\[\d+\](\.usids)?)?`), re(`name|mode|src|hoplimit|lists|` +
			`(lists\[\d+\]\.)?(segs(\[\d+\])?|usids\.(block|nf|ids(\[\d+\])?)|block|nf|ids(\[\d+\])?|weight)`)},
		{re(`sid .*`), re(`sid|action|tenant|table|nh4|nh6|vlan|flavors|lblen|nflen|segs(\[\d+\])?|src|plugin|config`)},
		{re(`plugin ".*"`), re(`name|file`)},
		{re(`bgp`), re(`asn|router_id|listen_port|next_hop|locator|block_bits|function_bits|graceful_restart\.restart_time|` +
			`neighbors\[\d+\]\.(address|local_address|port)`)},
		{re(`bgp neighbor .*`), re(`address|asn|password|local_address|families`)},
	}
	opFields = re(`kind|object`)
)

// re matches all of a string (any characters, newlines too, in the names of objects).
func re(s string) *regexp.Regexp { return regexp.MustCompile(`(?s)^(` + s + `)$`) }

// namesField says whether err, however wrapped, names an object and field for every problem in it
// (inOp: inside an operation, where the operation's kind and object are fields too).
func namesField(err error, inOp bool) bool {
	var oe *state.OpError
	if errors.As(err, &oe) {
		return namesField(oe.Err, true)
	}
	var es model.Errors
	if errors.As(err, &es) {
		for _, e := range es {
			if !namesField(e, inOp) {
				return false
			}
		}
		return len(es) > 0
	}
	var fe *model.FieldError
	if !errors.As(err, &fe) {
		return false
	}
	if inOp && fe.Field == "" && opFields.MatchString(fe.Object) {
		return true
	}
	for _, o := range objectFields {
		if o.object.MatchString(fe.Object) && (fe.Field == "" || o.fields.MatchString(fe.Field)) {
			return true
		}
	}
	return false
}

func fuzzSeeds() []proto.Message {
	route := &pb.Route{Tenant: "A", Prefix: "198.18.2.0/24", Segs: []string{"fc00:2::1", "fc00:3::a"}, Src: "fc00:1::1", Mode: "encap.red"}
	ops := []*pb.Op{
		{Kind: pb.Op_ADD, Object: &pb.Op_Interface{Interface: &pb.Interface{Name: "eth2", Role: "fabric"}}},
		{Kind: pb.Op_REPLACE, Object: &pb.Op_Domain{Domain: &pb.Domain{Locators: []string{"fc00:1::/48"}, Sources: []string{"fc00::/16"}}}},
		{Kind: pb.Op_REPLACE, Object: &pb.Op_Options{Options: &pb.Options{NexthopCacheMs: 500}}},
		tenantOp(pb.Op_ADD, "B", 200),
		{Kind: pb.Op_REPLACE, Object: &pb.Op_Route{Route: route}},
		{Kind: pb.Op_REPLACE, Object: &pb.Op_TenantRoutes{TenantRoutes: &pb.TenantRoutes{Tenant: "A", Routes: []*pb.Route{route}}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: &pb.Route{Tenant: "A", Prefix: "198.18.3.0/24",
			Usids: &pb.USIDList{Block: "fcbb:0::/32", Ids: []string{"100", "e004"}}}}},
	}
	for i, s := range []*pb.Sid{{Action: "End"}, {Action: "End.X", Nh6: "fc00:12::2"}, {Action: "End.T", Table: 10},
		{Action: "End.DX4", Nh4: "198.18.1.2", Vlan: 100}, {Action: "End.DX6", Nh6: "fc00:12::3"},
		{Action: "End.DT4", Tenant: "A"}, {Action: "End.DT6", Table: 100}, {Action: "End.DT46", Tenant: "A", Vlan: 100},
		{Action: "End.B6.Encaps", Segs: []string{"fc00:2::1", "fc00:3::a"}}, {Action: "End.B6.Encaps.Red", Segs: []string{"fc00:2::1"},
			Src: "fc00:1::1"}} {
		s.Sid = fmt.Sprintf("fc00:1::%x", 0x20+i)
		ops = append(ops, &pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: s}})
	}
	bad := []*pb.Op{
		{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: &pb.Route{Tenant: "A", Prefix: "198.18.2.0/33", Segs: []string{"zz"}, Hoplimit: 300}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: &pb.Route{Tenant: "A", Prefix: "198.18.4.0/24",
			Usids: &pb.USIDList{Block: "fcbb:1::/20", Nf: 300, Ids: []string{"0", "zz", "10000"}}}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: &pb.Route{Tenant: "A", Prefix: "198.18.4.0/24", Usids: &pb.USIDList{Block: "x"}}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::d", Action: "End.Nope"}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::e", Action: "End.DX4", Nh6: "fc00::1", Vlan: 5000}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::f", Action: "End.B6.Encaps", Segs: []string{"zz", "ff02::1"},
			Src: "198.18.0.1"}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::f", Action: "End", Segs: []string{"fc00:2::1"}}}},
		{Kind: pb.Op_REPLACE, Object: &pb.Op_Domain{Domain: &pb.Domain{Locators: []string{"198.18.0.0/15", "x"}}}},
		{Kind: pb.Op_DELETE, Object: &pb.Op_Tenant{Tenant: &pb.Tenant{Name: "A"}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Tenant{Tenant: &pb.Tenant{Name: "C", Gateway: []string{"198.18.9.1", "0"}}}},
		{Kind: pb.Op_REPLACE, Object: &pb.Op_Tenant{Tenant: &pb.Tenant{Name: "C", Table: 300, Gateway: []string{"ff02::1"},
			Vpn: &pb.TenantVpn{Rd: "1:x", Advertise: []string{"198.18.9.0/24"}, Behavior: "End.DT6"}}}},
		{Kind: pb.Op_REPLACE, Object: &pb.Op_Bgp{Bgp: &pb.Bgp{RouterId: "fc00::1", Locator: "x",
			Neighbors: []*pb.BgpNeighborConfig{{Address: "fc00::2", Families: []string{"l2vpn"}}, {Address: "zz", Port: 70000}}}}},
		{Kind: pb.Op_REPLACE, Object: &pb.Op_Bgp{Bgp: &pb.Bgp{RouterId: "fc00::1",
			Neighbors: []*pb.BgpNeighborConfig{{Address: "fc00::2", Families: []string{"l2vpn"}}}}}},
		{Kind: 7},
		{Kind: pb.Op_ADD},
	}
	st := &pb.State{Interfaces: []*pb.Interface{{Name: "eth1", Role: "access"}}, Tenants: []*pb.Tenant{{Name: "A", Table: 100}},
		Routes: []*pb.Route{route}, Sids: []*pb.Sid{{Sid: "fc00:1::a", Action: "End.DT4", Tenant: "A"}},
		Domain: &pb.Domain{Locators: []string{"fc00:1::/48"}}}
	// Tenant A deleted while SIDs use it: several problems found at the end of the commit, in the
	// same order every time (the server's order once came from maps).
	gone := []*pb.Op{sidOp(pb.Op_ADD, &pb.Sid{Sid: "fc00:1::c", Action: "End.DT4", Tenant: "A"}),
		sidOp(pb.Op_ADD, &pb.Sid{Sid: "fc00:1::b", Action: "End.DT6", Tenant: "A"}),
		{Kind: pb.Op_REPLACE, Object: &pb.Op_TenantRoutes{TenantRoutes: &pb.TenantRoutes{Tenant: "A"}}},
		tenantOp(pb.Op_DELETE, "A", 0)}
	msgs := []proto.Message{
		&pb.CommitRequest{Ops: ops}, &pb.CommitRequest{Ops: bad, DryRun: true}, &pb.CommitRequest{Ops: gone},
		&pb.ApplyStateRequest{State: st}, &pb.ApplyStateRequest{State: &pb.State{Routes: []*pb.Route{{Prefix: "x"}}}},
	}
	for _, o := range bad {
		msgs = append(msgs, &pb.CommitRequest{Ops: []*pb.Op{o}})
	}
	return msgs
}

// fuzzStore opens a store in a temporary directory holding a small configuration (so deletes and
// replaces find something), and its server.
func fuzzStore(f *testing.F) (*state.Store, *Server) {
	dir := f.TempDir()
	st, err := dataplane.OpenStore(dir, fakeEnv{"eth1": 7, "eth2": 8}, state.OpenOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		st.Close()
		dataplane.DropPins(dir)
	})
	srv := NewServer(st, false)
	base := []*pb.Op{ // no interface: a real commit would write its (fake) ifindex to a device map
		tenantOp(pb.Op_ADD, "A", 100),
		routeOp(pb.Op_ADD, "A", "198.18.2.0/24", "fc00:2::1", "fc00:3::a"),
		sidOp(pb.Op_ADD, &pb.Sid{Sid: "fc00:1::a", Action: "End.DT4", Tenant: "A", Vlan: 100}),
	}
	if _, err := srv.Commit(context.Background(), &pb.CommitRequest{Ops: base}); err != nil {
		f.Fatal(err)
	}
	return st, srv
}

func FuzzCommitRequest(f *testing.F) {
	testroot.Need(f, "bpffs, BPF maps")
	for _, m := range fuzzSeeds() {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	st, srv := fuzzStore(f)
	gen, cur := st.Gen(), st.Current()
	ctx := context.Background()
	// check: err names its fields; the server's reply to the same request says the same as
	// InvalidArgument; the store did not change.
	check := func(t *testing.T, what string, err, rpcErr error) {
		if err != nil && !namesField(err, false) {
			t.Fatalf("%s: error names no object and field: %v", what, err)
		}
		if s, _ := status.FromError(rpcErr); (err == nil) != (rpcErr == nil) ||
			err != nil && (s.Code() != codes.InvalidArgument || s.Message() != err.Error()) {
			t.Fatalf("%s: error %v, but the server replies %v", what, err, rpcErr)
		}
		if st.Gen() != gen || !reflect.DeepEqual(st.Current(), cur) {
			t.Fatalf("%s: a dry run changed the store", what)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c pb.CommitRequest
		if proto.Unmarshal(data, &c) == nil {
			c.DryRun, c.IfGeneration = true, 0
			ops, err := OpsFromPB(c.GetOps())
			if err == nil {
				_, err = st.Commit(ops, true)
			}
			_, rpcErr := srv.Commit(ctx, &c)
			check(t, fmt.Sprintf("commit of %d operations", len(c.GetOps())), err, rpcErr)
		}
		var a pb.ApplyStateRequest
		if proto.Unmarshal(data, &a) == nil {
			a.DryRun, a.IfGeneration = true, 0
			desired, err := StateFromPB(a.GetState())
			if err == nil {
				_, err = st.Apply(desired, true)
			}
			_, rpcErr := srv.ApplyState(ctx, &a)
			check(t, "apply", err, rpcErr)
		}
	})
}

// TestNamesField keeps the fuzz target's rule honest: it rejects errors that name nothing, no
// known object or field, or a field of another object, and passes the store's errors for a bad batch.
func TestNamesField(t *testing.T) {
	for _, err := range []error{
		&model.FieldError{Object: `tenant "A"`, Field: "gateway[1]"},
		&model.FieldError{Object: `tenant "A"`, Field: "vpn.advertise[0]"},
		&model.FieldError{Object: "bgp", Field: "router_id"},
		&model.FieldError{Object: "bgp", Field: "neighbors[2].local_address"},
		&model.FieldError{Object: "bgp neighbor fc00::1", Field: "families"},
	} {
		if !namesField(err, false) {
			t.Errorf("namesField rejects %q", err)
		}
	}
	for _, err := range []error{fmt.Errorf("something went wrong"), model.Errors{},
		&model.FieldError{Object: "route 198.18.2.0/24 tenant A", Field: "colour"},
		&model.FieldError{Object: `tenant "A"`, Field: "segs"}, // a route's field
		&model.FieldError{Object: "kind", Reason: "want ADD"},  // only inside an operation
		&state.OpError{Err: fmt.Errorf("the data plane holds at most 1 routes")}} {
		if namesField(err, false) {
			t.Errorf("namesField accepts %q", err)
		}
	}
	_, st := client(t)
	for _, o := range []*pb.Op{
		{Kind: 9, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::99"}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: &pb.Route{Tenant: "nope", Prefix: "198.18.2.0/24", Segs: []string{"fc00:2::1"}}}},
		{Kind: pb.Op_DELETE, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::99"}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::98", Action: "End.DT4", Tenant: "nope"}}},
	} {
		ops, err := OpsFromPB([]*pb.Op{o})
		if err == nil {
			_, err = st.Commit(ops, true)
		}
		if err == nil || !namesField(err, false) {
			t.Errorf("%v: error %v, want one naming the object", o, err)
		}
	}
}
