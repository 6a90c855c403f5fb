package api

// observe_test.go: Stats, Trace and Explain reach the data plane through state.Observer only, so
// they run without root on a fake data plane (fakedp.Dataplane): its counters, records and
// explanation come back converted, with the interface, tenant and SID names the API adds.

import (
	"context"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport/fakedp"
)

func fakeClient(t *testing.T) (pb.ControlClient, *state.Store, *fakedp.Dataplane) {
	t.Helper()
	st, f := fakedp.OpenStore(t, t.TempDir(), fakeEnv{"eth1": 7})
	c, stop, err := Local(NewServer(st, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return c, st, f
}

func TestObserverWithoutBPF(t *testing.T) {
	c, st, f := fakeClient(t)
	ctx := context.Background()
	if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{tenantOp(pb.Op_ADD, "blue", 100),
		sidOp(pb.Op_ADD, &pb.Sid{Sid: "fc00:1::64", Action: "End.DT4", Tenant: "blue"})}}); err != nil {
		t.Fatal(err)
	}
	sids := st.SIDs()
	if len(sids) != 1 {
		t.Fatalf("%d SIDs", len(sids))
	}
	table, _ := st.TableIDOf("blue")

	// Stats: the fake's counters, reasons that never counted left out.
	f.SetStats(state.Stats{Actions: map[string]state.Counter{"XDP_DROP": {Packets: 3, Bytes: 300}},
		Reasons: map[string]state.Counter{"DROP_TRUNC_IP": {Packets: 2, Bytes: 128}, "PASS_NOT_OURS": {}},
		SIDs:    map[uint32]state.Counter{sids[0].ID: {Packets: 5, Bytes: 500}}})
	s, err := c.Stats(ctx, &pb.StatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if a := s.Actions["XDP_DROP"]; a.GetPackets() != 3 || a.GetBytes() != 300 || len(s.Reasons) != 1 || s.Reasons["DROP_TRUNC_IP"].GetPackets() != 2 {
		t.Errorf("actions %v, reasons %v", s.Actions, s.Reasons)
	}
	if len(s.Sids) != 1 || s.Sids[0].Sid != "fc00:1::64" || s.Sids[0].Count.GetPackets() != 5 {
		t.Errorf("sids %v", s.Sids)
	}

	// Trace: the filter as the data plane gets it, and a decoded record named.
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip("no lo:", err)
	}
	at := time.Unix(1700000000, 42)
	f.AddTraceRecords(&state.TraceRecord{Time: at, Hook: "xdp", Ifindex: uint32(lo.Index), VLAN: 100, Class: "sid", Action: "redirect",
		Port: &state.TracePort{Roles: []string{"tenant"}, Tenant: true, Table: table},
		SID:  &state.TraceSID{Addr: netip.MustParseAddr("fc00:1::64"), ID: sids[0].ID, Behavior: "End.DT4", SLBefore: -1, SLAfter: -1},
		FIB: &state.TraceFIB{Rc: 7, Result: "no-neigh", Dst: netip.MustParseAddr("198.18.0.1"),
			Egress: &state.TraceEgress{Ifindex: uint32(lo.Index), DMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}}},
		Outer: state.TraceAddrs{Src: netip.MustParseAddr("fc00:2::1"), Dst: netip.MustParseAddr("fc00:1::64"), Proto: 4}})
	vlan := uint32(100)
	stream, err := c.Trace(ctx, &pb.TraceRequest{Count: 1, Filter: &pb.TraceFilter{Tenant: "blue", Vlan: &vlan, Actions: []string{"Redirect"},
		Reason: "drop_trunc_ip", Dst: "198.18.0.0/24"}})
	if err != nil {
		t.Fatal(err)
	}
	var recs []*pb.TraceRecord
	var sum *pb.TraceSummary
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r := ev.GetRecord(); r != nil {
			recs = append(recs, r)
		}
		if s := ev.GetSummary(); s != nil {
			sum = s
		}
	}
	if len(recs) != 1 || sum.GetEmitted() != 1 || sum.GetPrograms() != 1 {
		t.Fatalf("records %v, summary %v", recs, sum)
	}
	r := recs[0]
	if r.TimeUnixNs != at.UnixNano() || r.Dev != "lo" || r.Tenant != "blue" || r.Table != 100 || r.Sid != "fc00:1::64" ||
		r.Behavior != "End.DT4" || r.Action != "redirect" || r.Class != "sid" || r.Fib.GetResult() != "no-neigh" ||
		r.Fib.GetEgress() != "lo" || r.Fib.GetDmac() != "02:00:00:00:00:01" || r.Fib.GetNextHop() != "" ||
		r.Outer.GetSrc() != "fc00:2::1" || r.Inner != nil || r.SlBefore != -1 {
		t.Errorf("record %v", r)
	}
	fs := f.TraceFilters()
	if len(fs) != 1 || fs[0].Table == nil || *fs[0].Table != table || fs[0].VLAN == nil || *fs[0].VLAN != 100 ||
		len(fs[0].Actions) != 1 || fs[0].Actions[0] != "redirect" || fs[0].Reason != "DROP_TRUNC_IP" ||
		fs[0].Dst != netip.MustParsePrefix("198.18.0.0/24") || fs[0].Rate != defaultTraceRate {
		t.Errorf("filter %+v", fs)
	}

	// Explain: the fake's record, the frame given as its input.
	f.SetExplained(&state.TraceRecord{Time: at, Hook: "xdp", Action: "drop", Class: "malformed", Reason: "DROP_TRUNC_IP"})
	frame := make([]byte, 14)
	e, err := c.Explain(ctx, &pb.ExplainRequest{Dev: "lo", Frame: frame})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.GetRecord(); r.Action != "drop" || r.Reason != "DROP_TRUNC_IP" || r.Dev != "lo" || len(r.Rx) != 14 || r.Tx != nil {
		t.Errorf("explained %v", r)
	}
}
