package packet

// explain_test.go: `seg6x explain` runs a frame through the traced build of the program on the live
// maps (dataplane.Explain). For every fixture it must agree with the product program byte for byte
// (action, output, reason) and leave the live counters alone; for one fixture of each kind its record
// must name the right port, tenant table, route, policy, SID, behavior, segments left and FIB result.

import (
	"bytes"
	"encoding/hex"
	"net"
	"net/netip"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/fixtures"
)

func TestExplainAgreesWithEveryFixture(t *testing.T) {
	fs, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	// As without a daemon (the rig has none), and as with one for the fixtures of the slow path.
	plain, err := dataplane.NewExplainer(rig.Store.Dir, rig.Store.ProgramOptions(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	withDaemon, err := dataplane.NewExplainer(rig.Store.Dir, rig.Store.ProgramOptions(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer withDaemon.Close()
	for i := range fs {
		f := &fs[i]
		t.Run(f.Name, func(t *testing.T) {
			ifindex, err := rig.Ifindex(f.Dev)
			if err != nil {
				t.Fatal(err)
			}
			counted := func() uint64 {
				n, err := rig.ReasonCount(f.Reason)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			var before uint64
			if f.Reason != "" {
				before = counted()
			}
			x := plain
			if len(f.Slow) > 0 {
				x = withDaemon
			}
			e, err := x.Run(ifindex, f.Input)
			if err != nil {
				t.Fatal(err)
			}
			if want := dataplane.ActionIndex(f.Action); int(e.Ret) != want || int(e.Record.Action) != want {
				t.Errorf("%s: return %d, record action %d; want %s", f.Description, e.Ret, e.Record.Action, f.Action)
			}
			if f.Action != "XDP_DROP" && !bytes.Equal(e.Out, f.Output) {
				t.Errorf("%s: output differs\n got %s\nwant %s", f.Description, hex.EncodeToString(e.Out), f.OutputHex)
			}
			wantReason := 0
			if f.Reason != "" {
				wantReason = dataplane.ReasonIndex(f.Reason)
			}
			if int(e.Record.Reason) != wantReason {
				t.Errorf("%s: record reason %d, want %d (%s)", f.Description, e.Record.Reason, wantReason, f.Reason)
			}
			if int(e.Record.Ifindex) != int(ifindex) || int(e.Record.FrameLen) != len(f.Input) {
				t.Errorf("record ifindex %d frame %d; want %d, %d", e.Record.Ifindex, e.Record.FrameLen, ifindex, len(f.Input))
			}
			if f.Reason != "" && counted() != before {
				t.Errorf("explain counted %s in the live counters", f.Reason)
			}
		})
	}
}

func addr16(a [16]uint8) netip.Addr { return netip.AddrFrom16(a).Unmap() }

func TestExplainRecords(t *testing.T) {
	fs, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*fixtures.Fixture{}
	for i := range fs {
		byName[fs[i].Name] = &fs[i]
	}
	x, err := dataplane.NewExplainer(rig.Store.Dir, rig.Store.ProgramOptions(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	run := func(name string) *dataplane.Explained {
		t.Helper()
		f := byName[name]
		if f == nil {
			t.Fatalf("no fixture %s", name)
		}
		return explainFixture(t, x, f)
	}
	fab0, err := net.InterfaceByName("fab0")
	if err != nil {
		t.Fatal(err)
	}
	F := func(f dataplane.Seg6xTraceFlags) uint32 { return uint32(f) }

	// Headend: tenant blue (table 100, VLAN 100 on ta0), 198.18.2.0/24 -> fc00:2::64, out of fab0.
	r := run("encap1_v4_udp").Record
	if r.Class != uint8(dataplane.Seg6xTraceClassTRACE_TENANT) || r.Vlan != 100 || r.Table == 0 ||
		r.Flags&F(dataplane.Seg6xTraceFlagsTRACE_F_ROUTE) == 0 || r.RoutePlen != 24 ||
		addr16(r.RouteAddr) != netip.MustParseAddr("198.18.2.0") || r.Policy == 0 {
		t.Errorf("encap1_v4_udp: class %d vlan %d table %d flags %#x route %v/%d policy %d", r.Class, r.Vlan, r.Table,
			r.Flags, addr16(r.RouteAddr), r.RoutePlen, r.Policy)
	}
	if r.Flags&F(dataplane.Seg6xTraceFlagsTRACE_F_FIB) == 0 || r.FibRc != 0 || int(r.FibIfindex) != fab0.Index ||
		addr16(r.FibDst) != netip.MustParseAddr("fc00:2::64") {
		t.Errorf("encap1_v4_udp: FIB flags %#x rc %d ifindex %d dst %v; want rc 0 out of fab0 (%d) to fc00:2::64",
			r.Flags, r.FibRc, r.FibIfindex, addr16(r.FibDst), fab0.Index)
	}
	if addr16(r.OuterSrc) != netip.MustParseAddr("198.18.1.2") || addr16(r.OuterDst) != netip.MustParseAddr("198.18.2.2") ||
		r.OuterProto != 17 || r.Flags&F(dataplane.Seg6xTraceFlagsTRACE_F_INNER) != 0 ||
		r.Flags&F(dataplane.Seg6xTraceFlagsTRACE_F_L4) == 0 || r.Sport != 1000 || r.Dport != 2000 {
		t.Errorf("encap1_v4_udp: headers %v > %v proto %d ports %d > %d flags %#x", addr16(r.OuterSrc), addr16(r.OuterDst),
			r.OuterProto, r.Sport, r.Dport, r.Flags)
	}
	// The longest of two matching routes: 198.18.2.128/25.
	if r := run("encap_lpm_longest").Record; r.RoutePlen != 25 || addr16(r.RouteAddr) != netip.MustParseAddr("198.18.2.128") {
		t.Errorf("encap_lpm_longest: route %v/%d, want 198.18.2.128/25", addr16(r.RouteAddr), r.RoutePlen)
	}
	// End.DX4 at fc00:1::65: a local SID, its behavior, segments left 0 -> 0, FIB to 198.18.9.2.
	r = run("end_dx4").Record
	if r.Class != uint8(dataplane.Seg6xTraceClassTRACE_SID) || r.Flags&F(dataplane.Seg6xTraceFlagsTRACE_F_SID) == 0 ||
		addr16(r.Sid) != netip.MustParseAddr("fc00:1::65") || r.Behavior != 4 || r.FibRc != 0 ||
		addr16(r.FibDst) != netip.MustParseAddr("198.18.9.2") {
		t.Errorf("end_dx4: class %d flags %#x sid %v behavior %d sl %d->%d fib rc %d dst %v", r.Class, r.Flags, addr16(r.Sid),
			r.Behavior, r.SlBefore, r.SlAfter, r.FibRc, addr16(r.FibDst))
	}
	// The headers of a tunnel: the outer IPv6 (behind it an SRH), the inner IPv4 and its TCP ports.
	if r.OuterProto != 43 || addr16(r.OuterDst) != netip.MustParseAddr("fc00:1::65") ||
		r.Flags&F(dataplane.Seg6xTraceFlagsTRACE_F_INNER) == 0 || r.InnerProto != 6 ||
		addr16(r.InnerSrc) != netip.MustParseAddr("198.18.2.2") || addr16(r.InnerDst) != netip.MustParseAddr("198.18.1.2") ||
		r.Sport != 80 || r.Dport != 40000 {
		t.Errorf("end_dx4: headers outer %v proto %d, inner %v > %v proto %d, ports %d > %d, flags %#x", addr16(r.OuterDst),
			r.OuterProto, addr16(r.InnerSrc), addr16(r.InnerDst), r.InnerProto, r.Sport, r.Dport, r.Flags)
	}
	// End: segments left goes down by one.
	if r := run("end").Record; addr16(r.Sid) != netip.MustParseAddr("fc00:1::1") || r.Behavior != 1 || r.SlAfter+1 != r.SlBefore {
		t.Errorf("end: sid %v behavior %d sl %d -> %d", addr16(r.Sid), r.Behavior, r.SlBefore, r.SlAfter)
	}
	// The boundary: an access port refusing a SID.
	if r := run("boundary_sid_dx4_srh").Record; r.Class != uint8(dataplane.Seg6xTraceClassTRACE_BOUNDARY) ||
		r.Action != 1 || int(r.Reason) != dataplane.ReasonIndex("DROP_BOUNDARY_SID") {
		t.Errorf("boundary_sid_dx4_srh: class %d action %d reason %d", r.Class, r.Action, r.Reason)
	}
	// The FIB's error: no neighbor for the next hop (the kernel resolves it).
	if r := run("headend_no_neigh").Record; r.FibRc != 7 || int(r.Reason) != dataplane.ReasonIndex("PASS_FIB_NO_NEIGH") {
		t.Errorf("headend_no_neigh: fib rc %d reason %d", r.FibRc, r.Reason)
	}
	// Not ours: ARP goes to the kernel untouched, nothing classified.
	if r := run("arp_passes").Record; r.Class != uint8(dataplane.Seg6xTraceClassTRACE_NOT_OURS) || r.Action != 2 || r.Reason != 0 {
		t.Errorf("arp_passes: class %d action %d reason %d", r.Class, r.Action, r.Reason)
	}
}

// explainFixture runs fixture f's input through x, arriving on the fixture's device.
func explainFixture(t *testing.T, x *dataplane.Explainer, f *fixtures.Fixture) *dataplane.Explained {
	t.Helper()
	ifindex, err := rig.Ifindex(f.Dev)
	if err != nil {
		t.Fatal(err)
	}
	e, err := x.Run(ifindex, f.Input)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
