package api

// fuzz_test.go: `go test -fuzz FuzzCommitRequest ./internal/api/`: any bytes a client can send as a
// Commit or ApplyState request go through the server's conversion and the store's validation (dry
// run) without a panic, and every error names the object and field it is about. `go test` runs the
// seeds. Needs root (the store opens its BPF maps).

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"
)

// namesField says whether err, however wrapped, names an object (and field) for every problem in it.
func namesField(err error) bool {
	var oe *state.OpError
	if errors.As(err, &oe) {
		return namesField(oe.Err)
	}
	var es state.Errors
	if errors.As(err, &es) {
		for _, e := range es {
			if !namesField(e) {
				return false
			}
		}
		return len(es) > 0
	}
	var fe *state.FieldError
	return errors.As(err, &fe) && strings.TrimSpace(fe.Object) != ""
}

func fuzzSeeds() []proto.Message {
	route := &pb.Route{Tenant: "A", Prefix: "198.18.2.0/24", Segs: []string{"fc00:2::1", "fc00:3::a"}, Src: "fc00:1::1", Mode: "encap.red"}
	ops := []*pb.Op{
		{Kind: pb.Op_ADD, Object: &pb.Op_Interface{Interface: &pb.Interface{Name: "eth1", Role: "fabric"}}},
		{Kind: pb.Op_REPLACE, Object: &pb.Op_Domain{Domain: &pb.Domain{Locators: []string{"fc00:1::/48"}, Sources: []string{"fc00::/16"}}}},
		tenantOp(pb.Op_ADD, "A", 100),
		{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: route}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::a", Action: "End.DT4", Tenant: "A", Vlan: 100}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::b", Action: "End.DX4", Nh4: "198.18.1.2"}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::c", Action: "End.X", Nh6: "fc00:12::2"}}},
	}
	bad := []*pb.Op{
		{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: &pb.Route{Tenant: "A", Prefix: "198.18.2.0/33", Segs: []string{"zz"}}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::d", Action: "End.Nope"}}},
		{Kind: pb.Op_REPLACE, Object: &pb.Op_Domain{Domain: &pb.Domain{Locators: []string{"198.18.0.0/15"}}}},
		{Kind: 7},
		{Kind: pb.Op_ADD},
	}
	st := &pb.State{Interfaces: []*pb.Interface{{Name: "eth1", Role: "access"}}, Tenants: []*pb.Tenant{{Name: "A", Table: 100}},
		Routes: []*pb.Route{route}, Domain: &pb.Domain{Locators: []string{"fc00:1::/48"}}}
	return []proto.Message{
		&pb.CommitRequest{Ops: ops}, &pb.CommitRequest{Ops: bad, DryRun: true},
		&pb.ApplyStateRequest{State: st}, &pb.ApplyStateRequest{State: &pb.State{Routes: []*pb.Route{{Prefix: "x"}}}},
	}
}

func FuzzCommitRequest(f *testing.F) {
	if os.Geteuid() != 0 {
		f.Skip("needs root (bpffs, BPF maps)")
	}
	for _, m := range fuzzSeeds() {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	dir := f.TempDir()
	st, err := state.Open(dir, fakeEnv{"eth1": 7, "eth2": 8})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		st.Close()
		_ = unix.Unmount(dataplane.PinDir(dir), unix.MNT_DETACH)
	})
	check := func(t *testing.T, what string, err error) {
		if err != nil && !namesField(err) {
			t.Fatalf("%s: error names no object and field: %v", what, err)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c pb.CommitRequest
		if proto.Unmarshal(data, &c) == nil {
			ops, err := OpsFromPB(c.GetOps())
			check(t, "commit conversion", err)
			if err == nil {
				_, err = st.Commit(ops, true)
				check(t, fmt.Sprintf("commit of %d operations (dry run)", len(ops)), err)
			}
		}
		var a pb.ApplyStateRequest
		if proto.Unmarshal(data, &a) == nil {
			desired, err := StateFromPB(a.GetState())
			check(t, "state conversion", err)
			if err == nil {
				_, err = st.Apply(desired, true)
				check(t, "apply (dry run)", err)
			}
		}
	})
}

// TestNamesField keeps the fuzz target's rule honest: it rejects an error without an object, and the
// store's errors for a bad batch (unknown tenant, unknown SID) pass it.
func TestNamesField(t *testing.T) {
	if namesField(fmt.Errorf("something went wrong")) || namesField(state.Errors{}) {
		t.Fatal("namesField accepts an error that names nothing")
	}
	_, st := client(t)
	for _, o := range []*pb.Op{
		{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: &pb.Route{Tenant: "nope", Prefix: "198.18.2.0/24", Segs: []string{"fc00:2::1"}}}},
		{Kind: pb.Op_DELETE, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::99"}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: "fc00:1::98", Action: "End.DT4", Tenant: "nope"}}},
	} {
		ops, err := OpsFromPB([]*pb.Op{o})
		if err == nil {
			_, err = st.Commit(ops, true)
		}
		if err == nil || !namesField(err) {
			t.Errorf("%v: error %v, want one naming the object", o, err)
		}
	}
}
