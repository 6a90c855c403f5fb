package daemontest

// policy_test.go: a named policy with three weighted segment lists, given to a running daemon with
// the CLI and named by the tenant's route: the flows spread over every list, one flow always on
// one list; marking a list down under traffic moves only that list's flows, at once, and loses no
// frame; marking it up again puts every flow back where it was.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestPolicyListDownUnderTraffic(t *testing.T) {
	lists := benchrig.SIDs(0, 3) // fc00:e::1 weight 2, ::2 and ::3 weight 1: one SID each
	r, d := setup(t, lists[:1])
	cli := func(args ...string) string {
		t.Helper()
		out, err := d.cli(args...)
		if err != nil {
			t.Fatalf("seg6x %v: %v\n%s", args, err, out)
		}
		return out
	}
	cli("policy", "add", "w3", "src", benchrig.EncapSrc().String(), "list", lists[0].String(), "weight", "2",
		"list", lists[1].String(), "list", lists[2].String())
	cli("route", "replace", "198.19.1.0/24", "tenant", "t", "policy", "w3")

	// Which list each of 24 flows takes: one short stream per flow, the sink told lists 0 and 1
	// apart; a frame it rejects must be list 2's.
	const nflows = 24
	flows := make([]int, nflows)
	for f := range flows {
		flows[f] = f
	}
	one := func(l int) []netip.Addr { return lists[l : l+1] }
	// 1000 frames (the rig's least) in 25 ms.
	listOf := func(f int) int {
		t.Helper()
		res, err := r.StreamFlows([]int{f}, []benchrig.Pattern{benchrig.EncapOutput(one(0)), benchrig.EncapOutput(one(1))},
			40000, 25*time.Millisecond, func() error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case res.Sent > 0 && res.Matched[0] == res.Sent:
			return 0
		case res.Sent > 0 && res.Matched[1] == res.Sent:
			return 1
		case res.Sent > 0 && res.Bad == res.Sent && len(res.LastBad) > 77 && res.LastBad[53] == 3 && res.LastBad[77] == 3:
			return 2
		}
		t.Fatalf("flow %d: sent %d, list 0 %d, list 1 %d, other %d (last %x)", f, res.Sent, res.Matched[0], res.Matched[1], res.Bad, res.LastBad)
		return -1
	}
	assign := func() []int {
		a := make([]int, nflows)
		for f := range a {
			a[f] = listOf(f)
		}
		return a
	}
	anyList := benchrig.AnyOneSIDList()
	// kept says whether every flow f with a[f] == l (for each l in ls) still takes list l: one stream
	// of 4000 frames per list, each of its flows picked at random for hundreds of them, every one of
	// which must be that list's. (assign tells, slowly, which flow went where.)
	kept := func(a []int, ls ...int) bool {
		t.Helper()
		for _, l := range ls {
			var on []int
			for f, x := range a {
				if x == l {
					on = append(on, f)
				}
			}
			pats, want := []benchrig.Pattern{benchrig.EncapOutput(one(0)), benchrig.EncapOutput(one(1))}, l
			if l == 2 {
				pats, want = []benchrig.Pattern{benchrig.EncapOutput(one(2)), anyList}, 0
			}
			res, err := r.StreamFlows(on, pats, 40000, 100*time.Millisecond, func() error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent == 0 || res.Matched[want] != res.Sent {
				t.Logf("the %d flows of list %d: sent %d, first pattern %d, second %d, rejected %d", len(on), l, res.Sent, res.Matched[0], res.Matched[1], res.Bad)
				return false
			}
		}
		return true
	}
	before := assign()
	count := func(a []int, l int) int {
		n := 0
		for _, x := range a {
			if x == l {
				n++
			}
		}
		return n
	}
	t.Logf("flows per list (weights 2/1/1): %d %d %d", count(before, 0), count(before, 1), count(before, 2))
	for l := range lists {
		if count(before, l) == 0 {
			t.Fatalf("no flow of %d on list %d: %v", nflows, l, before)
		}
	}
	if count(before, 0) <= count(before, 2) {
		t.Errorf("the weight-2 list has %d flows, the weight-1 list 2 has %d", count(before, 0), count(before, 2))
	}

	// Under traffic: list 2 down (once frames flow on every list, and until frames flow after it). The
	// sink's first pattern is list 2's output, the second any list's.
	res, err := streamWhile(r, flows, []benchrig.Pattern{benchrig.EncapOutput(one(2)), anyList}, 40000, time.Second, func() error {
		if err := flowing(d.d.Client, 4000); err != nil {
			return err
		}
		out, err := d.cli("policy", "down", "w3", "2")
		if err != nil {
			return fmt.Errorf("policy down: %v\n%s", err, out)
		}
		return flowing(d.d.Client, 4000)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("while list 2 went down: sent %d, list 2 %d, the others %d, wrong %d", res.Sent, res.Matched[0], res.Matched[1], res.Bad)
	if res.Good != res.Sent || res.Bad != 0 || res.Matched[0] == 0 || res.Matched[1] == 0 {
		t.Fatalf("sent %d, accepted %d (list 2 %d, others %d), rejected %d (last %x)", res.Sent, res.Good, res.Matched[0], res.Matched[1], res.Bad, res.LastBad)
	}
	// Nothing reaches list 2 any more (4000 frames, hundreds per flow).
	res, err = r.StreamFlows(flows, []benchrig.Pattern{benchrig.EncapOutput(one(2)), anyList}, 40000, 100*time.Millisecond, func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if res.Good != res.Sent || res.Bad != 0 || res.Matched[0] != 0 {
		t.Fatalf("list 2 down: sent %d, accepted %d, %d of them on list 2, rejected %d", res.Sent, res.Good, res.Matched[0], res.Bad)
	}
	// The flows of lists 0 and 1 stayed where they were.
	if !kept(before, 0, 1) {
		down := assign()
		for f := range flows {
			if before[f] != 2 && down[f] != before[f] {
				t.Errorf("flow %d moved from list %d to %d although its list stayed up", f, before[f], down[f])
			}
			if down[f] == 2 {
				t.Errorf("flow %d still on list 2, which is down", f)
			}
		}
		if !t.Failed() {
			t.Error("the flows of lists 0 and 1 together did not arrive as their lists' (above), though each alone does")
		}
	}
	var shown struct{ Policies []model.Policy }
	if err := json.Unmarshal([]byte(cli("policy", "show", "--json")), &shown); err != nil || len(shown.Policies) != 1 ||
		!slices.Equal([]bool{shown.Policies[0].Lists[0].Down, shown.Policies[0].Lists[1].Down, shown.Policies[0].Lists[2].Down}, []bool{false, false, true}) {
		t.Fatalf("policy show --json: %v %+v", err, shown)
	}
	if text := cli("policy", "show"); !strings.Contains(text, "list 2 "+lists[2].String()+" weight 1 DOWN") {
		t.Errorf("policy show:\n%s", text)
	}
	var routes []model.Route
	// The route names the policy; its tunnel MTU is that of the lists up: the egress every list
	// leaves by, its MTU minus IPv6 + an SRH of one SID.
	if err := json.Unmarshal([]byte(cli("show", "routes", "--json")), &routes); err != nil || len(routes) != 1 || routes[0].Policy != "w3" {
		t.Fatalf("show routes --json: %v %+v", err, routes)
	}
	var mtu int
	if err := testsupport.InNetns(r.DutNS(), func() error {
		ifi, err := net.InterfaceByName(routes[0].Egress)
		if err == nil {
			mtu = ifi.MTU
		}
		return err
	}); err != nil || routes[0].TunnelMTU != mtu-40-8-16 {
		t.Fatalf("route egress %q (%v, MTU %d), tunnel MTU %d", routes[0].Egress, err, mtu, routes[0].TunnelMTU)
	}

	if text := cli("show", "routes"); !strings.Contains(text, "w3") || !strings.Contains(text, fmt.Sprint(routes[0].TunnelMTU)) {
		t.Errorf("show routes lacks the policy or its tunnel MTU:\n%s", text)
	}

	// Up again: every flow back on its first list.
	cli("policy", "up", "w3", "2")
	if !kept(before, 0, 1, 2) {
		t.Fatalf("after list 2 came back: %v, before %v", assign(), before)
	}
}
