package bgp

// negotiation_test.go: a seg6x node (real store, needs root) against a peer written out by hand
// (rawpeer_test.go). To a peer without Extended Next Hop for VPNv4 no VPNv4 route goes, VPNv6 does,
// no NOTIFICATION either way, the session stays up, and `bgp show neighbors` and the log say why. To
// one with it, VPNv4 routes go with their IPv6 next hop; toggling transposition re-announces them
// without a withdrawal first; after a restart of the speaker, what the neighbor negotiated is
// remembered (its first VPNv4 UPDATE is the route, not an end-of-RIB); a NOTIFICATION it sends is
// logged decoded, with the session's state change, its flap counted. A peer whose Extended Next Hop
// capability is empty is refused as GoBGP refuses it (2/7), and the log and report say so (once a
// minute at warn, though GoBGP tries again every few seconds).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"

	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// logBuffer collects log lines (written from several goroutines).
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// line is the first line holding every part ("" when none does).
func (l *logBuffer) line(parts ...string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ln := range strings.Split(l.b.String(), "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(ln, p)
		}
		if ok {
			return ln
		}
	}
	return ""
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitLine waits for a log line holding every part.
func waitLine(t *testing.T, logs *logBuffer, parts ...string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if ln := logs.line(parts...); ln != "" {
			return ln
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q; the log:\n%s", parts, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// rawNode is a seg6x node (outgoing sessions only) whose one neighbor, ::1, is raw peer p (VPNv4 and
// VPNv6), advertising 198.18.1.0/24 and 2001:db8:1::/64 from tenant blue with next hop fc00:9::1.
func rawNode(t *testing.T, p *rawPeer, peerFile string, mod func(*model.State)) (*node, model.State, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	n := &node{ctl: core.New(testsupport.OpenStore(t, t.TempDir(), testsupport.FakeEnv{})),
		opts: Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), PeerFile: peerFile,
			Logf: func(f string, args ...any) { fmt.Fprintf(logs, "logf: "+f+"\n", args...) }}}
	cfg := pe(65000, "198.18.255.1", 0, p.port, "fc00:1::/48", false)
	cfg.BGP.ListenPort = -1
	cfg.BGP.Neighbors[0].Families = []string{model.FamilyVPNv4, model.FamilyVPNv6}
	cfg.Tenants[0].VPN.Advertise = []netip.Prefix{netip.MustParsePrefix("198.18.1.0/24"), netip.MustParsePrefix("2001:db8:1::/64")}
	if mod != nil {
		mod(&cfg)
	}
	apply(t, n, cfg)
	n.start()
	t.Cleanup(n.stop)
	return n, cfg, logs
}

// announced: the first UPDATE of connection conn (0: any) that announces prefix in family f.
func announced(ms []rawMessage, conn int, f gobgp.Family, prefix string) (vpnUpdate, bool) {
	return announcedWith(ms, conn, f, prefix, func(uint32) bool { return true })
}

// announcedWith: the first UPDATE of connection conn (0: any) that announces prefix in family f with
// a label for which ok holds.
func announcedWith(ms []rawMessage, conn int, f gobgp.Family, prefix string, ok func(label uint32) bool) (vpnUpdate, bool) {
	for _, m := range ms {
		if conn != 0 && m.conn != conn {
			continue
		}
		for _, u := range vpnUpdates(m.msg) {
			if l, has := u.prefixes[prefix]; has && u.family == f && !u.withdraw && ok(l) {
				return u, true
			}
		}
	}
	return vpnUpdate{}, false
}

func TestVPNv4NotSentWithoutExtendedNextHop(t *testing.T) {
	t.Parallel() // its own speakers, ports and instance directories: it mostly waits on BGP timers
	p := newRawPeer(t, 65000, vpnCaps(65000, false)...)
	n, _, logs := rawNode(t, p, "", nil)
	p.waitFor("the VPNv6 route", 30*time.Second, func(ms []rawMessage) bool {
		_, ok := announced(ms, 1, gobgp.RF_IPv6_VPN, "2001:db8:1::/64")
		return ok
	})
	time.Sleep(time.Second) // anything held back would have gone by now (it goes within milliseconds)
	ms := p.received()
	for _, m := range ms {
		for _, u := range vpnUpdates(m.msg) {
			if u.family == gobgp.RF_IPv4_VPN && !u.withdraw {
				t.Fatalf("VPNv4 sent to a peer without extended next hop (next hop %s):\n%s", u.nexthop, describe(ms))
			}
		}
	}
	if ns := notifications(ms); len(ns) > 0 || p.conns != 1 {
		t.Fatalf("%d NOTIFICATIONs, %d connections:\n%s", len(ns), p.conns, describe(ms))
	}
	nb := n.sp.Report(false).Neighbors[0]
	if nb.State != "established" || nb.NotSent["vpnv4"] != whyNoENH || nb.Flaps != 0 || nb.LastError != "" {
		t.Fatalf("neighbor report: %+v", nb)
	}
	waitLine(t, logs, `level=WARN msg="bgp capability mismatch" neighbor=::1 capability=extended-nexthop`,
		`effect="the peer's OPEN has no Extended Next Hop capability: vpnv4 not sent (peer did not negotiate extended next hop for VPNv4, RFC 8950)"`)
	waitLine(t, logs, `level=INFO msg="bgp session state" neighbor=::1 old=openconfirm new=established`)
}

func TestVPNv4WithExtendedNextHop(t *testing.T) {
	t.Parallel() // its own speakers, ports and instance directories: it mostly waits on BGP timers
	caps := append(vpnCaps(65000, true), gobgp.NewCapGracefulRestart(false, false, 120, []*gobgp.CapGracefulRestartTuple{
		gobgp.NewCapGracefulRestartTuple(gobgp.RF_IPv4_VPN, true), gobgp.NewCapGracefulRestartTuple(gobgp.RF_IPv6_VPN, true)}))
	p := newRawPeer(t, 65000, caps...)
	pf := filepath.Join(t.TempDir(), "bgp-neighbors.json")
	n, cfg, logs := rawNode(t, p, pf, func(s *model.State) {
		s.BGP.GracefulRestart = model.GracefulRestart{Enabled: true, RestartTime: 120}
	})
	v4, v6 := "198.18.1.0/24", "2001:db8:1::/64"
	ms := p.waitFor("both routes", 30*time.Second, func(ms []rawMessage) bool {
		_, a := announced(ms, 1, gobgp.RF_IPv4_VPN, v4)
		_, b := announced(ms, 1, gobgp.RF_IPv6_VPN, v6)
		return a && b
	})
	u, _ := announced(ms, 1, gobgp.RF_IPv4_VPN, v4)
	if u.nexthop != netip.MustParseAddr("fc00:9::1") || u.prefixes[v4] != implicitNull {
		t.Fatalf("VPNv4 route: next hop %s, label %d; want fc00:9::1 (RFC 8950), implicit null", u.nexthop, u.prefixes[v4])
	}
	if nb := n.sp.Report(false).Neighbors[0]; len(nb.NotSent) != 0 {
		t.Fatalf("neighbor report: %+v", nb)
	}
	b, err := os.ReadFile(pf)
	var f peerFile
	if err != nil || json.Unmarshal(b, &f) != nil || !f.Neighbors["::1"].ExtendedNextHopVPNv4 {
		t.Fatalf("%s: %s, %v", pf, b, err)
	}

	// Transposition toggled: each route announced again with its label, no withdrawal.
	time.Sleep(500 * time.Millisecond) // the session's first UPDATEs are all sent
	mark := len(p.received())
	cfg.BGP.Transposition = true
	apply(t, n, cfg)
	transposed := func(l uint32) bool { return l != implicitNull }
	p.waitFor("the routes with transposed SIDs", 30*time.Second, func(ms []rawMessage) bool {
		_, a := announcedWith(ms[mark:], 1, gobgp.RF_IPv4_VPN, v4, transposed)
		_, b := announcedWith(ms[mark:], 1, gobgp.RF_IPv6_VPN, v6, transposed)
		return a && b
	})
	time.Sleep(500 * time.Millisecond)
	ms = p.received()
	for _, m := range ms[mark:] {
		for _, u := range vpnUpdates(m.msg) {
			if u.withdraw {
				t.Fatalf("a withdrawal after the transposition change:\n%s", describe(ms[mark:]))
			}
		}
	}

	// The speaker restarts (graceful restart: the session ends as in a crash). The neighbor is known
	// to negotiate extended next hop: its first VPNv4 UPDATE is the route, not an end-of-RIB (that
	// would make it drop the route it keeps for the restart).
	n.stop()
	n.start()
	ms = p.waitFor("the route on the second session", 30*time.Second, func(ms []rawMessage) bool {
		_, ok := announced(ms, 2, gobgp.RF_IPv4_VPN, v4)
		return ok
	})
	for _, m := range ms {
		if m.conn != 2 {
			continue
		}
		if us := vpnUpdates(m.msg); len(us) > 0 && us[0].family == gobgp.RF_IPv4_VPN {
			if us[0].withdraw {
				t.Fatalf("the second session's first VPNv4 UPDATE is a withdrawal or end-of-RIB:\n%s", describe(ms))
			}
			break
		}
	}

	// The peer ends the session with a NOTIFICATION: logged decoded, with the state change, a flap.
	comm := "maintenance"
	p.send(gobgp.NewBGPNotificationMessage(6, 2, append([]byte{byte(len(comm))}, comm...)))
	waitLine(t, logs, `level=WARN msg="bgp notification received" neighbor=::1 code=6 subcode=2 error="Cease / Administrative Shutdown" data="communication \"maintenance\""`)
	waitLine(t, logs, `level=WARN msg="bgp session state" neighbor=::1 old=established new=idle reason="notification received: 6/2 Cease / Administrative Shutdown (communication \"maintenance\")" flaps=1`)
	nb := n.sp.Report(false).Neighbors[0]
	if nb.Flaps != 1 || !strings.HasPrefix(nb.LastError, "notification received: 6/2 Cease / Administrative Shutdown") ||
		time.Since(time.UnixMilli(nb.LastErrorUnixMs)) > time.Minute {
		t.Fatalf("neighbor report after its NOTIFICATION: %+v", nb)
	}
}

func TestEmptyExtendedNextHopCapability(t *testing.T) {
	// Its own speakers, ports and instance directories: it mostly waits on BGP timers.
	t.Parallel()
	caps := append(vpnCaps(65000, false), gobgp.NewCapExtendedNexthop(nil)) // code 5, length 0
	p := newRawPeer(t, 65000, caps...)
	n, _, logs := rawNode(t, p, "", nil)
	ms := p.waitFor("a NOTIFICATION", 30*time.Second, func(ms []rawMessage) bool { return len(notifications(ms)) > 0 })
	if nt := notifications(ms)[0]; nt.ErrorCode != 2 || nt.ErrorSubcode != 7 {
		t.Fatalf("NOTIFICATION %d/%d, want 2/7 (GoBGP refuses the capability)", nt.ErrorCode, nt.ErrorSubcode)
	}
	waitLine(t, logs, `level=WARN msg="bgp capability mismatch" neighbor=::1 capability=extended-nexthop`, "empty")
	waitLine(t, logs, `level=WARN msg="bgp notification sent" neighbor=::1 code=2 subcode=7 error="OPEN Message Error / Unsupported Capability"`)
	// GoBGP tries again every few seconds (on its outgoing connection: no state change): the same
	// lines at warn once a minute, at debug in between.
	p.waitFor("a second attempt", 20*time.Second, func(ms []rawMessage) bool { return len(notifications(ms)) > 1 })
	waitLine(t, logs, `level=DEBUG msg="bgp notification sent" neighbor=::1 code=2 subcode=7`)
	if k := strings.Count(logs.String(), `level=WARN msg="bgp notification sent"`); k != 1 {
		t.Fatalf("%d warnings for the same NOTIFICATION within a minute:\n%s", k, logs)
	}
	nb := n.sp.Report(false).Neighbors[0]
	if nb.State == "established" || !strings.HasPrefix(nb.LastError, "notification sent: 2/7 OPEN Message Error / Unsupported Capability") ||
		nb.LastErrorUnixMs == 0 || nb.Flaps != 0 {
		t.Fatalf("neighbor report: %+v", nb)
	}
}
