package daemontest

// trace_test.go: `seg6x trace` on a running daemon under traffic: the records name the tenant, the
// route, the policy, the FIB result and carry the frame as received and as sent (an IPv6 frame to
// the route's SID); a second trace at the same time is refused; arming and disarming mid-stream
// loses no frame; once the trace ends the program is back on its product path (flag off, slot empty).

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/tools/benchrig"
)

func TestTraceUnderTraffic(t *testing.T) {
	segs := benchrig.SIDs(0, 1)
	r, d := setup(t, segs)
	c := d.d.Client
	var records []*pb.TraceRecord
	var sum *pb.TraceSummary
	res, err := streamWhile(r, tenantFlows, []benchrig.Pattern{benchrig.EncapOutput(segs)}, 20000, 1200*time.Millisecond, func() error {
		if err := flowing(c, 1000); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stream, err := c.Trace(ctx, &pb.TraceRequest{Filter: &pb.TraceFilter{Tenant: "t", Proto: "udp"}, Count: 20, Snaplen: 128})
		if err != nil {
			return err
		}
		first, err := stream.Recv()
		if err != nil {
			return err
		}
		records = append(records, first.GetRecord())
		// One trace at a time.
		second, err := c.Trace(ctx, &pb.TraceRequest{Count: 1})
		if err == nil {
			_, err = second.Recv()
		}
		if status.Code(err) != codes.FailedPrecondition {
			return errors.New("a second trace at the same time was not refused: " + status.Convert(err).Message())
		}
		for {
			ev, err := stream.Recv()
			if err != nil {
				return err
			}
			if s := ev.GetSummary(); s != nil {
				sum = s
				return flowing(c, 1000) // disarmed under traffic too
			}
			records = append(records, ev.GetRecord())
		}
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, d.logs)
	}
	if res.Bad != 0 || res.Good != res.Sent {
		t.Fatalf("sent %d, arrived %d, wrong %d: tracing lost or changed frames", res.Sent, res.Good, res.Bad)
	}
	if len(records) != 20 || sum == nil || sum.Emitted < 20 || sum.Matched < sum.Emitted || sum.Programs != 1 {
		t.Fatalf("%d records, summary %+v", len(records), sum)
	}
	sid := segs[0].As16()
	for _, rec := range records {
		if rec.Class != "tenant" || rec.Tenant != "t" || rec.Table != 100 || rec.Route != "198.19.1.0/24" || rec.Policy == 0 || rec.Action != "redirect" ||
			rec.Reason != "" || rec.Fib == nil || rec.Fib.Result != "success" || rec.Fib.Dst != segs[0].String() || rec.Fib.Egress == "" ||
			rec.Outer.GetProto() != 17 || rec.Hook != "xdp" || rec.Vlan == 0 {
			t.Fatalf("record %+v", rec)
		}
		if len(rec.Rx) != 64 || int(rec.FrameLen) != 64 || len(rec.Tx) != int(rec.OutLen) || len(rec.Tx) < 54 ||
			rec.Tx[12] != 0x86 || rec.Tx[13] != 0xdd || [16]byte(rec.Tx[38:54]) != sid {
			t.Fatalf("record frames: rx %d bytes (frame %d), tx %x (out %d)", len(rec.Rx), rec.FrameLen, rec.Tx, rec.OutLen)
		}
	}
	// Disarmed: the attached program's trace flag is 0 and its slot empty.
	id, err := dutProgramID(d)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ebpf.NewProgramFromID(id)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	info, _ := p.Info()
	ids, _ := info.MapIDs()
	checked := 0
	for _, mid := range ids {
		m, err := ebpf.NewMapFromID(mid)
		if err != nil {
			t.Fatal(err)
		}
		mi, _ := m.Info()
		switch {
		case mi.Name == "trace_prog":
			var v uint32
			if err := m.Lookup(uint32(0), &v); !errors.Is(err, ebpf.ErrKeyNotExist) {
				t.Errorf("trace_prog slot still set after the trace (%v)", err)
			}
			checked++
		case len(mi.Name) >= 4 && mi.Name[len(mi.Name)-4:] == ".bss":
			var v uint32
			if err := m.Lookup(uint32(0), &v); err != nil || v != 0 {
				t.Errorf("trace flag %d after the trace (%v)", v, err)
			}
			checked++
		}
		m.Close()
	}
	if checked != 2 {
		t.Errorf("found %d of the trace flag and slot", checked)
	}
}

// dutProgramID is the id of the program attached on the DUT's ingress.
func dutProgramID(d *daemon) (ebpf.ProgramID, error) {
	st, err := d.d.Client.Status(context.Background(), &pb.StatusRequest{})
	if err != nil {
		return 0, err
	}
	for _, it := range st.GetInterfaces() {
		if it.GetProgId() != 0 {
			return ebpf.ProgramID(it.GetProgId()), nil
		}
	}
	return 0, errors.New("no attached interface in status")
}

// TestCaptureOpensInTshark: `seg6x capture` under traffic writes a pcapng file tshark reads as is:
// each packet on "received" and on "sent", the sent one an SRv6 frame with the policy's segment list,
// each with seg6x's decision in its comment.
func TestCaptureOpensInTshark(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Fatal("tshark is not installed: run scripts/deps.sh")
	}
	segs := benchrig.SIDs(0, 2)
	r, d := setup(t, segs)
	file := filepath.Join(t.TempDir(), "cap.pcapng")
	var out []byte
	res, err := streamWhile(r, tenantFlows, []benchrig.Pattern{benchrig.EncapOutput(segs)}, 20000, 1400*time.Millisecond, func() error {
		if err := flowing(d.d.Client, 1000); err != nil {
			return err
		}
		var err error
		if out, err = exec.Command("ip", "netns", "exec", r.DutNS(), d.bin, "--dir", r.DutDir(), "capture", "-w", file,
			"--count", "4", "--duration", "2s", "tenant", "t").CombinedOutput(); err != nil {
			return err
		}
		return flowing(d.d.Client, 1000) // disarmed under traffic too
	})
	if err != nil {
		t.Fatalf("%v: %s\n%s", err, out, d.logs)
	}
	if res.Good != res.Sent || res.Bad != 0 {
		t.Fatalf("sent %d, arrived %d, wrong %d", res.Sent, res.Good, res.Bad)
	}
	fields, err := exec.Command(tshark, "-r", file, "-T", "fields", "-E", "separator=|", "-e", "frame.interface_name",
		"-e", "frame.len", "-e", "ipv6.routing.segleft", "-e", "ipv6.routing.srh.addr", "-e", "frame.comment").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v: %s", err, fields)
	}
	lines := strings.Split(strings.TrimSpace(string(fields)), "\n")
	var got []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "Running as user") {
			got = append(got, l)
		}
	}
	if len(got) != 8 {
		t.Fatalf("tshark read %d frames, want 8:\n%s", len(got), fields)
	}
	// The SRH lists the segments last first: [segs[1], segs[0]], segments left 1.
	srh := segs[1].String() + "," + segs[0].String()
	for i, l := range got {
		f := strings.Split(l, "|")
		if len(f) != 5 {
			t.Fatalf("line %q", l)
		}
		if i%2 == 0 && (f[0] != "received" || f[1] != "64" || f[2] != "" || !strings.HasPrefix(f[4], "seg6x: received on ")) {
			t.Errorf("received frame %d: %q", i/2, l)
		}
		if i%2 == 1 && (f[0] != "sent" || f[2] != "1" || f[3] != srh ||
			!strings.Contains(f[4], "tenant t; route 198.19.1.0/24 policy ") || !strings.HasSuffix(f[4], "; redirect")) {
			t.Errorf("sent frame %d: %q (want segments left 1, SRH %s)", i/2, l, srh)
		}
	}
}
