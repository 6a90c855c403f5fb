package fabrictest

// failures_test.go: 4 tenant flows at 1000 frames/s each (2 hashed to each uplink) while a link or a
// neighbor fails and comes back. For each case: at most 200 frames lost from the moment the kernel can
// know of the failure (the event itself for link, carrier and route changes; the neighbor entry turning
// FAILED or INCOMPLETE for a neighbor that changed its MAC or went silent), every flow still arriving at
// the end, and both uplinks carrying flows again after recovery. Counts, not timings, are asserted; the
// neighbor timers of pe's uplinks are shortened (topo.go) so that a probe fails within seconds. Each
// case streams only as long as it needs: until every flow arrives, the failure and its 2 s, until both
// uplinks carry flows again, until every flow arrives after that.

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/seg6x/seg6x/tools/testsupport"
)

const (
	flowRate     = 1000 // frames/s per flow
	maxLossKnown = 200  // frames lost in all, from when the kernel can know
	steadyFrames = 100  // frames of every flow that arrive before a failure, and after recovery
)

// pickFlows returns 2 flows hashed to each uplink.
func pickFlows(t *testing.T, f *fabric) []int {
	t.Helper()
	f.drain(50 * time.Millisecond)
	for flow := 0; flow < 64; flow++ {
		if err := f.sendFrame(f.frame(flow, 0)); err != nil {
			t.Fatal(err)
		}
	}
	on := map[string][]int{}
	for _, a := range f.drainUntil(64) {
		if len(on[a.uplink]) < 2 {
			on[a.uplink] = append(on[a.uplink], a.flow)
		}
	}
	if len(on["u1"]) < 2 || len(on["u2"]) < 2 {
		t.Fatalf("64 flows did not give 2 on each uplink: %v", on)
	}
	return append(on["u1"], on["u2"]...)
}

// neighborFailed returns a channel that receives the time at which pe's entry for gw on dev turns
// FAILED or INCOMPLETE, once, after it is called.
func neighborFailed(t *testing.T, f *fabric, gw, dev string) <-chan time.Time {
	t.Helper()
	h, err := netns.GetFromName(f.pe)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan netlink.NeighUpdate, 256)
	done := make(chan struct{})
	if err := netlink.NeighSubscribeAt(h, ch, done); err != nil {
		h.Close()
		t.Fatal(err)
	}
	var ifindex int
	if err := testsupport.InNetns(f.pe, func() error {
		it, err := net.InterfaceByName(dev)
		if err == nil {
			ifindex = it.Index
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	out := make(chan time.Time, 1)
	want := net.ParseIP(gw)
	go func() {
		defer h.Close()
		for u := range ch {
			if u.LinkIndex == ifindex && u.IP.Equal(want) && u.State&(netlink.NUD_FAILED|netlink.NUD_INCOMPLETE) != 0 {
				out <- time.Now()
				close(done)
				for range ch { // until the subscription ends
				}
				return
			}
		}
	}()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			close(done)
		}
	})
	return out
}

// failure is one case: fail does the failure and returns when the kernel can know of it; restore
// undoes it (nil: nothing to undo).
type failure struct {
	name    string
	fail    func(t *testing.T, f *fabric, s *stream) time.Time
	restore func(t *testing.T, f *fabric, s *stream)
}

func pe(t *testing.T, f *fabric, args ...string) {
	t.Helper()
	if _, err := testsupport.IP(f.pe, args...); err != nil {
		t.Fatal(err)
	}
}

func peer(t *testing.T, f *fabric, args ...string) {
	t.Helper()
	if _, err := testsupport.IP(f.p, args...); err != nil {
		t.Fatal(err)
	}
}

// waitKnown waits for the neighbor failure to be known (at most limit). The kernel reference may never
// probe a neighbor no flow of its uses: then the limit's end counts as known.
func waitKnown(t *testing.T, f *fabric, ch <-chan time.Time, limit time.Duration, what string) time.Time {
	t.Helper()
	select {
	case at := <-ch:
		return at
	case <-time.After(limit):
		if f.kernel {
			t.Logf("%s: pe's neighbor entry did not turn FAILED or INCOMPLETE within %v", what, limit)
			return time.Now()
		}
		t.Fatalf("%s: pe's neighbor entry did not turn FAILED or INCOMPLETE within %v", what, limit)
	}
	return time.Time{}
}

// failures are the cases, in the order they run. The two neighbor cases each wait for the kernel's
// periodic probe of managed neighbor entries (every 5 s, net.ipv6.neigh.default.interval_probe_time_ms,
// host-wide) to find the failure and again to resolve the neighbor after it; they run first and last
// so that the other three, which need no probe, fill the wait of the last for its first probe.
var failures = []failure{
	{
		name: "a neighbor changes its MAC without announcing it",
		fail: func(t *testing.T, f *fabric, s *stream) time.Time {
			known := neighborFailed(t, f, "fc00:a1::2", "u1a")
			peer(t, f, "link", "set", "u1b", "address", "02:00:00:00:a1:99")
			return waitKnown(t, f, known, 60*time.Second, "MAC change")
		},
	},
	{
		name: "link down and up on the node",
		fail: func(t *testing.T, f *fabric, s *stream) time.Time {
			pe(t, f, "link", "set", "u1a", "down")
			return time.Now()
		},
		restore: func(t *testing.T, f *fabric, s *stream) { pe(t, f, "link", "set", "u1a", "up") },
	},
	{
		name: "carrier loss at the peer and back",
		fail: func(t *testing.T, f *fabric, s *stream) time.Time {
			peer(t, f, "link", "set", "u1b", "down")
			return time.Now()
		},
		restore: func(t *testing.T, f *fabric, s *stream) { peer(t, f, "link", "set", "u1b", "up") },
	},
	{
		name: "a route replace removes a next hop",
		fail: func(t *testing.T, f *fabric, s *stream) time.Time {
			pe(t, f, "-6", "route", "replace", "fc00:2::/48", "via", "fc00:a2::2", "dev", "u2a")
			return time.Now()
		},
		restore: func(t *testing.T, f *fabric, s *stream) { f.ecmpRoute() },
	},
	{
		name: "a neighbor stops answering",
		fail: func(t *testing.T, f *fabric, s *stream) time.Time {
			known := neighborFailed(t, f, "fc00:a1::2", "u1a")
			peer(t, f, "-6", "addr", "del", "fc00:a1::2/64", "dev", "u1b")
			s.deadFrom("u1") // a silent neighbor is a dead one: what still reaches it is lost
			return waitKnown(t, f, known, 60*time.Second, "silent neighbor")
		},
		restore: func(t *testing.T, f *fabric, s *stream) {
			peer(t, f, "-6", "addr", "add", "fc00:a1::2/64", "dev", "u1b", "nodad")
			s.aliveFrom("u1")
		},
	},
}

func TestFailuresLoseLittleAndRecover(t *testing.T) {
	f := shared(t, 0)
	uplinkSysctlsSet(t, f)
	runFailures(t, f, pickFlows(t, f), true)
}

// uplinkSysctlsSet waits (up to 5 s: the daemon's keeper runs once a second) for the settings the
// daemon makes on pe: ignore_routes_with_linkdown on the attached uplinks, fib_multipath_use_neigh.
func uplinkSysctlsSet(t *testing.T, f *fabric) {
	t.Helper()
	want := []string{"net.ipv4.fib_multipath_use_neigh"}
	for _, u := range uplinks {
		want = append(want, "net.ipv4.conf."+u+"a.ignore_routes_with_linkdown", "net.ipv6.conf."+u+"a.ignore_routes_with_linkdown")
	}
	for _, name := range want {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			out, err := testsupport.NetnsExec(f.pe, "sysctl", "-n", name)
			if err == nil && strings.TrimSpace(out) == "1" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the daemon did not set %s=1 on pe within 5 s (%q, %v)", name, out, err)
			}
		}
	}
}

// The same on a jumbo fabric (every link 9000) with tenant packets of 8,000 bytes: multi-buffer frames
// in XDP, steered around the same failures.
func TestFailuresOnJumboFabric(t *testing.T) {
	f := shared(t, jumboMTU)
	f.payload = 8000 - 28
	t.Cleanup(func() { f.payload = 0 })
	runFailures(t, f, pickFlows(t, f), true)
}

// TestFailuresKernelReference runs the same cases through the kernel's own seg6 encapsulation (no
// seg6x) and reports what it loses, for docs/fabric.md; it asserts only that the kernel forwarded the
// flows before each failure. It runs when SEG6X_FABRIC_KERNEL is set (2 minutes).
func TestFailuresKernelReference(t *testing.T) {
	if os.Getenv("SEG6X_FABRIC_KERNEL") == "" {
		t.Skip("set SEG6X_FABRIC_KERNEL=1 to measure the kernel's own seg6 in the failure cases")
	}
	f := upKernel(t)
	runFailures(t, f, []int{0, 1, 2, 3}, false)
}

// runFailures runs every failure case with a stream of flows; strict: assert the bounds (seg6x),
// else report only (the kernel).
func runFailures(t *testing.T, f *fabric, flows []int, strict bool) {
	for _, c := range failures {
		t.Run(c.name, func(t *testing.T) {
			s := f.startStream(flows, flowRate, 90*time.Second)
			s.waitFlows(steadyFrames, time.Time{}, 10*time.Second) // steady: every flow arriving (checked below)
			began := time.Now()
			known := c.fail(t, f, s)
			time.Sleep(2 * time.Second) // the failure lasts
			restored := time.Now()
			if c.restore != nil {
				c.restore(t, f, s)
				restored = time.Now()
			}
			// Recovery: both uplinks carry flows again.
			var per map[string]int
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if per = s.since(restored.Add(100 * time.Millisecond)); per["u1"] > 0 && per["u2"] > 0 {
					break
				}
			}
			end := time.Now()
			// Traffic after recovery: every flow arriving again (a blackholed flow does not: checked below).
			s.waitFlows(steadyFrames, end, 10*time.Second)
			r := s.finish()
			if r.err != nil {
				t.Fatal(r.err)
			}
			if sent := r.sentBetween(began.Add(-time.Second), began); sent == 0 || r.lostBetween(began.Add(-time.Second), began) == sent {
				t.Fatalf("%s: of %d frames sent in the second before the failure none arrived", c.name, sent)
			}
			after := r.lost(known)
			t.Logf("%s: %d frames sent, %d lost in all, %d lost from when the kernel could know (%v after the failure began); recovered in %v; after recovery u1 %d, u2 %d",
				c.name, len(r.sentAt)*len(flows), r.lost(time.Time{}), after, known.Sub(began).Round(time.Millisecond), end.Sub(restored).Round(time.Millisecond), per["u1"], per["u2"])
			if !strict {
				for _, u := range uplinks {
					out, _ := testsupport.IP(f.p, "-s", "link", "show", u+"b")
					t.Logf("p's %sb: %s", u, out)
				}
				return
			}
			if per["u1"] == 0 || per["u2"] == 0 {
				t.Errorf("%s: after recovery u1 carried %d frames, u2 %d: not both", c.name, per["u1"], per["u2"])
			}
			if after > maxLossKnown {
				t.Errorf("%s: %d frames lost from when the kernel could know, more than %d", c.name, after, maxLossKnown)
			}
			for fl, at := range r.lastArrival() {
				if at.Before(end) {
					t.Errorf("%s: flow %d's last frame arrived at %v, before recovery ended: blackholed", c.name, fl, fmt.Sprint(at.Format("15:04:05.000")))
				}
			}
		})
	}
}
