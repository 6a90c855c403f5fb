package api

// usid_test.go: a route whose segment list is written as uSIDs, through the real gRPC stack: its
// containers are the policy's segment list, Show gives both the notation and the containers, and
// the state Show gives applies back as no change. Bad notations are refused naming the field.

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestUSIDRouteThroughTheAPI(t *testing.T) {
	c, st := client(t)
	ctx := context.Background()
	usids := &pb.USIDList{Block: "fcbb:0::/32", Ids: []string{"100", "200", "300", "E004"}}
	route := &pb.Route{Tenant: "blue", Prefix: "198.18.2.0/24", Mode: "encap.red", Usids: usids}
	if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{tenantOp(pb.Op_ADD, "blue", 100),
		{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: route}}}}); err != nil {
		t.Fatal(err)
	}
	if ps := st.Policies(); len(ps) != 1 || len(ps[0].Segs) != 1 || ps[0].Segs[0].String() != "fcbb:0:100:200:300:e004::" {
		t.Fatalf("policies %+v, want one with the container fcbb:0:100:200:300:e004::", ps)
	}

	stream, err := c.Show(ctx, &pb.ShowRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var chunks []*pb.StateChunk
	for {
		ch, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, ch)
	}
	var shown *pb.Route
	for _, ch := range chunks {
		for _, r := range ch.GetState().GetRoutes() {
			shown = r
		}
	}
	if u := shown.GetUsids(); u == nil || u.GetBlock() != "fcbb::/32" || u.GetNf() != 16 ||
		!slices.Equal(u.GetIds(), []string{"100", "200", "300", "e004"}) ||
		!slices.Equal(shown.GetSegs(), []string{"fcbb:0:100:200:300:e004::"}) {
		t.Fatalf("shown as %v", shown)
	}
	cur, _, err := StateFromChunks(chunks)
	if err != nil {
		t.Fatal(err)
	}
	if r := cur.Routes[0]; r.USIDs == nil || r.USIDs.String() != "fcbb::/32 100 200 300 e004" || len(r.Segs) != 1 {
		t.Fatalf("converted back: %+v", r)
	}
	// What Show gave (notation and containers) is the running state: applying it changes nothing.
	rep, err := c.ApplyState(ctx, &pb.ApplyStateRequest{State: StateToPB(&cur)})
	if err != nil || len(rep.Diff.Added)+len(rep.Diff.Changed)+len(rep.Diff.Removed) != 0 {
		t.Fatalf("applying the shown state: %v %v", rep, err)
	}

	before := take(t, st)
	for _, tc := range []struct {
		usids *pb.USIDList
		want  string
	}{
		{&pb.USIDList{Block: "fcbb:0::/32", Ids: []string{"100", "0"}}, "usids.ids[1]: uSID 0 ends a container"},
		{&pb.USIDList{Block: "fcbb:0::/32", Nf: 32, Ids: []string{"123456789"}}, "usids.ids[0]: 123456789 does not fit in 32 bits"},
		{&pb.USIDList{Block: "fcbb:0::", Ids: []string{"100"}}, `usids.block: "fcbb:0::" is not a prefix`},
		{&pb.USIDList{Block: "fcbb:0::/36", Ids: []string{"100"}}, "usids.block: /36: the block is a multiple of 8 bits"},
		{&pb.USIDList{Block: "fcbb:0::/32", Nf: 300, Ids: []string{"100"}}, "usids.nf: 300 bits"},
		{&pb.USIDList{Block: "fcbb:0::/32"}, "usids.ids: no uSIDs"},
	} {
		r := &pb.Route{Tenant: "blue", Prefix: "198.18.3.0/24", Usids: tc.usids}
		_, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: r}}}})
		s, _ := status.FromError(err)
		if err == nil || s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), "route 198.18.3.0/24 tenant blue: "+tc.want) {
			t.Errorf("%v: got %v, want InvalidArgument ...%s", tc.usids, err, tc.want)
		}
	}
	if after := take(t, st); after != before {
		t.Fatal("a refused route changed the instance")
	}
}
