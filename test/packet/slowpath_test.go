package packet

// slowpath_test.go: the fixtures of SLOW_* reasons run with the slow path's ring read, as under the
// daemon: the record the program queued must name the fixture's port and, expanded by the daemon's own
// code (internal/slowpath: the fragmenter, or the frame as is), give exactly the frames scapy built.
// Those frames are fixtures of their own (slow_*_N, *_back), which check what the program does with them.

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"

	"github.com/seg6x/seg6x/internal/slowpath"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/testsupport"
)

type slowRing struct{ rd *slowpath.Ring }

func openSlowRing(t *testing.T) *slowRing {
	t.Helper()
	rd, err := slowpath.OpenRing(rig.Objs.SlowPath, slowpath.RingBytes)
	if err != nil {
		t.Fatal(err)
	}
	return &slowRing{rd}
}

func (s *slowRing) Close() { s.rd.Close() }

// expect reads the one record fixture f's run queued and checks what the daemon would run in.
func (s *slowRing) expect(t *testing.T, f *fixtures.Fixture) {
	t.Helper()
	s.rd.SetDeadline(time.Now().Add(2 * time.Second))
	rec, err := s.rd.Read()
	if err != nil {
		t.Fatalf("%s: no slow path record: %v", f.Name, err)
	}
	m, frame, err := slowpath.Decode(rec.RawSample)
	if err != nil {
		t.Fatal(err)
	}
	ifindex, err := rig.Ifindex(f.SlowDev)
	if err != nil {
		t.Fatal(err)
	}
	if m.Ifindex != ifindex {
		t.Errorf("%s: record for ifindex %d, want %s (%d)", f.Name, m.Ifindex, f.SlowDev, ifindex)
	}
	frames, err := slowpath.Expand(m, frame)
	if err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	if len(frames) != len(f.Slow) {
		t.Fatalf("%s: the daemon would run in %d frames, want %d", f.Name, len(frames), len(f.Slow))
	}
	for i := range frames {
		if !bytes.Equal(frames[i], f.Slow[i]) {
			t.Errorf("%s: frame %d run in differs\n got %s\nwant %s\n(expected built by %s)", f.Name, i,
				hex.EncodeToString(frames[i]), f.SlowHex[i], f.SlowScapy[i])
		}
	}
	s.rd.SetDeadline(time.Now().Add(50 * time.Millisecond))
	if rec, err := s.rd.Read(); err == nil {
		t.Errorf("%s: a second record (%d bytes)", f.Name, len(rec.RawSample))
	}
}

// Without a daemon reading the ring, the program falls back: a packet to fragment goes to the kernel
// as before the slow path existed (fixture headend_frag_needed is the same case), a decapsulated
// packet too big for its port is dropped unanswered.
func TestSlowPathWithoutDaemon(t *testing.T) {
	expect(t, "no daemon", fixtures.Get(t, "slow_fragment"), "XDP_PASS", "PASS_FIB_FRAG_NEEDED")
	expect(t, "no daemon", fixtures.Get(t, "slow_decap_icmp4"), "XDP_DROP", "DROP_DECAP_TOO_BIG")
}

// A ring nobody reads fills up: then the packet is dropped and counted as DROP_SLOW_BUSY (the
// kernel counts the lost record, which the daemon reports).
func TestSlowPathBusy(t *testing.T) {
	defer testsupport.OnOneCPU(t)()                       // one CPU's ring
	rd, err := slowpath.OpenRing(rig.Objs.SlowPath, 4096) // one page: a 1500-byte record or two
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	f := fixtures.Get(t, "slow_fragment")
	before, err := rig.ReasonCount("DROP_SLOW_BUSY")
	if err != nil {
		t.Fatal(err)
	}
	queued := 0
	for i := 0; i < 10; i++ {
		res, err := rig.Run(nil, f, 1)
		if err != nil {
			t.Fatal(err)
		}
		if res.Action != 1 {
			t.Fatalf("run %d: action %d, want XDP_DROP", i, res.Action)
		}
		after, err := rig.ReasonCount("DROP_SLOW_BUSY")
		if err != nil {
			t.Fatal(err)
		}
		if after > before {
			if queued == 0 {
				t.Fatal("DROP_SLOW_BUSY before any record was queued")
			}
			return
		}
		queued++
	}
	t.Fatalf("10 records of 1500 bytes into a 4 KB ring: never DROP_SLOW_BUSY")
}
