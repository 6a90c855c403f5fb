package labtest

// fabric_test.go: the fabric lab (`seg6x-lab up --fabric`): two parallel 9000-byte uplinks per hop
// with every locator routed over both (ECMP), tenant A's access ports at 9000 bytes and tenant B's at
// 1500. The checked bulk TCP transfers each way for both tenants; flows spread over both links of
// each hop; 8000-byte pings (don't fragment) between tenant A's hosts over IPv4 and IPv6, every reply's
// bytes compared by ping, forwarded by the fast path as multi-buffer frames.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/tools/lab"
)

func TestLabFabric(t *testing.T) {
	t.Parallel()
	const count, flows = 5, 64
	l, rep := labTraffic(t, "s6j", lab.Options{Fabric: true}, count)
	for _, p := range rep.Problems() {
		t.Error(p)
	}
	if len(rep.Flows) != 4 || len(rep.Bulk) != 2 {
		t.Fatalf("%d flows, %d bulk transfers; want 4 and 2", len(rep.Flows), len(rep.Bulk))
	}
	for _, dev := range []string{"w", "w2", "e", "e2"} {
		if out, err := l.IP("p", "link", "show", dev); err != nil || !strings.Contains(out, fmt.Sprintf("mtu %d", lab.JumboMTU)) {
			t.Fatalf("p's fabric link %s: %q (%v), want MTU %d", dev, out, err, lab.JumboMTU)
		}
	}
	if out, err := l.Seg6x("pe1", "show", "routes"); err != nil || strings.Count(out, "fab,fab2") != 3 {
		t.Errorf("pe1's routes should each name both uplinks (fab,fab2):\n%s (%v)", out, err)
	}

	// Flows spread: 64 UDP datagrams from hA1 to hA2, each from a socket of its own (its own source
	// port, so its own flow label). Each link of each hop must carry at least an eighth of them (a
	// path pinned to one link gives the other none; a fair spread falls below 8 of 64 about once in
	// 10^9 runs).
	frames := func(dev, dir string) uint64 {
		out, err := l.Exec("p", "cat", "/sys/class/net/"+dev+"/statistics/"+dir+"_packets")
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := map[string]uint64{"w": frames("w", "rx"), "w2": frames("w2", "rx"), "e": frames("e", "tx"), "e2": frames("e2", "tx")}
	if out, err := l.Exec("hA1", "bash", "-c", fmt.Sprintf("for i in $(seq 1 %d); do echo x > /dev/udp/198.18.2.2/$((5000+i)); done", flows)); err != nil {
		t.Fatalf("hA1's flows: %v\n%s", err, out)
	}
	after := map[string]uint64{"w": frames("w", "rx"), "w2": frames("w2", "rx"), "e": frames("e", "tx"), "e2": frames("e2", "tx")}
	for _, pair := range [][2]string{{"w", "w2"}, {"e", "e2"}} {
		a, b := after[pair[0]]-before[pair[0]], after[pair[1]]-before[pair[1]]
		t.Logf("%d flows: %s %d frames, %s %d", flows, pair[0], a, pair[1], b)
		if a+b < flows || a < flows/8 || b < flows/8 {
			t.Errorf("%d flows over %s and %s: %d and %d frames, want both >= %d", flows, pair[0], pair[1], a, b, flows/8)
		}
	}

	redirects := redirected(t, l, "p")
	for _, c := range []struct{ from, to string }{
		{"hA1", "198.18.2.2"}, {"hA2", "198.18.1.2"}, {"hA1", "2001:db8:2::2"}, {"hA2", "2001:db8:1::2"},
	} {
		out, err := l.Exec(c.from, "ping", "-c", "3", "-i", "0.2", "-W", "2", "-M", "do", "-s", "8000", c.to)
		if err != nil || !strings.Contains(out, " 3 received") || strings.Contains(out, "wrong") {
			t.Errorf("%s -> %s, 8000 bytes, don't fragment: %v\n%s", c.from, c.to, err, out)
		}
	}
	// p's End forwarded them in XDP (12 echo requests and replies of 8,000 bytes and more).
	if got := redirected(t, l, "p") - redirects; got < 24 {
		t.Errorf("p redirected %d frames during the jumbo pings, want >= 24", got)
	}
}

// redirected is node's XDP_REDIRECT count.
func redirected(t *testing.T, l *lab.Lab, node string) uint64 {
	return stats(t, l, node).Actions["XDP_REDIRECT"].GetPackets()
}
