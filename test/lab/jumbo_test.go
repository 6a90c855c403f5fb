package labtest

// jumbo_test.go: the lab on a 9000-byte fabric, tenant A's access ports at 9000 bytes and tenant B's at
// 1500: the checked bulk TCP transfers each way for both tenants, and 8000-byte pings (don't fragment)
// between tenant A's hosts over IPv4 and IPv6, every reply's bytes compared by ping, forwarded by the
// fast path as multi-buffer frames.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/lab"
)

func TestLabJumbo(t *testing.T) {
	const count = 5
	l, rep := labTraffic(t, "s6j", lab.Options{Jumbo: true}, count)
	for _, p := range rep.Problems() {
		t.Error(p)
	}
	if len(rep.Flows) != 4 || len(rep.Bulk) != 2 {
		t.Fatalf("%d flows, %d bulk transfers; want 4 and 2", len(rep.Flows), len(rep.Bulk))
	}
	if out, err := l.IP("p", "link", "show", "w"); err != nil || !strings.Contains(out, fmt.Sprintf("mtu %d", lab.JumboMTU)) {
		t.Fatalf("p's fabric link: %q (%v), want MTU %d", out, err, lab.JumboMTU)
	}
	before := redirected(t, l, "p")
	for _, c := range []struct{ from, to string }{
		{"hA1", "198.18.2.2"}, {"hA2", "198.18.1.2"}, {"hA1", "2001:db8:2::2"}, {"hA2", "2001:db8:1::2"},
	} {
		out, err := l.Exec(c.from, "ping", "-c", "3", "-i", "0.2", "-W", "2", "-M", "do", "-s", "8000", c.to)
		if err != nil || !strings.Contains(out, " 3 received") || strings.Contains(out, "wrong") {
			t.Errorf("%s -> %s, 8000 bytes, don't fragment: %v\n%s", c.from, c.to, err, out)
		}
	}
	// p's End forwarded them in XDP (12 echo requests and replies of 8,000 bytes and more).
	if got := redirected(t, l, "p") - before; got < 24 {
		t.Errorf("p redirected %d frames during the jumbo pings, want >= 24", got)
	}
}

// redirected is node's XDP_REDIRECT count.
func redirected(t *testing.T, l *lab.Lab, node string) uint64 {
	return stats(t, l, node).Actions["XDP_REDIRECT"].GetPackets()
}
