package daemontest

// plugin_dump_test.go: the shipped dump plugin on a SID under a stream: `seg6x capture --plugin dump`
// writes the frames it copied to pcapng (the frames as they arrived, cut to its snaplen), every frame
// still goes on as End to the sink, and the plugin's own counters count every frame as dumped or as
// not, the ring full (once the capture has what it wanted and stops reading).

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/pcapng"
	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// pcapngPackets counts the Enhanced Packet Blocks of a pcapng file.
func pcapngPackets(t *testing.T, b []byte) int {
	n := 0
	for off := 0; off+12 <= len(b); {
		typ, l := binary.LittleEndian.Uint32(b[off:]), int(binary.LittleEndian.Uint32(b[off+4:]))
		if l < 12 || off+l > len(b) {
			t.Fatalf("a pcapng block of %d bytes at %d", l, off)
		}
		if typ == 6 {
			n++
		}
		off += l
	}
	return n
}

func TestDumpPluginCapture(t *testing.T) {
	r, d := setup(t, benchrig.SIDs(0, 1))
	dir := t.TempDir()
	file := filepath.Join(dir, "dump.o")
	if err := os.WriteFile(file, testsupport.BuildPlugin(t, "../../plugins/dump.c"), 0o600); err != nil {
		t.Fatal(err)
	}
	sid := netip.MustParseAddr("fc00:d::e")
	cfg := filepath.Join(dir, "dump.yaml")
	if err := os.WriteFile(cfg, []byte(benchrig.PluginEndConfig("dump", file, sid, map[string]string{"snaplen": "64", "then": "end"})), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := d.cli("apply", "-f", cfg, "--prune"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	pcap := filepath.Join(dir, "dump.pcapng")
	capture := exec.Command("ip", "netns", "exec", r.DutNS(), d.bin, "--dir", r.DutDir(), "capture", "--plugin", "dump",
		"--sid", sid.String(), "-w", pcap, "--count", "50", "--duration", "20s")
	var capOut bytes.Buffer
	capture.Stdout, capture.Stderr = &capOut, &capOut
	if err := capture.Start(); err != nil {
		t.Fatal(err)
	}
	frames, pat := benchrig.EndFrames(sid, []int{0, 1, 2})
	time.Sleep(300 * time.Millisecond) // the capture has opened the ring
	res, err := r.StreamFrames(frames, []benchrig.Pattern{pat}, 20000, 500*time.Millisecond, func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := capture.Wait(); err != nil {
		t.Fatalf("capture: %v\n%s", err, capOut.String())
	}
	if res.Sent == 0 || res.Good != res.Sent || res.Bad != 0 {
		t.Fatalf("sent %d, arrived %d, wrong %d", res.Sent, res.Good, res.Bad)
	}
	b, err := os.ReadFile(pcap)
	if err != nil {
		t.Fatal(err)
	}
	if n := pcapngPackets(t, b); n != 50 {
		t.Fatalf("%d packets in the capture, want 50 (%s)", n, capOut.String())
	}
	first, err := pcapng.FirstPacket(b)
	if err != nil {
		t.Fatal(err)
	}
	match := false
	for _, f := range frames {
		match = match || bytes.Equal(first, f[:64])
	}
	if !match {
		t.Fatalf("the first captured frame is none of the stream's frames cut to 64 bytes:\n%x", first)
	}
	st, err := d.d.Client.Stats(context.Background(), &pb.StatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Sids {
		if s.Sid == sid.String() {
			// Once the capture has its 50 and stops reading, the ring fills: counted as ring_full.
			dumped, full := s.PluginCounters["dumped"].GetPackets(), s.PluginCounters["ring_full"].GetPackets()
			if dumped < 50 || dumped+full != res.Sent {
				t.Errorf("the plugin counted %d dumped and %d ring full; the stream sent %d", dumped, full, res.Sent)
			}
			if got := s.PluginOutcomes["end"].GetPackets(); got != res.Sent {
				t.Errorf("%d packets went on as End, %d sent", got, res.Sent)
			}
		}
	}
}
