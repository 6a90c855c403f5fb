package fuzz

// frames_test.go: the fuzz run. Three phases over one generator: the program as loaded by default;
// the program with the next-hop cache on; the same with every redirect-map entry gone under the
// cached next hops (as between a detach and the cache invalidation).

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/pktfuzz"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// The rig's kernel routes (tools/fixtures/topology.go) the configuration does not name, and its
// hosts with neighbor entries (so that decapsulated packets also reach a next hop, and ports' MTUs).
var (
	kernel6 = []string{"fc00:5::/48", "fc00:6::/48", "fc00:7::/48", "fc00:8::/48", "fc00:b::/48", "fc00:12::/64",
		"2001:db8:a::/64", "2001:db8:9::/64", "fc00:2:1::/48", "fc00:f::/64", "2001:db8:a::2/128", "2001:db8:9::2/128"}
	kernel4 = []string{"198.18.1.0/24", "198.18.9.0/24", "198.18.1.2/32", "198.18.9.2/32"}
	devs    = []string{"fab0", "ta0", "tb0", "tc0", "big0", "tf0"}
	fabric  = []string{"fab0", "big0", "tf0"} // fab0 and tf0 by role, big0 by default (role auto, no tenant on it)
)

func prefixes(ss []string) []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range ss {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}

func TestFuzzFrames(t *testing.T) {
	n := envInt("SEG6X_FUZZ_FRAMES", 50000)
	seed := envInt("SEG6X_FUZZ_SEED", 1)
	cfg, err := fixtures.Config()
	if err != nil {
		t.Fatal(err)
	}
	target := pktfuzz.TargetOf(cfg, devs, fabric, prefixes(kernel6), prefixes(kernel4))
	target.VX = vxSetup(t)
	target.Frags = rxFragsDevs(t)
	g := pktfuzz.New(int64(seed), target)

	// One CPU: the next-hop cache is per CPU, and the cached phase must hit what it filled.
	defer testsupport.OnOneCPU(t)()

	cached, err := dataplane.LoadObjects(rig.Dir, dataplane.ProgramOptions{NextHopCache: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer cached.Close()

	tl := newTally()
	plain, jumbo, withCache := n*5/10, n/10, n*3/10
	if err := phase("plain", rig.Objs.Seg6xXdp, g, plain, tl); err != nil {
		t.Fatal(err)
	}
	// A jumbo fabric and jumbo tenant ports: multi-buffer frames are forwarded, not only refused.
	restoreMTU, err := fixtures.JumboLinks()
	if err == nil {
		g.SetFrags(rxFragsDevs(t)) // as the daemon updates rx_frags after an MTU change
		err = phase("jumbo links", rig.Objs.Seg6xXdp, g, jumbo, tl)
	}
	if rerr := restoreMTU(); rerr != nil {
		t.Error(rerr)
	}
	g.SetFrags(rxFragsDevs(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := phase("nh-cache", cached.Seg6xXdp, g, withCache, tl); err != nil {
		t.Fatal(err)
	}
	// Plugin SIDs, most running a hostile plugin: whatever it returns or does to the frame, seg6x
	// drops it (counted) or sends it out well formed.
	if err := withPluginSIDs(t, g, func() error {
		return phase("plugin SIDs", rig.Objs.Seg6xXdp, g, n/20, tl)
	}); err != nil {
		t.Fatal(err)
	}
	restore, err := removeTxPorts()
	if err != nil {
		t.Fatal(err)
	}
	err = phase("nh-cache, tx ports gone", cached.Seg6xXdp, g, n-plain-jumbo-withCache-n/20, tl)
	if rerr := restore(); rerr != nil {
		t.Error(rerr)
	}
	if err != nil {
		t.Fatal(err)
	}

	t.Logf("seed %d\n%s", seed, tl.report())
	if tl.failed > 0 {
		t.Errorf("%d frames failed the oracle; the first ones:\n%s", tl.failed, strings.Join(tl.failures, "\n"))
	}
	// The run must have reached the paths it is meant to exercise, or it proves nothing.
	for _, want := range []string{"XDP_REDIRECT", "XDP_DROP", "XDP_PASS"} {
		if tl.actions[want] == 0 {
			t.Errorf("no frame ended in %s", want)
		}
	}
	if n >= 20000 {
		for _, want := range []string{"DROP_BOUNDARY_SID", "DROP_BOUNDARY_LOCATOR", "DROP_BOUNDARY_SRH", "DROP_SID_SOURCE",
			"DROP_BAD_IPV4_CSUM", "DROP_TX_GONE", "DROP_SRH_SL_BEYOND", "DROP_TOO_MANY_EXTHDRS", "PASS_IPV4_OPTIONS",
			"PASS_FRAGMENT", "PASS_SRH_TLV", "PASS_TTL", "DROP_DECAP_SL_NONZERO", "DROP_BAD_INNER",
			"DROP_MULTIBUF_HEADERS", "PASS_MULTIBUF", "DROP_PLUGIN", "DROP_PLUGIN_ABORT", "DROP_PLUGIN_VERDICT",
			"DROP_PLUGIN_MALFORMED", "PASS_PLUGIN"} {
			if tl.reasons[want] == 0 {
				t.Errorf("no frame was counted under %s", want)
			}
		}
	}
	if n >= 50000 { // rarer: frames larger than a tunnel (the generator's sizes reach them now and then)
		for _, want := range []string{"ICMP_TOO_BIG", "DROP_TOO_BIG", "DROP_DECAP_TOO_BIG", "SLOW_FRAGMENT"} {
			if tl.reasons[want] == 0 {
				t.Errorf("no frame was counted under %s", want)
			}
		}
	}
	// Rarest (about 10 in a million): a decapsulated packet too big for a tenant port with a gateway,
	// from a unicast source, with DF, to a host with a neighbor entry.
	if n >= 1000000 && tl.reasons["SLOW_DECAP_ICMP"] == 0 {
		t.Errorf("no frame was counted under SLOW_DECAP_ICMP")
	}
}

// rxFragsDevs brings the rig's rx_frags entries up to date with the links' MTUs, as the daemon does
// when links change, and returns the devices in it.
func rxFragsDevs(t *testing.T) []string {
	t.Helper()
	ifs := rig.Store.Interfaces()
	if _, err := dataplane.RefreshMultiBuf(rig.Dir, ifs); err != nil {
		t.Fatal(err)
	}
	var devs []string
	for _, it := range ifs {
		var v uint32
		if dataplane.MapsOf(rig.Store).RxFrags.Lookup(uint32(it.Ifindex), &v) == nil {
			devs = append(devs, it.Name)
		}
	}
	return devs
}

// removeTxPorts deletes every redirect-map entry behind the program's back (the next-hop cache is
// not told) and returns what puts them back.
func removeTxPorts() (func() error, error) {
	m := dataplane.MapsOf(rig.Store).TxPorts
	var k, v uint32
	saved := map[uint32]uint32{}
	it := m.Iterate()
	for it.Next(&k, &v) {
		saved[k] = v
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	for k := range saved {
		if err := m.Delete(k); err != nil {
			return nil, err
		}
	}
	return func() error {
		for k, v := range saved {
			if err := m.Put(k, v); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// withPluginSIDs runs fn with plugin SIDs on the rig, made through its store: the hostile test plugin
// on five SIDs (two with the tenant blue's table, so that DT verdicts decapsulate) and the tutorial's
// ttlgate on one, which the generator aims at instead of the other SIDs; then removes them.
func withPluginSIDs(t *testing.T, g *pktfuzz.Gen, fn func() error) error {
	hostile := testsupport.BuildPlugin(t, "testdata/plugins/hostile.c")
	gate := testsupport.BuildPlugin(t, "../../plugins/ttlgate.c")
	ops := []state.Op{{Kind: model.OpAdd, Plugin: &model.Plugin{Name: "hostile", Object: hostile}},
		{Kind: model.OpAdd, Plugin: &model.Plugin{Name: "gate", Object: gate}}}
	var sids []netip.Addr
	for i := 1; i <= 6; i++ {
		sd := &model.SID{SID: netip.MustParseAddr(fmt.Sprintf("fc00:1::fe:%d", i)), Action: "plugin", Plugin: "hostile"}
		if i <= 2 {
			sd.Tenant = "blue"
		}
		if i == 6 {
			sd.Plugin, sd.Tenant, sd.Config = "gate", "blue", map[string]string{"min_ttl": "32"}
		}
		ops = append(ops, state.Op{Kind: model.OpAdd, SID: sd})
		sids = append(sids, sd.SID)
	}
	if _, err := rig.Store.Commit(ops, false); err != nil {
		return err
	}
	before := g.SIDs()
	g.SetSIDs(sids)
	for _, a := range sids {
		pluginSIDs[a] = true
	}
	err := fn()
	clear(pluginSIDs)
	g.SetSIDs(before)
	var dels []state.Op
	for _, a := range sids {
		dels = append(dels, state.Op{Kind: model.OpDelete, SID: &model.SID{SID: a}})
	}
	dels = append(dels, state.Op{Kind: model.OpDelete, Plugin: &model.Plugin{Name: "hostile"}},
		state.Op{Kind: model.OpDelete, Plugin: &model.Plugin{Name: "gate"}})
	if _, derr := rig.Store.Commit(dels, false); derr != nil && err == nil {
		err = derr
	}
	return err
}
