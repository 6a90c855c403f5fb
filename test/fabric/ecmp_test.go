package fabrictest

// ecmp_test.go: 256 tenant flows over the two uplinks, under the daemon, with the next-hop cache on
// (its default, on the shared topology) and off, under the IPv6 multipath hash policies 1 (L4) and 0
// (L3: addresses and flow label, the default, which the shared topology is left with): each uplink
// carries 35-65% of the flows, and every frame of a flow takes one uplink. The topology with the cache
// off is built while the other's cache follows the change of hash policy.

import (
	"testing"
	"time"

	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestFlowsSpreadOverUplinks(t *testing.T) {
	const flows, perFlow = 256, 4
	parent := t
	var off *fabric // the topology with the cache off, until the test's end
	upOff := func(t *testing.T) {
		if off == nil || off.gone { // none yet, or taken down with a failed subtest
			off = build(t, false, 0, []string{"--nexthop-cache-ms", "0"})
			parent.Cleanup(func() { off.end(parent) })
		}
	}
	for _, cache := range []string{"1000", "0"} {
		t.Run("nexthop-cache-ms-"+cache, func(t *testing.T) {
			var f *fabric
			if cache == "1000" {
				f = shared(t, 0) // its daemon runs with --nexthop-cache-ms 1000 (sharedArgs)
			} else {
				upOff(t)
				f, off.t = off, t
			}
			for _, policy := range []string{"1", "0"} {
				if err := testsupport.Sysctl(f.pe, "net.ipv6.fib_multipath_hash_policy="+policy); err != nil {
					t.Fatal(err)
				}
				if cache != "0" && f.sent.Load() {
					// Cached next hops follow the hash policy within the cache time (nothing is cached
					// before the topology's first frame): meanwhile, the other topology.
					followed := time.Now().Add(1100 * time.Millisecond)
					upOff(t)
					time.Sleep(time.Until(followed))
				}
				f.drain(50 * time.Millisecond)
				for seq := 0; seq < perFlow; seq++ {
					for flow := 0; flow < flows; flow++ {
						if err := f.sendFrame(f.frame(flow, seq)); err != nil {
							t.Fatal(err)
						}
					}
				}
				got := f.drainUntil(flows * perFlow)
				per := map[string]int{}
				pathOf := map[int]string{}
				for _, a := range got {
					per[a.uplink]++
					if p, ok := pathOf[a.flow]; ok && p != a.uplink {
						t.Fatalf("hash policy %s: flow %d took both uplinks", policy, a.flow)
					}
					pathOf[a.flow] = a.uplink
				}
				t.Logf("hash policy %s, cache %s ms: %d of %d frames arrived, u1 %d, u2 %d (flows: %d)", policy, cache,
					len(got), flows*perFlow, per["u1"], per["u2"], len(pathOf))
				if len(got) != flows*perFlow {
					t.Fatalf("hash policy %s: %d of %d frames arrived", policy, len(got), flows*perFlow)
				}
				for _, u := range uplinks {
					if per[u]*100 < len(got)*35 || per[u]*100 > len(got)*65 {
						t.Fatalf("hash policy %s: %s carried %d of %d frames, not 35-65%%", policy, u, per[u], len(got))
					}
				}
			}
		})
	}
}
