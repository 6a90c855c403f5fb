package packet

// rxfrags_test.go: which interfaces' frames are read whole (rx_frags), and multi-buffer frames for an
// egress whose driver cannot send them redirected (tx_no_sg). An interface whose frames may span
// buffers (MTU above 1500, generic XDP) has every frame's whole length read; on the others a frame is
// its first buffer unless it says otherwise (longer than a 1500-byte MTU's frame, or an IP packet
// running past the first buffer: an MTU raised before the control plane caught up).

import (
	"bytes"
	"errors"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/slowpath"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/testsupport"
	"golang.org/x/sys/unix"
)

// refreshRxFrags updates the rig's rx_frags entries to the links' MTUs, as the daemon does.
func refreshRxFrags(t *testing.T) {
	t.Helper()
	if _, err := dataplane.RefreshMultiBuf(rig.Dir, rig.Store.Interfaces()); err != nil {
		t.Fatal(err)
	}
}

// rxFragsDevs are the rig's devices with an rx_frags entry, sorted.
func rxFragsDevs(t *testing.T) []string { return devsIn(t, dataplane.MapsOf(rig.Store).RxFrags) }

// devsIn are the rig's devices with an entry in m (keyed by ifindex), sorted.
func devsIn(t *testing.T, m *ebpf.Map) []string {
	t.Helper()
	byIndex := map[uint32]string{}
	for _, it := range rig.Store.Interfaces() {
		byIndex[uint32(it.Ifindex)] = it.Name
	}
	var devs []string
	var k, v uint32
	it := m.Iterate()
	for it.Next(&k, &v) {
		devs = append(devs, byIndex[k])
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(devs)
	return devs
}

// Attaching marks the interfaces above MTU 1500 (fab0 3500, big0 9000); an MTU change moves the mark
// once the control plane looks again, and says which changed.
func TestRxFragsFollowTheMTU(t *testing.T) {
	if got := rxFragsDevs(t); !slices.Equal(got, []string{"big0", "fab0"}) {
		t.Fatalf("rx_frags after attach: %v, want [big0 fab0]", got)
	}
	// Every veth of the rig sends multi-buffer frames (GRO on its far end): none in tx_no_sg.
	if got := devsIn(t, dataplane.MapsOf(rig.Store).TxNoSg); len(got) != 0 {
		t.Fatalf("tx_no_sg after attach: %v, want none", got)
	}
	if err := testsupport.IPLines("", "link set tb0 mtu 9000"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = testsupport.IPLines("", "link set tb0 mtu 1500")
		refreshRxFrags(t)
	})
	ch, err := dataplane.RefreshMultiBuf(rig.Dir, rig.Store.Interfaces())
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) != 1 || ch[0].Name != "tb0" || ch[0].MTU != 9000 || ch[0].RxFrags != uint32(dataplane.Seg6xRxFragsModeRX_FRAGS_NATIVE) {
		t.Errorf("changes after tb0's MTU went to 9000: %+v", ch)
	}
	if got := rxFragsDevs(t); !slices.Equal(got, []string{"big0", "fab0", "tb0"}) {
		t.Errorf("rx_frags: %v, want [big0 fab0 tb0]", got)
	}
	if ch, _ := dataplane.RefreshMultiBuf(rig.Dir, rig.Store.Interfaces()); len(ch) != 0 {
		t.Errorf("nothing changed, yet: %+v", ch)
	}
	if err := testsupport.IPLines("", "link set tb0 mtu 1500"); err != nil {
		t.Fatal(err)
	}
	if ch, _ := dataplane.RefreshMultiBuf(rig.Dir, rig.Store.Interfaces()); len(ch) != 1 || ch[0].RxFrags != 0 {
		t.Errorf("changes after tb0's MTU went back to 1500: %+v", ch)
	}
}

// withoutRxFrags removes dev's rx_frags entry for the test's duration: the control plane has not yet
// seen its MTU go up.
func withoutRxFrags(t *testing.T, dev string) {
	t.Helper()
	idx, err := rig.Ifindex(dev)
	if err != nil {
		t.Fatal(err)
	}
	m := dataplane.MapsOf(rig.Store)
	if err := m.RxFrags.Delete(idx); err != nil && !errors.Is(err, unix.ENOENT) {
		t.Fatal(err)
	}
	if err := dataplane.InvalidateCachedAnswers(m); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		refreshRxFrags(t)
		if err := dataplane.InvalidateCachedAnswers(m); err != nil {
			t.Error(err)
		}
	})
}

// A jumbo frame on an interface not (yet) marked is still read whole: its IP header says it runs past
// the first buffer. The headers must still be in a first buffer of MULTIBUF_HDR_MIN bytes.
func TestJumboFramesOnUnmarkedInterface(t *testing.T) {
	jumboLinks(t)
	withoutRxFrags(t, "ta0")
	withoutRxFrags(t, "fab0")
	for _, name := range []string{"encap1_v4_udp", "encap1_v6", "end", "end_dx4"} {
		f := fixture(t, name, 8800)
		runJumbo(t, f, f.Action, f.Reason, 0)
	}
	f := fixture(t, "encap1_v4_udp", 8800)
	if _, err := rig.RunSplit(nil, f, 4000); errors.Is(err, unix.EINVAL) {
		t.Skip("this kernel's BPF_PROG_TEST_RUN takes no first-buffer size (data_end below the data)")
	}
	runJumbo(t, f, "XDP_REDIRECT", "", 1024)
	runJumbo(t, fixture(t, "encap1_v4_udp", 8800), "XDP_DROP", "DROP_MULTIBUF_HEADERS", 256)
	runJumbo(t, fixture(t, "end", 8800), "XDP_DROP", "DROP_MULTIBUF_HEADERS", 128)
}

// Fragments holding only bytes after the IP packet (padding): on a marked interface the frame's whole
// length is known and the padding trimmed; on an unmarked one the frame is its first buffer and the
// padding stays at its end (the case ctx_whole_len cannot tell; no driver makes it at MTU 1500).
func TestPaddingInFragments(t *testing.T) {
	jumboLinks(t)
	f := fixture(t, "encap1_v4_udp", 1000) // a first buffer no longer than a 1500-byte MTU's frame
	if _, err := rig.RunSplit(nil, f, len(f.Input)-1); errors.Is(err, unix.EINVAL) {
		t.Skip("this kernel's BPF_PROG_TEST_RUN takes no first-buffer size (data_end below the data)")
	}
	pad := bytes.Repeat([]byte{0xA5}, 3000)
	padded := append(append([]byte(nil), f.Input...), pad...)
	run := func(want []byte) {
		t.Helper()
		res, err := rig.RunSplit(nil, &fixtures.Fixture{Name: f.Name, Dev: f.Dev, Input: padded}, len(f.Input))
		if err != nil {
			t.Fatal(err)
		}
		if got := dataplane.Actions[res.Action]; got != "XDP_REDIRECT" {
			t.Fatalf("%s", got)
		}
		if !bytes.Equal(res.Output, want) {
			n := 0
			for n < min(len(want), len(res.Output)) && res.Output[n] == want[n] {
				n++
			}
			t.Errorf("output of %d bytes, want %d, first difference at byte %d", len(res.Output), len(want), n)
		}
	}
	run(f.Output)
	withoutRxFrags(t, "ta0")
	run(append(append([]byte(nil), f.Output...), pad...))
}

// A multi-buffer frame for an egress whose driver cannot send one redirected (tx_no_sg; a veth whose
// far end has neither XDP nor GRO, or a NIC without ndo-xmit-sg) goes to the daemon, which sends it out
// of that egress: the record is the forwarded frame, byte for byte. Without a daemon it is dropped,
// counted. A frame of one buffer to the same egress is redirected as before.
func TestMultiBufToEgressWithoutSG(t *testing.T) {
	jumboLinks(t)
	fab0, err := rig.Ifindex("fab0")
	if err != nil {
		t.Fatal(err)
	}
	m := dataplane.MapsOf(rig.Store)
	if err := m.TxNoSg.Put(fab0, uint32(1)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { refreshRxFrags(t) })
	if got := devsIn(t, m.TxNoSg); !slices.Equal(got, []string{"fab0"}) {
		t.Fatalf("tx_no_sg: %v", got)
	}
	small := fixtures.Get(t, "end")
	expect(t, "one buffer", small, "XDP_REDIRECT", "")
	f := fixture(t, "end", 8800)
	runJumbo(t, f, "XDP_DROP", "DROP_MULTIBUF_EGRESS", 0)

	ring := openSlowRing(t)
	defer ring.Close()
	in := &fixtures.Fixture{Name: f.Name, Dev: f.Dev, Input: f.Input}
	before, _ := rig.ReasonCount("SLOW_MULTIBUF_SEND")
	res, err := rig.Run(nil, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := dataplane.Actions[res.Action]; got != "XDP_DROP" {
		t.Fatalf("with the ring read: %s, want XDP_DROP (the frame is the daemon's)", got)
	}
	if after, _ := rig.ReasonCount("SLOW_MULTIBUF_SEND"); after != before+1 {
		t.Errorf("SLOW_MULTIBUF_SEND counted %d times, want once", after-before)
	}
	ring.rd.SetDeadline(time.Now().Add(2 * time.Second))
	rec, err := ring.rd.Read()
	if err != nil {
		t.Fatalf("no slow path record: %v", err)
	}
	meta, frame, err := slowpath.Decode(rec.RawSample)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Kind != slowpath.KindSend || meta.Ifindex != fab0 {
		t.Errorf("record kind %d for ifindex %d, want %d (send) for fab0 (%d)", meta.Kind, meta.Ifindex, slowpath.KindSend, fab0)
	}
	if !bytes.Equal(frame, f.Output) {
		t.Errorf("the frame to send: %d bytes, want the forwarded frame of %d", len(frame), len(f.Output))
	}
}
