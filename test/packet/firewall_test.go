package packet

// firewall_test.go: the shipped stateless firewall (plugins/firewall.c) on both hooks, loaded and
// configured through the store as operators do it (its settings encoded from the plugin's BTF).
// Each packet is checked by its exact bytes and return code: an allowed one comes out as End.DT46
// makes it (or as `then` says), a denied one is dropped under DROP_PLUGIN and the firewall's reason.
// The rules' conditions, first match, the default, the tenant, fragments, ICMP and IPv6 extension
// headers; the per-rule counters; new rules taking effect at once, in a new bind.

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/fixtures"
)

// The firewall's drop reasons (enum seg6x_plugin_reason) and its counter of the default.
const (
	fwDenied, fwNotIP = 1, 2
	fwDefault         = 12
)

// fwStats are the firewall's counters: its drops by reason (every SID), and the counters of its own
// that a SID's bind has (one per rule, then the default).
type fwStats struct {
	reasons []state.Counter
	own     []state.Counter
	bind    uint32
}

// fwRead reads the counters of the firewall and of its SID sid.
func fwRead(t *testing.T, sid string) fwStats {
	t.Helper()
	for _, sd := range rig.Store.SIDs() {
		if sd.SID == netip.MustParseAddr(sid) && sd.Bind != 0 {
			return fwReadBind(t, sd.Bind)
		}
	}
	t.Fatalf("SID %s has no bind", sid)
	return fwStats{}
}

// fwReadBind reads the counters of the firewall and those of its own in bind.
func fwReadBind(t *testing.T, bind uint32) fwStats {
	t.Helper()
	var info *state.PluginInfo
	plugins := rig.Store.Plugins()
	for i := range plugins {
		if plugins[i].Name == fwName {
			info = &plugins[i]
		}
	}
	if info == nil || info.Counters != fwDefault+1 {
		t.Fatalf("plugin %s: %+v, want one with %d counters", fwName, info, fwDefault+1)
	}
	ps, err := rig.Store.Observer().PluginStats([]uint32{info.Slot},
		[]state.PluginBind{{Bind: bind, Digest: info.Digest, Counters: info.Counters}})
	if err != nil {
		t.Fatal(err)
	}
	return fwStats{reasons: ps.Slots[info.Slot].Reasons, own: ps.Own[bind], bind: bind}
}

// fwDrops checks that f is dropped on both hooks, counted under DROP_PLUGIN and the firewall's
// reason (twice: XDP and tc).
func fwDrops(t *testing.T, f *fixtures.Fixture, sid string, reason int) {
	t.Helper()
	before := fwRead(t, sid).reasons[reason].Packets
	bothHooks(t, f, "XDP_DROP", "DROP_PLUGIN", nil)
	if got := fwRead(t, sid).reasons[reason].Packets - before; got != 2 {
		t.Errorf("%s: the firewall's reason %d counted %d times, want 2", f.Name, reason, got)
	}
}

// fwCase is one packet through the firewall with settings: allowed (End.DT46's bytes) or denied.
type fwCase struct {
	name     string
	settings string // key=value ..., as on the CLI
	fixture  string // end_dt46_v4 or end_dt46_v6
	edit     func([]byte) []byte
	deny     bool
}

// fwRun runs cases on one SID of the firewall, each with its own settings.
func fwRun(t *testing.T, sid string, cases []fwCase) {
	fwLoad(t, sid, "")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fwConfigure(t, sid, c.settings)
			f := fwPacket(t, c.fixture, sid, c.edit)
			if c.deny {
				fwDrops(t, f, sid, fwDenied)
			} else {
				bothHooks(t, f, f.Action, f.Reason, f.Output)
			}
		})
	}
}

// The End.DT46 fixtures: UDP 198.18.2.2:2000 > 198.18.1.2:1000, and [2001:db8:2::2]:3 > [2001:db8:a::2]:4.
const dt46v4, dt46v6 = "end_dt46_v4", "end_dt46_v6"

// An allowed packet is decapsulated into the SID's tenant table: the End.DT46 fixtures' bytes.
func TestFirewallAllowsIntoTheTenant(t *testing.T) {
	fwRun(t, "fc00:1::f:1", []fwCase{
		{"v4", "rules=1 rule.0.proto=17 dflt=deny", dt46v4, nil, false},
		{"v6", "rules=1 rule.0.proto=17 dflt=deny", dt46v6, nil, false},
	})
}

// Each condition denies the packets it matches, and only those.
func TestFirewallConditions(t *testing.T) {
	fwRun(t, "fc00:1::f:2", []fwCase{
		{"udp denied", "rules=1 rule.0.proto=17 rule.0.action=deny", dt46v4, nil, true},
		{"udp denied v6", "rules=1 rule.0.proto=17 rule.0.action=deny", dt46v6, nil, true},
		{"tcp rule, udp packet", "rules=1 rule.0.proto=6 rule.0.action=deny", dt46v4, nil, false},
		{"family 6, v4 packet", "rules=1 rule.0.family=6 rule.0.action=deny", dt46v4, nil, false},
		{"family 6, v6 packet", "rules=1 rule.0.family=6 rule.0.action=deny", dt46v6, nil, true},
		{"src4 in", "rules=1 rule.0.src4=198.18.2.0/24 rule.0.action=deny", dt46v4, nil, true},
		{"src4 out", "rules=1 rule.0.src4=198.18.3.0/24 rule.0.action=deny", dt46v4, nil, false},
		{"dst4 host", "rules=1 rule.0.dst4=198.18.1.2/32 rule.0.action=deny", dt46v4, nil, true},
		{"dst4 next host", "rules=1 rule.0.dst4=198.18.1.3/32 rule.0.action=deny", dt46v4, nil, false},
		{"src4 rule, v6 packet", "rules=1 rule.0.src4=32.0.0.0/8 rule.0.action=deny", dt46v6, nil, false}, // 2001: starts with 32
		{"dst6 in", "rules=1 rule.0.dst6=2001:db8:a::/48 rule.0.action=deny", dt46v6, nil, true},
		{"dst6 out", "rules=1 rule.0.dst6=2001:db8:b::/48 rule.0.action=deny", dt46v6, nil, false},
		{"src6 /47 in", "rules=1 rule.0.src6=2001:db8:2::/47 rule.0.action=deny", dt46v6, nil, true},
		{"src6 /47 out", "rules=1 rule.0.src6=2001:db8::/47 rule.0.action=deny", dt46v6, nil, false},
		{"src6 rule, v4 packet", "rules=1 rule.0.src6=c000::/2 rule.0.action=deny", dt46v4, nil, false}, // 198. starts with 0b11
		{"dport range in", "rules=1 rule.0.dport_lo=999 rule.0.dport_hi=1001 rule.0.action=deny", dt46v4, nil, true},
		{"dport range ends at it", "rules=1 rule.0.dport_lo=990 rule.0.dport_hi=1000 rule.0.action=deny", dt46v4, nil, true},
		{"dport range starts at it", "rules=1 rule.0.dport_lo=1000 rule.0.dport_hi=1010 rule.0.action=deny", dt46v4, nil, true},
		{"dport range below", "rules=1 rule.0.dport_lo=990 rule.0.dport_hi=999 rule.0.action=deny", dt46v4, nil, false},
		{"dport range above", "rules=1 rule.0.dport_lo=1001 rule.0.dport_hi=2000 rule.0.action=deny", dt46v4, nil, false},
		{"dport alone", "rules=1 rule.0.dport_lo=4 rule.0.action=deny", dt46v6, nil, true},
		{"dport alone, another", "rules=1 rule.0.dport_lo=5 rule.0.action=deny", dt46v6, nil, false},
		{"sport range", "rules=1 rule.0.sport_lo=1 rule.0.sport_hi=3 rule.0.action=deny", dt46v6, nil, true},
		{"sport is not dport", "rules=1 rule.0.sport_lo=1000 rule.0.action=deny", dt46v4, nil, false},
		{"all conditions", "rules=1 rule.0.family=4 rule.0.proto=17 rule.0.src4=198.18.2.2/32 rule.0.dst4=198.18.0.0/15 " +
			"rule.0.sport_lo=2000 rule.0.dport_lo=1000 rule.0.dport_hi=1000 rule.0.tenant=blue rule.0.action=deny", dt46v4, nil, true},
		{"all conditions but one", "rules=1 rule.0.family=4 rule.0.proto=17 rule.0.src4=198.18.2.2/32 rule.0.dst4=198.18.0.0/15 " +
			"rule.0.sport_lo=2001 rule.0.dport_lo=1000 rule.0.dport_hi=1000 rule.0.tenant=blue rule.0.action=deny", dt46v4, nil, false},
	})
}

// The first rule that matches decides; a packet no rule matches gets the default; rules beyond
// `rules` are not looked at.
func TestFirewallFirstMatchAndDefault(t *testing.T) {
	fwRun(t, "fc00:1::f:3", []fwCase{
		{"allow before deny", "rules=2 rule.0.proto=17 rule.1.proto=17 rule.1.action=deny", dt46v4, nil, false},
		{"deny before allow", "rules=2 rule.0.proto=17 rule.0.action=deny rule.1.proto=17", dt46v4, nil, true},
		{"deny before allow v6", "rules=2 rule.0.dport_lo=4 rule.0.action=deny rule.1.family=6", dt46v6, nil, true},
		{"no match, default deny", "rules=1 rule.0.proto=6 dflt=deny", dt46v4, nil, true},
		{"no match, default allow", "rules=1 rule.0.proto=6 rule.0.action=deny dflt=allow", dt46v4, nil, false},
		{"no rules, default deny", "dflt=deny", dt46v6, nil, true},
		{"no rules, default allow", "", dt46v6, nil, false},
		{"a rule not in use", "rules=1 rule.0.proto=6 rule.1.action=deny", dt46v4, nil, false},
		{"the 12th rule", "rules=12 rule.11.proto=17 rule.11.action=deny" + fwTCPRules(0, 11), dt46v4, nil, true},
	})
}

// fwTCPRules is the settings of rules from..to-1, each denying TCP to port 7000+i (none matches the
// fixtures' packets).
func fwTCPRules(from, to int) string {
	s := ""
	for i := from; i < to; i++ {
		s += fmt.Sprintf(" rule.%d.proto=6 rule.%d.dport_lo=%d rule.%d.action=deny", i, i, 7000+i, i)
	}
	return s
}

// A rule for a tenant matches on that tenant's SIDs only (the SID here is blue's).
func TestFirewallTenant(t *testing.T) {
	fwRun(t, "fc00:1::f:4", []fwCase{
		{"another tenant", "rules=1 rule.0.tenant=green rule.0.action=deny", dt46v4, nil, false},
		{"the SID's tenant", "rules=1 rule.0.tenant=blue rule.0.action=deny", dt46v4, nil, true},
		{"the SID's tenant v6", "rules=1 rule.0.tenant=blue rule.0.action=deny", dt46v6, nil, true},
	})
}

// A later fragment has no ports: a rule with a port condition does not match it, a protocol rule
// does. The first fragment has its ports.
func TestFirewallFragments(t *testing.T) {
	later4, first4 := ipv4Fragment(1, false), ipv4Fragment(0, true)
	later6, first6 := ipv6Ext(fragment6(1, false)), ipv6Ext(fragment6(0, true))
	fwRun(t, "fc00:1::f:5", []fwCase{
		{"v4 later, port rule", "rules=1 rule.0.dport_lo=1000 rule.0.action=deny", dt46v4, later4, false},
		{"v4 later, source port rule", "rules=1 rule.0.sport_lo=2000 rule.0.action=deny", dt46v4, later4, false},
		{"v4 later, protocol rule", "rules=1 rule.0.proto=17 rule.0.action=deny", dt46v4, later4, true},
		{"v4 first, port rule", "rules=1 rule.0.dport_lo=1000 rule.0.action=deny", dt46v4, first4, true},
		{"v6 later, port rule", "rules=1 rule.0.dport_lo=4 rule.0.action=deny", dt46v6, later6, false},
		{"v6 later, protocol rule", "rules=1 rule.0.proto=17 rule.0.action=deny", dt46v6, later6, true},
		{"v6 first, port rule", "rules=1 rule.0.dport_lo=4 rule.0.action=deny", dt46v6, first6, true},
	})
}

// ICMP and ICMPv6 by protocol; a port rule does not match them; an allowed echo is decapsulated.
func TestFirewallICMP(t *testing.T) {
	icmp4, icmp6 := ipv4Payload(1, icmpEcho, icmpCsum), ipv6Payload(58, icmp6Echo, icmpCsum)
	tcp4 := ipv4Payload(6, tcpTo22, tcpCsum)
	fwRun(t, "fc00:1::f:6", []fwCase{
		{"icmp denied", "rules=1 rule.0.proto=1 rule.0.action=deny", dt46v4, icmp4, true},
		{"icmp allowed", "rules=1 rule.0.proto=1 dflt=deny", dt46v4, icmp4, false},
		{"icmp, port rule", "rules=1 rule.0.dport_lo=0 rule.0.dport_hi=65535 rule.0.action=deny", dt46v4, icmp4, false},
		{"icmpv6 denied", "rules=1 rule.0.proto=58 rule.0.action=deny", dt46v6, icmp6, true},
		{"icmpv6 allowed", "rules=1 rule.0.proto=58 dflt=deny", dt46v6, icmp6, false},
		{"icmp rule, icmpv6 packet", "rules=1 rule.0.proto=1 rule.0.action=deny", dt46v6, icmp6, false},
		{"tcp to 22 denied", "rules=1 rule.0.proto=6 rule.0.dport_lo=22 rule.0.action=deny", dt46v4, tcp4, true},
		{"tcp to 22, udp rule", "rules=1 rule.0.proto=17 rule.0.dport_lo=22 rule.0.action=deny", dt46v4, tcp4, false},
	})
}

// The upper-layer protocol and ports of an IPv6 packet are found behind up to 4 extension headers.
func TestFirewallIPv6ExtensionHeaders(t *testing.T) {
	two := ipv6Ext(hopByHop, destOpts)
	four := ipv6Ext(hopByHop, destOpts, destOpts, destOpts)
	fwRun(t, "fc00:1::f:7", []fwCase{
		{"two, port rule", "rules=1 rule.0.proto=17 rule.0.dport_lo=4 rule.0.action=deny", dt46v6, two, true},
		{"two, allowed", "rules=1 rule.0.proto=17 rule.0.dport_lo=4 dflt=deny", dt46v6, two, false},
		{"four, port rule", "rules=1 rule.0.proto=17 rule.0.dport_lo=4 rule.0.action=deny", dt46v6, four, true},
		{"four, another port", "rules=1 rule.0.proto=17 rule.0.dport_lo=5 rule.0.action=deny", dt46v6, four, false},
	})
	t.Run("five: not_ip", func(t *testing.T) {
		five := ipv6Ext(hopByHop, destOpts, destOpts, destOpts, destOpts)
		fwConfigure(t, "fc00:1::f:7", "")
		fwDrops(t, fwPacket(t, dt46v6, "fc00:1::f:7", five), "fc00:1::f:7", fwNotIP)
	})
}

// An inner packet that is not IP is dropped as not_ip, whatever the rules say.
func TestFirewallNotIP(t *testing.T) {
	const sid = "fc00:1::f:8"
	fwLoad(t, sid, "")
	f := toSID(t, dt46v4, sid)
	f.Input[14+40] = 59 // the SRH's next header: no next header
	fwDrops(t, f, sid, fwNotIP)
}

// then: what an allowed packet does. end: End, which at the last segment hands it to the kernel,
// as the built-in End does; pass: to the kernel as it is. A denied packet is dropped whatever then says.
func TestFirewallThen(t *testing.T) {
	const sid = "fc00:1::f:9"
	fwLoad(t, sid, "then=end")
	builtin, err := rig.Run(nil, toSID(t, dt46v4, "fc00:1::1"), 1) // the built-in End at segments left 0
	if err != nil {
		t.Fatal(err)
	}
	if dataplane.Actions[builtin.Action] != "XDP_PASS" {
		t.Fatalf("the built-in End gives %s: the test expects a pass", dataplane.Actions[builtin.Action])
	}
	bothHooks(t, toSID(t, dt46v4, sid), "XDP_PASS", "PASS_LOCAL", nil)
	fwConfigure(t, sid, "then=pass")
	bothHooks(t, toSID(t, dt46v6, sid), "XDP_PASS", "PASS_PLUGIN", nil)
	fwConfigure(t, sid, "then=pass dflt=deny")
	fwDrops(t, toSID(t, dt46v6, sid), sid, fwDenied)
	fwConfigure(t, sid, "then=dt46")
	f := toSID(t, dt46v6, sid)
	bothHooks(t, f, f.Action, f.Reason, f.Output)
}

// Before the last segment the firewall acts as End and counts nothing, whatever its rules.
func TestFirewallBeforeTheLastSegment(t *testing.T) {
	const sid = "fc00:1::f:a"
	fwLoad(t, sid, "rules=1 rule.0.action=deny dflt=deny")
	before := fwRead(t, sid)
	f := toSID(t, "end", sid)
	bothHooks(t, f, f.Action, f.Reason, f.Output)
	after := fwRead(t, sid)
	for i := range after.own {
		if d := after.own[i].Packets - before.own[i].Packets; d != 0 {
			t.Errorf("counter %d counted %d packets, want none", i, d)
		}
	}
}

// Each packet is counted on the rule that decided it (its packets and bytes), or on the default;
// the denied ones under the reason denied too.
func TestFirewallCounters(t *testing.T) {
	const sid = "fc00:1::f:b"
	fwLoad(t, sid, "rules=12 dflt=deny rule.0.proto=6 rule.0.action=deny rule.1.proto=17 rule.1.dport_lo=1000 "+
		"rule.2.proto=1 rule.11.family=6 rule.11.proto=58"+fwTCPRules(3, 11))
	sends := []struct {
		f    *fixtures.Fixture
		rule int
		deny bool
	}{
		{fwPacket(t, dt46v4, sid, nil), 1, false},
		{fwPacket(t, dt46v6, sid, nil), fwDefault, true},
		{fwPacket(t, dt46v4, sid, ipv4Payload(6, tcpTo22, tcpCsum)), 0, true},
		{fwPacket(t, dt46v4, sid, ipv4Payload(1, icmpEcho, icmpCsum)), 2, false},
		{fwPacket(t, dt46v6, sid, ipv6Payload(58, icmp6Echo, icmpCsum)), 11, false},
		{fwPacket(t, dt46v4, sid, nil), 1, false},
	}
	before := fwRead(t, sid)
	want := make([]state.Counter, fwDefault+1)
	var denied uint64
	for _, s := range sends {
		if s.deny {
			bothHooks(t, s.f, "XDP_DROP", "DROP_PLUGIN", nil)
			denied += 2
		} else {
			bothHooks(t, s.f, s.f.Action, s.f.Reason, s.f.Output)
		}
		want[s.rule].Packets += 2
		want[s.rule].Bytes += 2 * uint64(len(s.f.Input))
	}
	after := fwRead(t, sid)
	for i := range want {
		got := state.Counter{Packets: after.own[i].Packets - before.own[i].Packets, Bytes: after.own[i].Bytes - before.own[i].Bytes}
		if got != want[i] {
			t.Errorf("counter %d: %+v, want %+v", i, got, want[i])
		}
	}
	if got := after.reasons[fwDenied].Packets - before.reasons[fwDenied].Packets; got != denied {
		t.Errorf("denied counted %d times, want %d", got, denied)
	}
	for _, p := range rig.Store.Plugins() {
		if p.Name == fwName && (p.CounterNames[0] != "rule0" || p.CounterNames[11] != "rule11" || p.CounterNames[fwDefault] != "dflt") {
			t.Errorf("the counters' names: %v", p.CounterNames)
		}
	}
}

// New rules, committed for the same SID, decide the next packet. They come in a new bind (the SID
// entry switches to it in one update, so a packet sees the old rules or the new ones), whose
// counters count what the new rules decide; the old bind counts no more.
func TestFirewallRulesReplaced(t *testing.T) {
	const sid = "fc00:1::f:c"
	fwLoad(t, sid, "rules=1 rule.0.proto=17 rule.0.action=deny")
	first := fwRead(t, sid)
	fwDrops(t, toSID(t, dt46v4, sid), sid, fwDenied)
	old := fwRead(t, sid)
	if got := old.own[0].Packets - first.own[0].Packets; got != 2 {
		t.Errorf("rule 0 counted %d packets, want 2", got)
	}

	fwConfigure(t, sid, "rules=2 rule.0.proto=6 rule.0.action=deny rule.1.proto=17")
	now := fwRead(t, sid)
	if now.bind == old.bind {
		t.Fatalf("the SID kept bind %d with new rules", old.bind)
	}
	f := toSID(t, dt46v4, sid)
	bothHooks(t, f, f.Action, f.Reason, f.Output)
	after := fwRead(t, sid)
	if got := after.own[1].Packets - now.own[1].Packets; got != 2 {
		t.Errorf("the new rule 1 counted %d packets, want 2", got)
	}
	if then := fwReadBind(t, old.bind).own; !slices.Equal(then, old.own) {
		t.Errorf("the old bind counted on after the switch: %v, then %v", old.own, then)
	}
}
