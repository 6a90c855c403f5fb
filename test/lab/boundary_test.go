package labtest

// boundary_test.go: tenant hosts attack the SR domain from their access ports while the tenants'
// own traffic runs: other tenants' and their own End.DX4/End.DT4 SIDs on their PE (with and without
// an SRH), the far PE's SIDs, the transit End SID, addresses inside the locators, and an SRH towards
// an address outside them. Nothing may arrive at any host (each watches its wire for the attack
// marker, tags and all), each attempt must be counted under its reason at the attacker's PE, and the
// tenants' traffic must keep flowing.

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/lab"
	"github.com/seg6x/seg6x/internal/testbin"
	"google.golang.org/protobuf/encoding/protojson"
)

func a6(s string) netip.Addr { return netip.MustParseAddr(s) }

func attacks() []lab.Attack {
	const (
		sid, loc, srh = "DROP_BOUNDARY_SID", "DROP_BOUNDARY_LOCATOR", "DROP_BOUNDARY_SRH"
	)
	tenantSrc, domainSrc := a6("2001:db8:a1::2"), a6("fc00:1::99")
	v1, v2 := a6("198.18.1.2"), a6("198.18.2.2")
	out := a6("2001:db8:ff::1")
	return []lab.Attack{
		// (a) the other tenant's SID on the attacker's own PE, (b) its own tenant's, without and with an SRH
		{From: "hA1", Src: tenantSrc, Dst: a6("fc00:1::b"), Victim: v1, Reason: sid},
		{From: "hA1", Src: tenantSrc, Dst: a6("fc00:1::b"), Segs: []netip.Addr{a6("fc00:1::b")}, Victim: v1, Reason: sid},
		{From: "hA1", Src: tenantSrc, Dst: a6("fc00:1::a"), Victim: v1, Reason: sid},
		{From: "hA1", Src: domainSrc, Dst: a6("fc00:1::a"), Segs: []netip.Addr{a6("fc00:1::a")}, Victim: v1, Reason: sid},
		{From: "hB1", Src: tenantSrc, Dst: a6("fc00:1::a"), Victim: v1, Reason: sid},
		{From: "hB1", Src: domainSrc, Dst: a6("fc00:1::a"), Segs: []netip.Addr{a6("fc00:1::a")}, Victim: v1, Reason: sid},
		{From: "hB1", Src: tenantSrc, Dst: a6("fc00:1::b"), Segs: []netip.Addr{a6("fc00:1::b")}, Victim: v1, Reason: sid},
		{From: "hA2", Src: tenantSrc, Dst: a6("fc00:3::b"), Victim: v2, Reason: sid},
		{From: "hA2", Src: tenantSrc, Dst: a6("fc00:3::a"), Segs: []netip.Addr{a6("fc00:3::a")}, Victim: v2, Reason: sid},
		// (c) the far PE's SIDs and the transit End SID
		{From: "hA1", Src: tenantSrc, Dst: a6("fc00:3::a"), Victim: v2, Reason: loc},
		{From: "hB1", Src: domainSrc, Dst: a6("fc00:3::b"), Victim: v2, Reason: loc},
		{From: "hA1", Src: tenantSrc, Dst: a6("fc00:2::1"), Segs: []netip.Addr{a6("fc00:3::b"), a6("fc00:2::1")}, SL: 1, Victim: v2, Reason: loc},
		{From: "hA2", Src: tenantSrc, Dst: a6("fc00:1::a"), Victim: v1, Reason: loc},
		// (d) inside the locators, not a SID (pe1's own loopback address among them)
		{From: "hA1", Src: tenantSrc, Dst: a6("fc00:1::1234"), Victim: v1, Reason: loc},
		{From: "hB1", Src: tenantSrc, Dst: a6("fc00:1::1"), Victim: v1, Reason: loc},
		{From: "hA2", Src: tenantSrc, Dst: a6("fc00:3::77"), Victim: v2, Reason: loc},
		// an SRH towards an address outside the locators
		{From: "hA1", Src: tenantSrc, Dst: out, Segs: []netip.Addr{a6("fc00:1::a"), out}, SL: 1, Victim: v1, Reason: srh},
		{From: "hA2", Src: tenantSrc, Dst: out, Segs: []netip.Addr{out}, Victim: v2, Reason: srh},
	}
}

// peOf names the PE each attacking host hangs off.
var peOf = map[string]string{"hA1": "pe1", "hB1": "pe1", "hA2": "pe2", "hB2": "pe2"}

func TestBoundary(t *testing.T) {
	bin := testbin.Seg6x(t)
	l := lab.New(fmt.Sprintf("s6b%d", os.Getpid()%100000), bin, testWriter{t})
	defer l.Down()
	if err := l.Up(); err != nil {
		t.Fatal(err)
	}
	const repeat = 3
	hosts := map[string]lab.Host{}
	for _, h := range lab.Hosts() {
		hosts[h.Name] = h
	}

	// Frames per attacking host, and the reasons each PE must count.
	frames := map[string][]string{}
	want := map[string]map[string]uint64{"pe1": {}, "pe2": {}, "p": {}}
	for i, a := range attacks() {
		f, err := a.Frame(hosts[a.From], i)
		if err != nil {
			t.Fatal(err)
		}
		frames[a.From] = append(frames[a.From], hex.EncodeToString(f))
		want[peOf[a.From]][a.Reason] += repeat
	}
	before := map[string]*pb.StatsReply{}
	for _, r := range []string{"pe1", "p", "pe2"} {
		before[r] = stats(t, l, r)
	}
	portsBefore := portCounters(t, l)

	// Every host watches its wire for the whole run.
	const watch = 20 * time.Second
	type sniffOut struct {
		host string
		out  []byte
		err  error
	}
	sniffs := make(chan sniffOut, len(hosts))
	for name := range hosts {
		go func() {
			out, err := exec.Command("ip", "netns", "exec", l.NS(name), bin, "lab", "sniff", "--dev", "eth0",
				"--duration", watch.String()).Output()
			sniffs <- sniffOut{name, out, err}
		}()
	}
	time.Sleep(time.Second) // sockets bound

	// Attacks and the tenants' own traffic at the same time.
	var wg sync.WaitGroup
	injectErr := make(chan error, len(frames))
	for host, fs := range frames {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"lab", "inject", "--dev", "eth0", "--count", strconv.Itoa(repeat)}
			for _, f := range fs {
				args = append(args, "--frame", f)
			}
			if out, err := l.Exec(host, append([]string{bin}, args...)...); err != nil {
				injectErr <- fmt.Errorf("%s: %v %s", host, err, out)
			}
		}()
	}
	rep, err := l.Traffic(3)
	wg.Wait()
	close(injectErr)
	for err := range injectErr {
		t.Error(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems() {
		t.Errorf("tenant traffic during the attacks: %s", p)
	}

	// Nothing arrived anywhere.
	for range hosts {
		s := <-sniffs
		if s.err != nil {
			t.Fatalf("sniff at %s: %v", s.host, s.err)
		}
		var got lab.Sniffed
		if err := json.Unmarshal(s.out, &got); err != nil {
			t.Fatalf("sniff at %s: %v: %s", s.host, err, s.out)
		}
		if got.Marked != 0 {
			t.Errorf("%s received %d attack frames, e.g. %q", s.host, got.Marked, got.Samples)
		}
		if got.Frames == 0 {
			t.Errorf("%s saw no frame at all: the watch proves nothing", s.host)
		}
		t.Logf("%s: %d frames arrived while watching, %d with the attack marker", s.host, got.Frames, got.Marked)
	}

	// Each attempt counted under its reason, at the attacker's PE, and no other drop.
	for _, r := range []string{"pe1", "p", "pe2"} {
		after := stats(t, l, r)
		for name, c := range after.Reasons {
			if !strings.HasPrefix(name, "DROP_") {
				continue
			}
			d := c.GetPackets() - before[r].Reasons[name].GetPackets()
			if d != want[r][name] {
				t.Errorf("%s: %s counted %d, want %d", r, name, d, want[r][name])
			}
		}
		for name, n := range want[r] {
			if _, ok := after.Reasons[name]; !ok && n > 0 {
				t.Errorf("%s: %s not counted at all, want %d", r, name, n)
			}
		}
	}

	// The attack frames left their hosts tagged (the access ports pushed the tag as real bytes).
	portsAfter := portCounters(t, l)
	for host, fs := range frames {
		if d := portsAfter[host].TxTagged - portsBefore[host].TxTagged; d < uint64(len(fs)*repeat) {
			t.Errorf("%s: %d tagged frames sent, want >= %d attack frames", host, d, len(fs)*repeat)
		}
	}
}

func stats(t *testing.T, l *lab.Lab, node string) *pb.StatsReply {
	t.Helper()
	out, err := l.Seg6x(node, "stats", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var s pb.StatsReply
	if err := protojson.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func portCounters(t *testing.T, l *lab.Lab) map[string]lab.PortCounters {
	t.Helper()
	m := map[string]lab.PortCounters{}
	for _, h := range lab.Hosts() {
		out, err := l.Exec(h.Name, l.Bin, "lab", "port-stats", "--pin", filepath.Join(l.NodeDir(h.Name), "bpf"))
		if err != nil {
			t.Fatal(err)
		}
		var pc lab.PortCounters
		if err := json.Unmarshal([]byte(out), &pc); err != nil {
			t.Fatal(err)
		}
		m[h.Name] = pc
	}
	return m
}
