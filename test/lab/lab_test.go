// Package labtest runs the namespace lab end to end: real ping, UDP and TCP in both directions for
// two tenants with overlapping IPv4 space, through H.Encaps(.Red), End, End.DT4 and End.DX4.
package labtest

import (
	"fmt"
	"os"
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/lab"
	"github.com/seg6x/seg6x/internal/testbin"
	"google.golang.org/protobuf/encoding/protojson"
)

func TestLab(t *testing.T) {
	bin := testbin.Seg6x(t)
	l := lab.New(fmt.Sprintf("s6t%d", os.Getpid()%100000), bin, testWriter{t})
	defer l.Down()
	if err := l.Up(); err != nil {
		t.Fatal(err)
	}
	const count = 5
	rep, err := l.Traffic(count)
	if err != nil {
		t.Fatal(err)
	}
	// Delivery, isolation (no answer from and no message to the other tenant), VLAN tags as bytes on
	// every access port (the host side counts tagged frames and drops anything else).
	for _, p := range rep.Problems() {
		t.Error(p)
	}
	if len(rep.Flows) != 4 {
		t.Fatalf("%d flows, want 4", len(rep.Flows))
	}

	// Each behavior did the work: both PEs encapsulated for both tenants and decapsulated with
	// End.DT4 (tenant A) and End.DX4 (tenant B); the transit node ran End on every packet.
	for _, node := range []string{"pe1", "pe2"} {
		var s pb.StatsReply
		if err := protojson.Unmarshal(rep.Stats[node], &s); err != nil {
			t.Fatal(err)
		}
		if len(s.Policies) != 2 {
			t.Errorf("%s: %d policies, want 2 (one per tenant)", node, len(s.Policies))
		}
		for _, p := range s.Policies {
			if p.Count.GetPackets() < 3*count {
				t.Errorf("%s: policy %d (%v) counted %d packets, want >= %d", node, p.Id, p.Segs, p.Count.GetPackets(), 3*count)
			}
		}
		for _, sd := range s.Sids {
			if sd.Count.GetPackets() < 3*count {
				t.Errorf("%s: SID %s (%s) counted %d packets, want >= %d", node, sd.Sid, sd.Action, sd.Count.GetPackets(), 3*count)
			}
		}
		for name, c := range s.Reasons {
			if name[:4] == "DROP" && c.GetPackets() > 0 {
				t.Errorf("%s: %d packets dropped with %s", node, c.GetPackets(), name)
			}
		}
	}
	var p pb.StatsReply
	if err := protojson.Unmarshal(rep.Stats["p"], &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Sids) != 1 || p.Sids[0].Count.GetPackets() < 12*count {
		t.Errorf("transit End counted %v, want >= %d packets", p.Sids, 12*count)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b))
	return len(b), nil
}
