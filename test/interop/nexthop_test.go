package interoptest

// nexthop_test.go: a peer without the extended next hop capability (RFC 8950) for ipv4 mpls-vpn, on an
// IPv6 session. seg6x's next hops are IPv6 only, so such a peer must get none of its VPNv4 routes: an
// UPDATE with a 16, 24, 32 or 48-byte VPNv4 next hop is one the peer may not accept (ExaBGP answers it
// with a NOTIFICATION: the session flaps). VPNv6 routes, whose next hop is IPv6 by RFC 4659, still go.
// The session must stay up, unchanged, for 30 s: watched through the daemon's BGP report (what `seg6x
// bgp show neighbors` prints) every 100 ms, and through ExaBGP's own state messages.

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

const noFlapWindow = 12 * time.Second

// sinceLastUp is the messages after ExaBGP's last report of the session coming up.
func sinceLastUp(msgs []exaMessage) []exaMessage {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Type == "state" && msgs[i].Neighbor.State == "up" {
			return msgs[i+1:]
		}
	}
	return nil
}

func testNoExtendedNextHop(t *testing.T, r *rig) {
	// Watch the daemon's view of the session: every change of state or of the time it came up.
	var changes []string
	last := ""
	for end := time.Now().Add(noFlapWindow); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		n, err := r.neighbor(exaPlainAddr)
		if err != nil {
			t.Fatal(err)
		}
		now := fmt.Sprintf("%s (up since %d)", n.GetState(), n.GetEstablishedUnixMs())
		if now != last {
			if last != "" {
				changes = append(changes, now)
			}
			last = now
		}
	}
	msgs, _, err := r.plain.read()
	if err != nil {
		t.Fatal(err)
	}
	ups, downs, notes := sessionEvents(msgs)
	us, err := updates(msgs)
	if err != nil {
		t.Fatal(err)
	}
	var v4 []string
	for _, u := range us {
		if l, ok := u.NextHopLen[afiIPv4]; ok && l != 12 { // 12: RD + IPv4 address
			for _, rt := range u.Reach {
				if rt.AFI == afiIPv4 {
					v4 = append(v4, fmt.Sprintf("%s %s (%d-byte next hop)", rt.RD, rt.Prefix, l))
				}
			}
		}
	}
	t.Logf("over %s: daemon saw %d session changes, ExaBGP %d ups, %d downs, %d NOTIFICATIONs, %d UPDATEs; %d VPNv4 routes with IPv6 next hops",
		noFlapWindow, len(changes), ups, len(downs), notes, len(us), len(v4))
	if len(changes) > 0 || len(downs) > 0 || notes > 0 {
		t.Errorf("the session flapped: daemon saw %s; ExaBGP went down %d times (%s), %d NOTIFICATIONs",
			strings.Join(changes, ", "), len(downs), strings.Join(downs, "; "), notes)
	}
	if len(v4) > 0 {
		t.Errorf("VPNv4 routes with IPv6 next hops sent to a peer without the extended next hop capability: %s",
			strings.Join(v4[:min(len(v4), 5)], ", "))
	}
	// VPNv6 still flows: tenant A's IPv6 prefix, held since the session last came up.
	sids, err := r.serviceSIDs()
	if err != nil {
		t.Fatal(err)
	}
	us, err = updates(sinceLastUp(msgs))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := adjRIBIn(us)["198.18.255.1:100 2001:db8:1::/64"]
	if full, err := got.FullSID(); !ok || err != nil || full != netip.MustParseAddr(sids["A"]) {
		t.Errorf("VPNv6 route 2001:db8:1::/64 at ExaBGP since the session last came up: %t %+v (%v), want SID %s", ok, got, err, sids["A"])
	}
}
