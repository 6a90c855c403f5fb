package packet

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"os/exec"
	"testing"
	"time"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// loadWithCache loads the program with the next-hop cache on (ttl) and returns it, the fixtures and
// the one named name.
func loadWithCache(t *testing.T, ttl time.Duration, name string) (*dataplane.Seg6xObjects, []fixtures.Fixture, *fixtures.Fixture) {
	t.Helper()
	objs, err := dataplane.LoadObjects(rig.Dir, dataplane.ProgramOptions{NextHopCache: ttl})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := fixtures.Load()
	if err != nil {
		objs.Close()
		t.Fatal(err)
	}
	f := fixtures.Find(fs, name)
	if f == nil {
		objs.Close()
		t.Fatalf("fixture %s not found", name)
	}
	return objs, fs, f
}

// TestNextHopCache runs the program with the next-hop cache on: cached results give the same bytes,
// a neighbor change shows after the cache time, and a packet longer than any the FIB accepted for
// the entry is looked up again (so the MTU check still happens).
func TestNextHopCache(t *testing.T) {
	const ttl = 150 * time.Millisecond
	defer testsupport.OnOneCPU(t)() // the cache is per CPU: consecutive runs must see the same entries
	objs, fs, f := loadWithCache(t, ttl, "encap1_v4_udp")
	defer objs.Close()
	for i := 0; i < 3; i++ { // miss, then hits
		res, err := rig.Run(objs.Seg6xXdp, f, 1)
		if err != nil {
			t.Fatal(err)
		}
		if res.Action != 4 || !bytes.Equal(res.Output, f.Output) {
			t.Fatalf("run %d with the cache: action %d, output differs: %v", i, res.Action, !bytes.Equal(res.Output, f.Output))
		}
	}

	// Every fixture, run twice (the second run answered from the cache where the first filled it),
	// gives exactly the expected action and bytes.
	for i := range fs {
		for run := 0; run < 2; run++ {
			var slow *slowRing
			if len(fs[i].Slow) > 0 {
				slow = openSlowRing(t)
			}
			res, err := rig.Run(objs.Seg6xXdp, &fs[i], 1)
			if err != nil {
				t.Fatal(err)
			}
			if slow != nil {
				slow.expect(t, &fs[i])
				slow.Close()
			}
			if dataplane.Actions[res.Action] != fs[i].Action || (fs[i].Action != "XDP_DROP" && !bytes.Equal(res.Output, fs[i].Output)) {
				t.Errorf("%s (run %d with the cache): %s, output equal: %v", fs[i].Name, run, dataplane.Actions[res.Action],
					bytes.Equal(res.Output, fs[i].Output))
			}
		}
	}

	// The neighbor's MAC changes: within the cache time the old one is used; a bump of nh_gen (what
	// the daemon does on every netlink change) makes the new one used at once; without a bump, the
	// next change shows once the cache time has passed.
	neigh := func(mac string) {
		testsupport.MustRun(t, "ip", "-6", "neigh", "replace", "fc00:12::2", "lladdr", mac, "dev", "fab0", "nud", "permanent")
	}
	dmac := func(when string, want []byte) {
		t.Helper()
		res, err := rig.Run(objs.Seg6xXdp, f, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Output[:6], want) || !bytes.Equal(res.Output[6:], f.Output[6:]) {
			t.Fatalf("%s: destination MAC %x, want %x (rest unchanged)", when, res.Output[:6], want)
		}
	}
	defer neigh("02:00:00:00:01:02")
	dmac("fills its slot again (another fixture's flow may have taken it)", f.Output[:6])
	neigh("02:00:00:00:01:99")
	dmac("within the cache time, no invalidation", f.Output[:6])
	var gen uint64
	if err := dataplane.MapsOf(rig.Store).NhGen.Lookup(uint32(0), &gen); err != nil {
		t.Fatal(err)
	}
	if err := dataplane.MapsOf(rig.Store).NhGen.Update(uint32(0), gen+1, 0); err != nil {
		t.Fatal(err)
	}
	dmac("after an nh_gen bump", []byte{0x02, 0, 0, 0, 0x01, 0x99})
	neigh("02:00:00:00:01:98")
	dmac("within the cache time again", []byte{0x02, 0, 0, 0, 0x01, 0x99})
	time.Sleep(ttl + 50*time.Millisecond)
	dmac("after the cache time", []byte{0x02, 0, 0, 0, 0x01, 0x98})

	// A packet to the same policy, too long for fab0's MTU (3500): the cache must not answer for it.
	big := append([]byte(nil), f.Input...)
	big = append(big, make([]byte, 3470-len(big))...)
	ipLen := len(big) - 18
	binary.BigEndian.PutUint16(big[18+2:], uint16(ipLen))
	testsupport.FixIPv4Checksum(big[18:])
	binary.BigEndian.PutUint16(big[18+20+4:], uint16(ipLen-20)) // UDP length
	bf := *f
	bf.Input = big
	before, _ := rig.ReasonCount("PASS_FIB_FRAG_NEEDED")
	res, err := rig.Run(objs.Seg6xXdp, &bf, 1)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := rig.ReasonCount("PASS_FIB_FRAG_NEEDED")
	if dataplane.Actions[res.Action] != "XDP_PASS" || after != before+1 {
		t.Fatalf("3470-byte frame with a cached next hop: %s, frag-needed counted %d times", dataplane.Actions[res.Action], after-before)
	}
}

// redirected runs f's frame with input in through objs' program and wants it redirected as want.
func redirected(t *testing.T, objs *dataplane.Seg6xObjects, f *fixtures.Fixture, what string, in, want []byte) {
	t.Helper()
	g := *f
	g.Input = in
	res, err := rig.Run(objs.Seg6xXdp, &g, 1)
	if err != nil {
		t.Fatal(err)
	}
	if dataplane.Actions[res.Action] != "XDP_REDIRECT" || !bytes.Equal(res.Output, want) {
		t.Fatalf("%s: %s\n got %x\nwant %x", what, dataplane.Actions[res.Action], res.Output, want)
	}
}

// TestNextHopCacheKeysEveryLookupInput: a policy rule sends one source elsewhere. With the cache on,
// a packet from another source fills the cache for the same destination first; the packet from the
// ruled source must still leave the way the FIB routes it (the cache key holds the source, the
// ingress interface, the protocol and the TOS, not only the destination).
func TestNextHopCacheKeysEveryLookupInput(t *testing.T) {
	defer testsupport.OnOneCPU(t)() // the cache is per CPU: stay on one
	ip := func(args ...string) {
		t.Helper()
		testsupport.MustRun(t, "ip", args...)
	}
	// Source fc00:9::77 is routed by table 300: next hop fc00:12::3 (another MAC) for fc00:3::/48.
	ip("-6", "neigh", "replace", "fc00:12::3", "lladdr", "02:00:00:00:01:33", "dev", "fab0", "nud", "permanent")
	ip("-6", "route", "add", "fc00:3::/48", "via", "fc00:12::3", "dev", "fab0", "table", "300")
	ip("-6", "rule", "add", "from", "fc00:9::77", "lookup", "300", "pref", "50")
	defer func() {
		_ = exec.Command("ip", "-6", "rule", "del", "from", "fc00:9::77", "lookup", "300", "pref", "50").Run()
		_ = exec.Command("ip", "-6", "route", "flush", "table", "300").Run()
		_ = exec.Command("ip", "-6", "neigh", "del", "fc00:12::3", "dev", "fab0").Run()
	}()
	objs, _, f := loadWithCache(t, time.Minute, "end")
	defer objs.Close()
	run := func(what string, in, want []byte) { t.Helper(); redirected(t, objs, f, what, in, want) }
	const srcOff = 14 + 8 // Ethernet, then the IPv6 source
	ruled := append([]byte(nil), f.Input...)
	ruled[srcOff+15] = 0x77 // fc00:9::1 -> fc00:9::77
	ruledOut := append([]byte(nil), f.Output...)
	ruledOut[srcOff+15] = 0x77
	copy(ruledOut[:6], []byte{0x02, 0, 0, 0, 0x01, 0x33})
	for i := 0; i < 2; i++ {
		run("main-table source (fills the cache)", f.Input, f.Output)
		run("source with its own rule", ruled, ruledOut)
	}
}

// TestDetachedEgressWithCachedNextHop: a cached next hop names an interface that has just left the
// redirect map. A frame caught between the two (the entry gone, the cache not yet invalidated) is
// dropped and counted (DROP_TX_GONE), never aborted; once the store has detached the interface (which
// invalidates every cached next hop), the FIB is asked again and the kernel gets the packet.
func TestDetachedEgressWithCachedNextHop(t *testing.T) {
	defer testsupport.OnOneCPU(t)()
	objs, _, f := loadWithCache(t, time.Minute, "end_dx4") // leaves through tb0
	defer objs.Close()
	tb0, err := net.InterfaceByName("tb0")
	if err != nil {
		t.Fatal(err)
	}
	run := func(what, wantAction, reason string, wantOut []byte) {
		t.Helper()
		before, _ := rig.ReasonCount(reason)
		res, err := rig.Run(objs.Seg6xXdp, f, 1)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := rig.ReasonCount(reason)
		if dataplane.Actions[res.Action] != wantAction || (wantOut != nil && !bytes.Equal(res.Output, wantOut)) {
			t.Fatalf("%s: %s, want %s (output %x)", what, dataplane.Actions[res.Action], wantAction, res.Output)
		}
		if reason != "" && after != before+1 {
			t.Fatalf("%s: %s counted %d times, want 1", what, reason, after-before)
		}
	}
	run("first frame (fills the cache)", "XDP_REDIRECT", "", f.Output)
	run("cached", "XDP_REDIRECT", "", f.Output)

	// The redirect entry disappears under a cached next hop.
	idx := uint32(tb0.Index)
	if err := dataplane.MapsOf(rig.Store).TxPorts.Delete(idx); err != nil {
		t.Fatal(err)
	}
	run("tx port gone, cache still naming it", "XDP_DROP", "DROP_TX_GONE", nil)
	if err := dataplane.MapsOf(rig.Store).TxPorts.Put(idx, idx); err != nil {
		t.Fatal(err)
	}

	// Detaching through the store removes the entry and invalidates the cache: the FIB is asked again.
	if _, err := rig.Store.Commit([]state.Op{{Kind: model.OpDelete, Interface: &model.Interface{Name: "tb0"}}}, false); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := rig.Store.Commit([]state.Op{{Kind: model.OpReplace, Interface: &model.Interface{Name: "tb0"}}}, false); err != nil {
			t.Error(err)
		}
	}()
	run("after the store detached tb0", "XDP_PASS", "PASS_TX_NOT_ATTACHED", nil)
}

// nhSlot is bpf/fwd.h nh_slot_of for an IPv6 lookup in the main table without ports, with the
// protocol proto and the packet's first word first (version, traffic class, flow label; what End
// asks): the tests below pick inputs that share a slot with it, and check it against the map.
func nhSlot(ifindex uint32, src, dst netip.Addr, first []byte, proto uint8) uint32 {
	rotl := func(x uint32, n int) uint32 { return x<<n | x>>(32-n) }
	flowinfo := binary.LittleEndian.Uint32(first) &^ 0xF0                  // the version nibble is not asked
	h := ifindex*0x85EBCA6B ^ (10 | uint32(proto)<<8) ^ rotl(flowinfo, 11) // table 0, AF_INET6
	s, d := src.As16(), dst.As16()
	for i := 0; i < 4; i++ {
		h ^= rotl(binary.LittleEndian.Uint32(d[4*i:]), 5*i+1) ^ rotl(binary.LittleEndian.Uint32(s[4*i:]), 5*i+16)
	}
	h ^= h >> 16
	h *= 0x85EBCA6B
	h ^= h >> 13
	h *= 0xC2B2AE35
	h ^= h >> 16
	return h & (nhCacheSlots - 1)
}

const nhCacheSlots = 4096 // bpf/consts.h NH_CACHE_SLOTS

// TestNextHopCacheSlotKeepsItsKey: the next-hop cache is direct-mapped (one slot per hash of the
// lookup's inputs), so two lookups can share a slot. Two End packets whose next SIDs share one and
// are routed to different neighbors, alternating on one CPU: each leaves to its own neighbor (a slot
// answers only for the whole key it holds).
func TestNextHopCacheSlotKeepsItsKey(t *testing.T) {
	defer testsupport.OnOneCPU(t)()
	ip := func(args ...string) {
		t.Helper()
		testsupport.MustRun(t, "ip", args...)
	}
	ip("-6", "neigh", "replace", "fc00:12::3", "lladdr", "02:00:00:00:01:33", "dev", "fab0", "nud", "permanent")
	ip("-6", "route", "add", "fc00:3:77::/48", "via", "fc00:12::3", "dev", "fab0")
	defer func() {
		_ = exec.Command("ip", "-6", "route", "del", "fc00:3:77::/48").Run()
		_ = exec.Command("ip", "-6", "neigh", "del", "fc00:12::3", "dev", "fab0").Run()
	}()
	objs, _, f := loadWithCache(t, time.Minute, "end")
	defer objs.Close()
	fab0, err := net.InterfaceByName("fab0")
	if err != nil {
		t.Fatal(err)
	}
	src, next := netip.MustParseAddr("fc00:9::1"), netip.MustParseAddr("fc00:3::64") // the fixture's
	first := f.Input[14:18]                                                          // its outer first word
	// Next SIDs a in fc00:3::/48 (the fixture's neighbor) and b in fc00:3:77::/48 (02:..:01:33) that
	// share a slot.
	var a, b netip.Addr
	seen := map[uint32]netip.Addr{}
	for i := 1; i < 1<<16 && !b.IsValid(); i++ {
		x, y := next.As16(), next.As16()
		x[14], x[15] = byte(i>>8), byte(i)
		y[4], y[5], y[14], y[15] = 0, 0x77, byte(i>>8), byte(i)
		seen[nhSlot(uint32(fab0.Index), src, netip.AddrFrom16(x), first, 43)] = netip.AddrFrom16(x)
		if o, ok := seen[nhSlot(uint32(fab0.Index), src, netip.AddrFrom16(y), first, 43)]; ok {
			a, b = o, netip.AddrFrom16(y)
		}
	}
	if !b.IsValid() {
		t.Fatal("no two next SIDs share a slot")
	}
	frame := func(sid netip.Addr, peer []byte) (in, out []byte) {
		n, s := next.As16(), sid.As16()
		in = bytes.ReplaceAll(f.Input, n[:], s[:])
		out = bytes.ReplaceAll(f.Output, n[:], s[:])
		if peer != nil {
			out = append(append([]byte(nil), peer...), out[6:]...)
		}
		return in, out
	}
	aIn, aOut := frame(a, nil)
	bIn, bOut := frame(b, []byte{0x02, 0, 0, 0, 0x01, 0x33})
	run := func(what string, in, want []byte) { t.Helper(); redirected(t, objs, f, what, in, want) }
	run("next SID "+a.String()+" (fills the slot)", aIn, aOut)
	// The model above is the program's: the slot it names holds a's lookup now.
	var slots []dataplane.Seg6xNhCacheSlot
	if err := objs.NhCache.Lookup(nhSlot(uint32(fab0.Index), src, a, first, 43), &slots); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range slots {
		found = found || s.Key.Dst == a.As16()
	}
	if !found {
		t.Fatalf("slot %d does not hold the lookup for %s: nhSlot no longer models bpf/fwd.h nh_slot_of", nhSlot(uint32(fab0.Index), src, a, first, 43), a)
	}
	for i := 0; i < 2; i++ {
		run("next SID "+b.String()+" (the same slot)", bIn, bOut)
		run("next SID "+a.String()+" again", aIn, aOut)
	}
}
