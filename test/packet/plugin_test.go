package packet

// plugin_test.go: plugin SIDs (bpf/plugin.h) on both hooks. Each verdict is carried out as the
// built-in behavior it names: a fixture of that behavior, sent to a plugin SID instead, comes out with
// the fixture's bytes. Drops, passes and aborts are counted under their reasons and the plugin's
// counters; bad verdicts, damaged frames, End towards an access port and an empty slot are refused;
// a slot is replaced in one update; multi-buffer frames go through whole. The loader refuses objects
// that are not plugins, that call helpers plugins may not use, and that the verifier refuses, and
// changes nothing then. The SIDs are written into the maps here (with their configuration bytes) as
// the control plane will: this file tests the data plane and the loader.

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// Verdicts (enum seg6x_verdict) and the test plugin's damages (testdata/plugins/verdicts.c).
const (
	vAbort, vDrop, vPass, vEnd, vDT4, vDT6, vDT46, vEncap = 0, 1, 2, 3, 4, 5, 6, 7
	damageNone, damageEthertype, damageInnerDst           = 0, 1, 2
)

// Slots the tests here use (none of the other tests loads plugins).
const (
	slotVerdicts = 10
	slotReplace  = 11
	slotEmpty    = 15
)

// verdictsCfg is the test plugin's struct seg6x_plugin_config.
func verdictsCfg(verdict int32, reason uint16, damage uint8, policy uint32) []byte {
	b := make([]byte, dataplane.PluginConfigMax)
	binary.LittleEndian.PutUint32(b[0:], uint32(verdict))
	binary.LittleEndian.PutUint16(b[4:], reason)
	b[6] = damage
	binary.LittleEndian.PutUint32(b[8:], policy)
	return b
}

// loadPlugin builds the plugin source and loads it into slot.
func loadPlugin(t *testing.T, src string, slot int) {
	t.Helper()
	p, err := dataplane.ReadPlugin(testsupport.BuildPlugin(t, src))
	if err != nil {
		t.Fatal(err)
	}
	if err := dataplane.LoadPlugin(rig.Dir, p, slot); err != nil {
		t.Fatal(err)
	}
}

// pluginSID is fixtures.Rig.PluginSID, failing t.
func pluginSID(t *testing.T, addr, like string, slot uint16, bind uint32, cfg []byte, policies ...uint32) {
	t.Helper()
	if err := rig.PluginSID(addr, like, slot, bind, cfg, policies...); err != nil {
		t.Fatal(err)
	}
}

// toSID is fixture name with its packet's destination (the SID it was sent to) replaced by sid.
func toSID(t *testing.T, name, sid string) *fixtures.Fixture {
	t.Helper()
	f, err := fixtures.ToSID(fixtures.Get(t, name), sid)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// setDst sets the outer IPv6 destination of an untagged frame.
func setDst(t *testing.T, frame []byte, addr string) {
	t.Helper()
	if binary.BigEndian.Uint16(frame[12:]) != 0x86DD {
		t.Fatalf("not an untagged IPv6 frame: %x", frame[:16])
	}
	a := netip.MustParseAddr(addr).As16()
	copy(frame[14+24:], a[:])
}

// counterSum is the sum over CPUs of a per-CPU counter map's key.
func counterSum(t *testing.T, m *ebpf.Map, key uint32) uint64 {
	t.Helper()
	var per []dataplane.Seg6xCounter
	if err := m.Lookup(key, &per); err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, c := range per {
		n += c.Packets
	}
	return n
}

// bothHooks runs f through XDP (runSplit: action, bytes, reason) and through tc (its return code, its
// bytes unless dropped, the reason; tcExpect says what tc does where XDP would answer or tag).
func bothHooks(t *testing.T, f *fixtures.Fixture, action, reason string, out []byte) {
	t.Helper()
	runSplit(t, vxCase{f.Name, f.Dev, f.Input, out, action, reason}, 0)
	g := *f
	g.Action, g.Reason, g.Output = action, reason, out
	if out == nil {
		g.Output = f.Input
	}
	code, tcOut, tcReason := tcExpect(&g)
	var before uint64
	if tcReason != "" {
		before, _ = rig.ReasonCount(tcReason)
	}
	res, err := rig.RunTC(&g, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != code {
		t.Errorf("%s: tc returned %d, want %d (%s)", f.Name, res.Action, code, tcReason)
	}
	if action != "XDP_DROP" && !bytes.Equal(res.Output, tcOut) {
		t.Errorf("%s: tc output differs\n got %x\nwant %x", f.Name, res.Output, tcOut)
	}
	if tcReason != "" {
		if after, _ := rig.ReasonCount(tcReason); after != before+1 {
			t.Errorf("%s: tc: %s counted %d times, want 1", f.Name, tcReason, after-before)
		}
	}
}

// Each continuing verdict does what the behavior it names does: the fixture's output, byte for byte.
func TestPluginVerdictsCarriedOut(t *testing.T) {
	loadPlugin(t, "testdata/plugins/verdicts.c", slotVerdicts)
	m := dataplane.MapsOf(rig.Store)
	var b6Entry dataplane.Seg6xSidEntry
	if err := m.Sids.Lookup(netip.MustParseAddr("fc00:1::7").As16(), &b6Entry); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fixture, like, sid string
		verdict            int32
		bind               uint32
	}{
		{"end", "fc00:1::1", "fc00:1::1:1", vEnd, 1},
		{"end_dt4_vlan", "fc00:1::64", "fc00:1::1:2", vDT4, 2},
		{"end_dt6_vlan", "fc00:1::67", "fc00:1::1:3", vDT6, 3},
		{"end_dt46_v4", "fc00:1::68", "fc00:1::1:4", vDT46, 4},
		{"end_dt46_v6", "fc00:1::68", "fc00:1::1:4", vDT46, 4},
		{"b6_encaps", "fc00:1::7", "fc00:1::1:5", vEncap, 5},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			pluginSID(t, c.sid, c.like, slotVerdicts, c.bind, verdictsCfg(c.verdict, 0, damageNone, b6Entry.Policy), b6Entry.Policy)
			before := counterSum(t, m.PluginStats, uint32(slotVerdicts*dataplane.PluginOutcomes+int(c.verdict)))
			sidBefore := counterSum(t, m.PluginSidStats, c.bind*uint32(dataplane.PluginOutcomes)+uint32(c.verdict))
			f := toSID(t, c.fixture, c.sid)
			bothHooks(t, f, f.Action, f.Reason, f.Output)
			if got := counterSum(t, m.PluginStats, uint32(slotVerdicts*dataplane.PluginOutcomes+int(c.verdict))) - before; got != 2 {
				t.Errorf("plugin_stats counted verdict %d %d times, want 2 (XDP and tc)", c.verdict, got)
			}
			if got := counterSum(t, m.PluginSidStats, c.bind*uint32(dataplane.PluginOutcomes)+uint32(c.verdict)) - sidBefore; got != 2 {
				t.Errorf("plugin_sid_stats counted verdict %d %d times, want 2", c.verdict, got)
			}
		})
	}
}

// Drops, passes, aborts and verdicts that do not exist or that the SID does not allow: each with its
// reason, and a drop also under the plugin's own reason.
func TestPluginVerdictsRefusedAndCounted(t *testing.T) {
	loadPlugin(t, "testdata/plugins/verdicts.c", slotVerdicts)
	m := dataplane.MapsOf(rig.Store)
	for _, c := range []struct {
		name, like string
		cfg        []byte
		action     string
		reason     string
		outcome    int
	}{
		{"drop", "fc00:1::1", verdictsCfg(vDrop, 7, damageNone, 0), "XDP_DROP", "DROP_PLUGIN", vDrop},
		{"pass", "fc00:1::1", verdictsCfg(vPass, 0, damageNone, 0), "XDP_PASS", "PASS_PLUGIN", vPass},
		{"abort", "fc00:1::1", verdictsCfg(vAbort, 0, damageNone, 0), "XDP_DROP", "DROP_PLUGIN_ABORT", vAbort},
		{"no such verdict", "fc00:1::1", verdictsCfg(42, 0, damageNone, 0), "XDP_DROP", "DROP_PLUGIN_VERDICT", int(dataplane.Seg6xPluginOutcomePLUGIN_O_BAD_VERDICT)},
		{"negative verdict", "fc00:1::1", verdictsCfg(-5, 0, damageNone, 0), "XDP_DROP", "DROP_PLUGIN_VERDICT", int(dataplane.Seg6xPluginOutcomePLUGIN_O_BAD_VERDICT)},
		{"DT without a tenant table", "", verdictsCfg(vDT46, 0, damageNone, 0), "XDP_DROP", "DROP_PLUGIN_VERDICT", int(dataplane.Seg6xPluginOutcomePLUGIN_O_BAD_VERDICT)},
		{"ENCAP into a policy not allowed", "fc00:1::1", verdictsCfg(vEncap, 0, damageNone, 1), "XDP_DROP", "DROP_PLUGIN_VERDICT", int(dataplane.Seg6xPluginOutcomePLUGIN_O_BAD_VERDICT)},
		{"ethertype damaged", "fc00:1::1", verdictsCfg(vEnd, 0, damageEthertype, 0), "XDP_DROP", "DROP_PLUGIN_MALFORMED", int(dataplane.Seg6xPluginOutcomePLUGIN_O_MALFORMED)},
	} {
		t.Run(c.name, func(t *testing.T) {
			const bind = 20
			pluginSID(t, "fc00:1::2:1", c.like, slotVerdicts, bind, c.cfg)
			key := uint32(slotVerdicts*dataplane.PluginOutcomes + c.outcome)
			before := counterSum(t, m.PluginStats, key)
			reasonKey := uint32(slotVerdicts*dataplane.PluginReasons + 7)
			reasonBefore := counterSum(t, m.PluginReasonStats, reasonKey)
			f := toSID(t, "end", "fc00:1::2:1")
			bothHooks(t, f, c.action, c.reason, nil)
			if got := counterSum(t, m.PluginStats, key) - before; got != 2 {
				t.Errorf("plugin_stats outcome %d counted %d times, want 2", c.outcome, got)
			}
			wantReason := uint64(0)
			if c.reason == "DROP_PLUGIN" {
				wantReason = 2
			}
			if got := counterSum(t, m.PluginReasonStats, reasonKey) - reasonBefore; got != wantReason {
				t.Errorf("the plugin's reason 7 counted %d times, want %d", got, wantReason)
			}
		})
	}
}

// End leaves by the fabric only: a segment list that leads out of an access port (ta0) is refused
// after a plugin, where the built-in End forwards it.
func TestPluginEndStaysInTheFabric(t *testing.T) {
	loadPlugin(t, "testdata/plugins/verdicts.c", slotVerdicts)
	f := fixtures.Get(t, "end")
	next := netip.MustParseAddr("2001:db8:b::2").As16()
	copy(f.Input[14+40+8:], next[:]) // segments[0]: the next segment, routed out of ta0
	builtin, err := rig.Run(nil, f, 1)
	if err != nil {
		t.Fatal(err)
	}
	if dataplane.Actions[builtin.Action] == "XDP_DROP" {
		t.Fatalf("the built-in End drops the packet: the test needs one it forwards")
	}
	pluginSID(t, "fc00:1::3:1", "fc00:1::1", slotVerdicts, 30, verdictsCfg(vEnd, 0, damageNone, 0))
	setDst(t, f.Input, "fc00:1::3:1")
	bothHooks(t, f, "XDP_DROP", "DROP_PLUGIN_BOUNDARY", nil)
}

// DT looks up the SID's tenant table whatever the plugin wrote: an inner destination rewritten to an
// address of another table's port (198.18.9.2, tb0 in the main table) is not sent there, exactly as
// the built-in End.DT4 treats a packet to that address.
func TestPluginDTStaysInTheTenant(t *testing.T) {
	loadPlugin(t, "testdata/plugins/verdicts.c", slotVerdicts)
	pluginSID(t, "fc00:1::4:1", "fc00:1::64", slotVerdicts, 40, verdictsCfg(vDT4, 0, damageInnerDst, 0))
	f := toSID(t, "end_dt4_vlan", "fc00:1::4:1")
	res, err := rig.Run(nil, f, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The built-in End.DT4 on the packet as the plugin left it (inner destination 198.18.9.2).
	g := fixtures.Get(t, "end_dt4_vlan")
	inner := 14 + 40 + 8 + 16*int(g.Input[14+40+4]+1) // the SRH's last entry + 1 segments
	copy(g.Input[inner+16:], []byte{198, 18, 9, 2})
	g.Input[inner+10], g.Input[inner+11] = 0, 0
	testsupport.FixIPv4Checksum(g.Input[inner : inner+20])
	want, err := rig.Run(nil, g, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != want.Action || !bytes.Equal(res.Output, want.Output) {
		t.Fatalf("after the plugin: %s %x\nbuilt-in End.DT4: %s %x", dataplane.Actions[res.Action], res.Output,
			dataplane.Actions[want.Action], want.Output)
	}
	if dataplane.Actions[res.Action] == "XDP_REDIRECT" {
		t.Fatalf("the rewritten packet was forwarded: %x", res.Output)
	}
}

// A SID whose slot holds no function drops its packets, counted as empty.
func TestPluginEmptySlot(t *testing.T) {
	m := dataplane.MapsOf(rig.Store)
	if err := dataplane.UnloadPlugin(rig.Dir, slotEmpty); err != nil {
		t.Fatal(err)
	}
	pluginSID(t, "fc00:1::5:1", "fc00:1::1", slotEmpty, 50, verdictsCfg(vEnd, 0, damageNone, 0))
	key := uint32(slotEmpty*dataplane.PluginOutcomes) + uint32(dataplane.Seg6xPluginOutcomePLUGIN_O_EMPTY)
	before := counterSum(t, m.PluginStats, key)
	bothHooks(t, toSID(t, "end", "fc00:1::5:1"), "XDP_DROP", "DROP_PLUGIN_ABORT", nil)
	if got := counterSum(t, m.PluginStats, key) - before; got != 2 {
		t.Errorf("empty slot counted %d times, want 2", got)
	}
}

// Loading into a slot that holds a function replaces it: the next packet runs the new one (the
// tutorial's ttlgate, which then drops it under its own reason, or decapsulates it).
func TestPluginReplacedInItsSlot(t *testing.T) {
	m := dataplane.MapsOf(rig.Store)
	loadPlugin(t, "testdata/plugins/verdicts.c", slotReplace)
	pluginSID(t, "fc00:1::6:1", "fc00:1::68", slotReplace, 60, verdictsCfg(vPass, 0, damageNone, 0))
	bothHooks(t, toSID(t, "end_dt46_v4", "fc00:1::6:1"), "XDP_PASS", "PASS_PLUGIN", nil)

	loadPlugin(t, "../../plugins/ttlgate.c", slotReplace)
	minTTL := make([]byte, dataplane.PluginConfigMax)
	minTTL[0] = 255 // every packet is below it
	pluginSID(t, "fc00:1::6:1", "fc00:1::68", slotReplace, 60, minTTL)
	lowTTL := uint32(slotReplace*dataplane.PluginReasons + 1)
	before := counterSum(t, m.PluginReasonStats, lowTTL)
	bothHooks(t, toSID(t, "end_dt46_v4", "fc00:1::6:1"), "XDP_DROP", "DROP_PLUGIN", nil)
	if got := counterSum(t, m.PluginReasonStats, lowTTL) - before; got != 2 {
		t.Errorf("ttlgate's low_ttl counted %d times, want 2", got)
	}
	minTTL[0] = 5
	pluginSID(t, "fc00:1::6:1", "fc00:1::68", slotReplace, 60, minTTL)
	f := toSID(t, "end_dt46_v4", "fc00:1::6:1")
	bothHooks(t, f, f.Action, f.Reason, f.Output)
}

// A 9000-byte frame through a plugin SID: decapsulated whole, as by End.DT46.
func TestPluginJumboFrame(t *testing.T) {
	jumboLinks(t)
	loadPlugin(t, "testdata/plugins/verdicts.c", slotVerdicts)
	pluginSID(t, "fc00:1::7:1", "fc00:1::68", slotVerdicts, 70, verdictsCfg(vDT46, 0, damageNone, 0))
	f := fixture(t, "end_dt46_v4", 8800)
	setDst(t, f.Input, "fc00:1::7:1")
	runJumbo(t, f, f.Action, f.Reason, 0)
}

// The loader refuses what is not a plugin, helpers a plugin may not call, and what the verifier
// refuses (with its message), and leaves the slot as it was.
func TestPluginLoaderRefuses(t *testing.T) {
	if _, err := dataplane.ReadPlugin(testsupport.BuildPlugin(t, "testdata/plugins/nosdk.c")); err == nil ||
		!strings.Contains(err.Error(), "plugin SDK") {
		t.Errorf("an object without the SDK: %v", err)
	}
	if _, err := dataplane.ReadPlugin(testsupport.BuildPlugin(t, "testdata/plugins/redirector.c")); err == nil ||
		!strings.Contains(err.Error(), "FnRedirect") {
		t.Errorf("a plugin calling bpf_redirect: %v", err)
	}
	if _, err := dataplane.ReadPlugin([]byte("not an ELF object")); err == nil {
		t.Error("garbage read as a plugin")
	}

	loadPlugin(t, "testdata/plugins/verdicts.c", slotVerdicts)
	pluginSID(t, "fc00:1::8:1", "fc00:1::1", slotVerdicts, 80, verdictsCfg(vPass, 0, damageNone, 0))
	p, err := dataplane.ReadPlugin(testsupport.BuildPlugin(t, "testdata/plugins/unbounded.c"))
	if err != nil {
		t.Fatal(err)
	}
	err = dataplane.LoadPlugin(rig.Dir, p, slotVerdicts)
	if err == nil || !strings.Contains(err.Error(), "verifier") || !strings.Contains(err.Error(), "invalid access to packet") {
		t.Fatalf("a plugin reading beyond its bounds: %v", err)
	}
	// The slot still runs the function it had.
	bothHooks(t, toSID(t, "end", "fc00:1::8:1"), "XDP_PASS", "PASS_PLUGIN", nil)
}

// Through the store, as every front end goes: a plugin loaded, a SID that runs it with its settings,
// the settings changed, the plugin replaced by another object, both removed; each step's packet as
// the SID's settings say.
func TestPluginThroughTheStore(t *testing.T) {
	gate := testsupport.BuildPlugin(t, "../../plugins/ttlgate.c")
	verdicts := testsupport.BuildPlugin(t, "testdata/plugins/verdicts.c")
	sid := netip.MustParseAddr("fc00:1::a:1")
	commit := func(ops ...state.Op) {
		t.Helper()
		if _, err := rig.Store.Commit(ops, false); err != nil {
			t.Fatal(err)
		}
	}
	sidOp := func(cfg map[string]string) state.Op {
		return state.Op{Kind: model.OpReplace, SID: &model.SID{SID: sid, Action: "plugin", Plugin: "gate", Tenant: "blue", Config: cfg}}
	}
	commit(state.Op{Kind: model.OpReplace, Plugin: &model.Plugin{Name: "gate", File: "ttlgate.o", Object: gate}},
		sidOp(map[string]string{"min_ttl": "5"}))
	t.Cleanup(func() {
		commit(state.Op{Kind: model.OpDelete, SID: &model.SID{SID: sid}}, state.Op{Kind: model.OpDelete, Plugin: &model.Plugin{Name: "gate"}})
	})
	f := toSID(t, "end_dt46_v4", sid.String())
	bothHooks(t, f, f.Action, f.Reason, f.Output)

	commit(sidOp(map[string]string{"min_ttl": "255"}))
	bothHooks(t, toSID(t, "end_dt46_v4", sid.String()), "XDP_DROP", "DROP_PLUGIN", nil)

	// Another object under the same name: the SID's settings must fit its layout.
	if _, err := rig.Store.Commit([]state.Op{{Kind: model.OpReplace, Plugin: &model.Plugin{Name: "gate", File: "verdicts.o", Object: verdicts}}}, false); err == nil ||
		!strings.Contains(err.Error(), "min_ttl") {
		t.Fatalf("replacing with a plugin whose settings differ: %v", err)
	}
	bothHooks(t, toSID(t, "end_dt46_v4", sid.String()), "XDP_DROP", "DROP_PLUGIN", nil) // unchanged
	commit(state.Op{Kind: model.OpReplace, Plugin: &model.Plugin{Name: "gate", File: "verdicts.o", Object: verdicts}},
		sidOp(map[string]string{"verdict": "2"}))
	bothHooks(t, toSID(t, "end_dt46_v4", sid.String()), "XDP_PASS", "PASS_PLUGIN", nil)

	// ENCAP into a named policy the SID's settings name (one segment list): End.B6.Encaps into it. A
	// policy its settings do not name is refused (TestPluginVerdictsRefusedAndCounted), and the named
	// one cannot be removed while the SID names it.
	east := &model.Policy{Name: "plugin-east", Src: netip.MustParseAddr("fc00:1::1"),
		Lists: []model.SegList{{Segs: []netip.Addr{netip.MustParseAddr("fc00:2::1"), netip.MustParseAddr("fc00:3::64")}}}}
	commit(state.Op{Kind: model.OpAdd, Policy: east}, sidOp(map[string]string{"verdict": "7", "policy": "plugin-east"}))
	t.Cleanup(func() { commit(state.Op{Kind: model.OpDelete, Policy: &model.Policy{Name: "plugin-east"}}) })
	f = toSID(t, "b6_encaps", sid.String())
	res, err := rig.Run(nil, f, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := res.Output
	if dataplane.Actions[res.Action] != "XDP_REDIRECT" || len(out) < 14+40+8+32 || binary.BigEndian.Uint16(out[12:]) != 0x86DD ||
		netip.AddrFrom16([16]byte(out[14+24:14+40])) != netip.MustParseAddr("fc00:2::1") ||
		netip.AddrFrom16([16]byte(out[14+8:14+24])) != netip.MustParseAddr("fc00:1::1") || out[14+6] != 43 {
		t.Fatalf("ENCAP into plugin-east: %s %x", dataplane.Actions[res.Action], out[:min(len(out), 96)])
	}
	if _, err := rig.Store.Commit([]state.Op{{Kind: model.OpDelete, Policy: &model.Policy{Name: "plugin-east"}}}, false); err == nil ||
		!strings.Contains(err.Error(), "plugin SID fc00:1::a:1 names it in its settings") {
		t.Fatalf("removing a policy a plugin SID names: %v", err)
	}
	commit(sidOp(map[string]string{"verdict": "2"}))

	// An object the verifier refuses: the commit fails with the verifier's message, nothing changes.
	gen := rig.Store.Gen()
	unbounded := testsupport.BuildPlugin(t, "testdata/plugins/unbounded.c")
	_, err = rig.Store.Commit([]state.Op{{Kind: model.OpAdd, Plugin: &model.Plugin{Name: "unbounded", Object: unbounded}}}, false)
	if err == nil || !strings.Contains(err.Error(), "the verifier refused it") || !strings.Contains(err.Error(), "invalid access to packet") {
		t.Fatalf("a plugin the verifier refuses: %v", err)
	}
	if rig.Store.Gen() != gen || len(rig.Store.Plugins()) != 1 {
		t.Fatalf("the refused load changed the state: %+v", rig.Store.Plugins())
	}
	bothHooks(t, toSID(t, "end_dt46_v4", sid.String()), "XDP_PASS", "PASS_PLUGIN", nil) // still the old function
}
