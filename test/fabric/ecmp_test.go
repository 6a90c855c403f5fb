package fabrictest

// ecmp_test.go: 256 tenant flows over the two uplinks, under the daemon, with the next-hop cache on
// (its default) and off, under the IPv6 multipath hash policies 0 (L3: addresses and flow label) and 1
// (L4): each uplink carries 35-65% of the flows, and every frame of a flow takes one uplink.

import (
	"testing"
	"time"

	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestFlowsSpreadOverUplinks(t *testing.T) {
	const flows, perFlow = 256, 4
	for _, cache := range []string{"1000", "0"} {
		t.Run("nexthop-cache-ms-"+cache, func(t *testing.T) {
			f := up(t, "--nexthop-cache-ms", cache)
			for _, policy := range []string{"0", "1"} {
				if err := testsupport.Sysctl(f.pe, "net.ipv6.fib_multipath_hash_policy="+policy); err != nil {
					t.Fatal(err)
				}
				if cache != "0" {
					time.Sleep(1100 * time.Millisecond) // cached next hops follow the hash policy within the cache time
				}
				f.drain(50 * time.Millisecond)
				for seq := 0; seq < perFlow; seq++ {
					for flow := 0; flow < flows; flow++ {
						if err := f.sendFrame(f.frame(flow, seq)); err != nil {
							t.Fatal(err)
						}
					}
				}
				got := f.drain(300 * time.Millisecond)
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
