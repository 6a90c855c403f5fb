package packet

// ecmparound_test.go: every IPv6 lookup of the fast path steers a flow whose next hop has no usable
// neighbor to another next hop of its multipath route (fwd.h fib6_around) instead of handing it to
// the kernel: End.T (its table), decapsulation into a tenant table (End.DT6), VXLAN towards its remote
// VTEP, and the answer found is kept in the next-hop cache like any other, so later packets of the flow
// are not looked up again.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// aroundCase is a fixture whose lookup goes to a route made multipath for the test.
type aroundCase struct {
	fixture string
	label   func(in []byte) int // offset of the IPv6 header whose flow label the lookup hashes
	flow    func(i int) []byte  // or: flow i's frame, arriving on dev
	dev     string
	setup   []string // `ip` lines making the route multipath (undone by undo)
	undo    []string
	dead    []string // `ip` lines removing the second next hop's neighbor
	mac2    []byte   // destination MAC via the first next hop
	mac3    []byte   // via the second
	nhCache bool     // the lookup's answers are kept in nh_cache (VXLAN's in vx_nh)
	policy  string   // net.ipv6.fib_multipath_hash_policy for the case ("": as it is)
}

// outerLabel is the outer IPv6 header's offset of an untagged frame.
func outerLabel(in []byte) int { return 14 }

// innerLabel is the inner IPv6 header's offset of an untagged SRv6 frame (after the SRH, if any).
func innerLabel(in []byte) int {
	off := 14 + 40
	if in[14+6] == 43 {
		off += 8 * (int(in[off+1]) + 1)
	}
	return off
}

// flowsThrough runs n flows of c's fixture (its hashed flow label varied) through prog and counts the
// flows that left via each next hop; every one must be redirected.
func flowsThrough(t *testing.T, prog *ebpf.Program, f *fixtures.Fixture, c aroundCase, n int) (via2, via3 int) {
	t.Helper()
	for i := 0; i < n; i++ {
		g := *f
		if c.flow != nil {
			g = fixtures.Fixture{Name: c.fixture, Dev: c.dev, Input: c.flow(i)}
		} else {
			g.Input = append([]byte(nil), f.Input...)
			off := c.label(g.Input)
			label := binary.BigEndian.Uint32(g.Input[off:])&0xFFF00000 | uint32(i*0x9E37+1)&0xFFFFF
			binary.BigEndian.PutUint32(g.Input[off:], label)
		}
		before := reasonCounts(t)
		res, err := rig.Run(prog, &g, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := dataplane.Actions[res.Action]; got != "XDP_REDIRECT" {
			t.Fatalf("%s flow %d: %s (%v), want XDP_REDIRECT", c.fixture, i, got, reasonsMoved(t, before))
		}
		switch {
		case bytes.Equal(res.Output[:6], c.mac2):
			via2++
		case bytes.Equal(res.Output[:6], c.mac3):
			via3++
		default:
			t.Fatalf("%s flow %d left to %x, neither next hop", c.fixture, i, res.Output[:6])
		}
	}
	return via2, via3
}

// freshVia counts the next-hop cache slots of m filled under the current nh_gen with destination mac,
// on the CPU that has the most.
func freshVia(t *testing.T, m *ebpf.Map, mac []byte) int {
	t.Helper()
	var gen uint64
	if err := dataplane.MapsOf(rig.Store).NhGen.Lookup(uint32(0), &gen); err != nil {
		t.Fatal(err)
	}
	perCPU := map[int]int{}
	var k uint32
	var vals []dataplane.Seg6xNhCacheSlot
	it := m.Iterate()
	for it.Next(&k, &vals) {
		for cpu, v := range vals {
			if v.Nh.Gen == uint32(gen) && bytes.Equal(v.Nh.Dmac[:], mac) {
				perCPU[cpu]++
			}
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range perCPU {
		n = max(n, c)
	}
	return n
}

func TestECMPAroundDeadNextHop(t *testing.T) {
	const flows = 64
	vxSetup(t)
	for _, c := range []aroundCase{
		{
			fixture: "end_t", label: outerLabel, mac2: macVia2, mac3: macVia3, nhCache: true,
			setup: []string{"-6 neigh replace fc00:12::3 lladdr 02:00:00:00:01:33 dev fab0 nud permanent",
				"-6 route replace fc00:5::/48 table 200 nexthop via fc00:12::2 dev fab0 nexthop via fc00:12::3 dev fab0"},
			undo: []string{"-6 route replace fc00:5::/48 via fc00:12::2 dev fab0 table 200", "-6 neigh del fc00:12::3 dev fab0"},
			dead: []string{"-6 neigh del fc00:12::3 dev fab0"},
		},
		{
			fixture: "end_dt6_vlan", label: innerLabel,
			mac2: []byte{2, 0, 0, 0, 0x0a, 0x02}, mac3: []byte{2, 0, 0, 0, 0x0a, 0x33},
			setup: []string{"-6 neigh replace 2001:db8:a::3 lladdr 02:00:00:00:0a:33 dev ta0 nud permanent",
				"-6 route replace 2001:db8:a::/64 table 100 nexthop via 2001:db8:a::2 dev ta0 onlink nexthop via 2001:db8:a::3 dev ta0 onlink"},
			undo:    []string{"-6 route replace 2001:db8:a::/64 dev ta0 table 100", "-6 neigh del 2001:db8:a::3 dev ta0"},
			dead:    []string{"-6 neigh del 2001:db8:a::3 dev ta0"},
			nhCache: true,
		},
		{
			// VXLAN towards the remote VTEP fc00:b::1 (route fc00:b::/48 over big0): flows differ in
			// the inner UDP source port, hence in the outer one, which hash policy 1 spreads (the
			// device's flow label is one for all).
			fixture: "vxlan", dev: "tc0", policy: "1",
			flow: func(i int) []byte {
				return build(t, fmt.Sprintf("ipv4 198.18.1.2>198.18.2.2 udp %d>2000 len 64", 1000+i), vxHost, vxRMAC)
			},
			mac2: []byte{2, 0, 0, 0, 0x0d, 0x02}, mac3: []byte{2, 0, 0, 0, 0x0d, 0x33},
			setup: []string{"-6 neigh replace fc00:b0::3 lladdr 02:00:00:00:0d:33 dev big0 nud permanent",
				"-6 route replace fc00:b::/48 nexthop via fc00:b0::2 dev big0 nexthop via fc00:b0::3 dev big0"},
			undo: []string{"-6 route replace fc00:b::/48 via fc00:b0::2 dev big0", "-6 neigh del fc00:b0::3 dev big0"},
			dead: []string{"-6 neigh del fc00:b0::3 dev big0"},
		},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			defer testsupport.OnOneCPU(t)() // a subtest is its own goroutine: pin it, the cache is per CPU
			name := c.fixture
			if c.flow != nil {
				name = "end" // any fixture: only the program is wanted
			}
			cached, _, f := loadWithCache(t, time.Minute, name)
			defer cached.Close()
			if c.policy != "" {
				old, err := testsupport.Output("sysctl", "-n", "net.ipv6.fib_multipath_hash_policy")
				if err != nil {
					t.Fatal(err)
				}
				testsupport.MustRun(t, "sysctl", "-qw", "net.ipv6.fib_multipath_hash_policy="+c.policy)
				defer testsupport.MustRun(t, "sysctl", "-qw", "net.ipv6.fib_multipath_hash_policy="+strings.TrimSpace(old))
			}
			if err := testsupport.IPLines("", c.setup...); err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, l := range c.undo {
					_ = exec.Command("ip", strings.Fields(l)...).Run()
				}
				bumpNhGen(t)
			}()
			bumpNhGen(t)
			via2, via3 := flowsThrough(t, nil, f, c, flows)
			if via2 == 0 || via3 == 0 {
				t.Fatalf("both next hops up: %d flows via the first, %d via the second", via2, via3)
			}
			if err := testsupport.IPLines("", c.dead...); err != nil {
				t.Fatal(err)
			}
			bumpNhGen(t) // the daemon's answer to the neighbor change
			for _, prog := range []*ebpf.Program{nil, cached.Seg6xXdp, cached.Seg6xXdp} {
				if via2, via3 := flowsThrough(t, prog, f, c, flows); via2 != flows || via3 != 0 {
					t.Fatalf("second next hop without a neighbor: %d flows via the first, %d via the second", via2, via3)
				}
			}
			// Every flow's answer is cached, those found around the dead next hop too: more than the
			// flows hashed to the live one (slots may collide: direct-mapped, 4096 of them).
			if !c.nhCache {
				return
			}
			n := freshVia(t, cached.NhCache, c.mac2)
			t.Logf("%d of %d flows cached, %d of them hashed to the dead next hop", n, flows, via3)
			if n < flows-2 || n <= flows-via3 {
				t.Errorf("%d of %d flows have their next hop cached (%d were hashed to the dead one)", n, flows, via3)
			}
		})
	}
}

// reasonCounts are the reason counters as they are now.
func reasonCounts(t *testing.T) map[string]uint64 {
	t.Helper()
	m := map[string]uint64{}
	for _, r := range dataplane.ReasonTable {
		n, err := rig.ReasonCount(r.Name)
		if err != nil {
			t.Fatal(err)
		}
		m[r.Name] = n
	}
	return m
}

// reasonsMoved names the reasons counted since before.
func reasonsMoved(t *testing.T, before map[string]uint64) []string {
	t.Helper()
	var moved []string
	for name, n := range reasonCounts(t) {
		if n != before[name] {
			moved = append(moved, name)
		}
	}
	return moved
}
