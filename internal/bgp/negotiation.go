package bgp

// negotiation.go: what a neighbor negotiated decides what is sent to it. This node's VPNv4 routes
// carry an IPv6 next hop (its fabric address), which RFC 8950 allows only towards a peer that
// negotiated the Extended Next Hop capability for VPNv4 (AFI 1, SAFI 128, next hop AFI 2); to any
// other the family is not sent — the session stays up, VPNv6 flows — and `bgp show neighbors` and
// the log say why. (A peer that gets them anyway answers NOTIFICATION 3/9, and the session flaps.)
//
// GoBGP sends a session's routes the moment it is established, before its watchers hear of it, and
// has no per-neighbor export policy for ordinary (not route-server) neighbors. So one global export
// policy rejects VPNv4 towards the neighbors of a neighbor set, and a neighbor is in that set until a
// session of it has shown the capability; then it leaves it and gets its VPNv4 routes at once (a soft
// reset out). What each neighbor negotiated is remembered (Options.PeerFile: across restarts), so its
// next session — also the first after a daemon restart, when the peer may hold this node's routes
// under graceful restart — starts right, without an end-of-RIB before the VPNv4 routes it holds. A
// neighbor that no longer negotiates it gets them once more, refuses them, and is known from then on.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	api "github.com/osrg/gobgp/v4/api"
	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"
	"github.com/osrg/gobgp/v4/pkg/server"

	"github.com/seg6x/seg6x/internal/model"
)

const (
	enhPolicy = "seg6x-vpnv4-needs-extended-nexthop"
	enhSet    = "seg6x-no-extended-nexthop-vpnv4"
	// enhSentinel keeps the neighbor set from being empty: GoBGP takes an empty set as every neighbor.
	// No session has 0.0.0.0 at its other end.
	enhSentinel = "0.0.0.0/32"
)

// Why a family is not sent ("vpnv4: not sent (...)" in `bgp show neighbors`).
const (
	whyNoENH      = "not sent (peer did not negotiate extended next hop for VPNv4, RFC 8950)"
	whyEmptyENH   = "not sent (peer did not negotiate extended next hop for VPNv4, RFC 8950: its Extended Next Hop capability is empty)"
	whyNotOffered = "not exchanged (the peer's OPEN does not offer the family)"
)

// neighborWant is what the configuration asks of a neighbor.
type neighborWant struct {
	families []string
	needENH  bool // its VPNv4 routes carry an IPv6 next hop
	gr       bool
}

// enhGate keeps GoBGP's neighbor set in line with what each neighbor negotiated.
type enhGate struct {
	mu     sync.Mutex
	file   string
	logf   func(string, ...any)
	srv    *server.BgpServer   // the server the set is in (nil: none running)
	known  map[netip.Addr]bool // what the neighbor's last session showed: extended next hop for VPNv4
	want   map[netip.Addr]neighborWant
	denied map[netip.Addr]bool // in srv's neighbor set
	up     map[netip.Addr]bool // established on srv
}

func newENHGate(file string, logf func(string, ...any)) *enhGate {
	g := &enhGate{file: file, logf: logf, known: map[netip.Addr]bool{}, want: map[netip.Addr]neighborWant{},
		denied: map[netip.Addr]bool{}, up: map[netip.Addr]bool{}}
	g.load()
	return g
}

// needsENH: the VPNv4 routes sent to neighbor n carry an IPv6 next hop (bgp.next_hop, or else the
// session's local address, of the neighbor's family).
func needsENH(cfg *model.BGP, n model.Neighbor) bool {
	if !slices.Contains(n.Families, model.FamilyVPNv4) {
		return false
	}
	if nh := cfg.NextHop; nh.IsValid() && !nh.IsUnspecified() {
		return nh.Is6() && !nh.Is4In6()
	}
	return n.Address.Is6() && !n.Address.Is4In6()
}

func setEntry(a netip.Addr) string {
	a = a.WithZone("")
	return netip.PrefixFrom(a, a.BitLen()).String()
}

// start puts the policy into a new server: the neighbor set (only the sentinel yet), the statement
// rejecting VPNv4 towards its members, and the global export assignment (everything else accepted).
func (g *enhGate) start(ctx context.Context, srv *server.BgpServer) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := srv.AddDefinedSet(ctx, &api.AddDefinedSetRequest{DefinedSet: &api.DefinedSet{
		DefinedType: api.DefinedType_DEFINED_TYPE_NEIGHBOR, Name: enhSet, List: []string{enhSentinel}}}); err != nil {
		return fmt.Errorf("neighbor set %s: %w", enhSet, err)
	}
	pol := &api.Policy{Name: enhPolicy, Statements: []*api.Statement{{
		Name: enhPolicy,
		Conditions: &api.Conditions{NeighborSet: &api.MatchSet{Type: api.MatchSet_TYPE_ANY, Name: enhSet},
			AfiSafiIn: []*api.Family{families[model.FamilyVPNv4]}},
		Actions: &api.Actions{RouteAction: api.RouteAction_ROUTE_ACTION_REJECT},
	}}}
	if err := srv.AddPolicy(ctx, &api.AddPolicyRequest{Policy: pol}); err != nil {
		return fmt.Errorf("policy %s: %w", enhPolicy, err)
	}
	if err := srv.AddPolicyAssignment(ctx, &api.AddPolicyAssignmentRequest{Assignment: &api.PolicyAssignment{
		Name: "global", Direction: api.PolicyDirection_POLICY_DIRECTION_EXPORT, Policies: []*api.Policy{{Name: enhPolicy}},
		DefaultAction: api.RouteAction_ROUTE_ACTION_ACCEPT}}); err != nil {
		return fmt.Errorf("export policy assignment: %w", err)
	}
	g.srv = srv
	g.denied, g.up = map[netip.Addr]bool{}, map[netip.Addr]bool{}
	return nil
}

// stop forgets the server (what the neighbors negotiated stays known).
func (g *enhGate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.srv = nil
	g.denied, g.up = map[netip.Addr]bool{}, map[netip.Addr]bool{}
}

// configure takes the configured neighbors; it must run before a new neighbor is given to the server
// (its first session then starts with VPNv4 held back, unless it is known to negotiate the capability).
func (g *enhGate) configure(ctx context.Context, cfg *model.BGP) {
	g.mu.Lock()
	defer g.mu.Unlock()
	want := map[netip.Addr]neighborWant{}
	for _, n := range cfg.Neighbors {
		want[n.Address] = neighborWant{families: n.Families, needENH: needsENH(cfg, n), gr: cfg.GracefulRestart.Enabled}
	}
	g.want = want
	for _, a := range slices.Collect(maps.Keys(g.denied)) {
		if _, ok := want[a]; !ok {
			g.apply(ctx, a)
		}
	}
	for a := range want {
		g.apply(ctx, a)
	}
}

// apply puts neighbor a into the neighbor set or takes it out as its configuration and what it
// negotiated say; an established session is then sent again what changed (g.mu held).
func (g *enhGate) apply(ctx context.Context, a netip.Addr) {
	if g.srv == nil {
		return
	}
	_, configured := g.want[a]
	deny := g.holdBack(a)
	if deny == g.denied[a] {
		return
	}
	set := &api.DefinedSet{DefinedType: api.DefinedType_DEFINED_TYPE_NEIGHBOR, Name: enhSet, List: []string{setEntry(a)}}
	var err error
	if deny {
		err = g.srv.AddDefinedSet(ctx, &api.AddDefinedSetRequest{DefinedSet: set})
	} else {
		err = g.srv.DeleteDefinedSet(ctx, &api.DeleteDefinedSetRequest{DefinedSet: set})
	}
	if err != nil {
		g.logf("bgp: neighbor %s: changing the neighbor set %s: %v", a, enhSet, err)
		return
	}
	if deny {
		g.denied[a] = true
	} else {
		delete(g.denied, a)
	}
	if configured && g.up[a] {
		// Send what the policy now lets through (or withdraw what it no longer does).
		if err := g.srv.ResetPeer(ctx, &api.ResetPeerRequest{Address: a.String(), Soft: true,
			Direction: api.ResetPeerRequest_DIRECTION_OUT}); err != nil {
			g.logf("bgp: neighbor %s: soft reset out: %v", a, err)
		}
	}
}

// holdBack: neighbor a is configured, its VPNv4 routes carry an IPv6 next hop, and it is not known to
// have negotiated extended next hop for VPNv4 (g.mu held).
func (g *enhGate) holdBack(a netip.Addr) bool {
	w, configured := g.want[a]
	return configured && w.needENH && !g.known[a]
}

// established records what a session of neighbor a on srv negotiated and lets its VPNv4 routes go
// to it, or holds them back.
func (g *enhGate) established(srv *server.BgpServer, a netip.Addr, enh bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if srv != g.srv {
		return // an event of a server stopped since
	}
	g.up[a] = true
	if had, seen := g.known[a]; !seen || had != enh {
		g.known[a] = enh
		g.save()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g.apply(ctx, a)
}

// down: neighbor a's session on srv is no longer established.
func (g *enhGate) down(srv *server.BgpServer, a netip.Addr) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if srv == g.srv {
		delete(g.up, a)
	}
}

// peerFile is Options.PeerFile's content.
type peerFile struct {
	Neighbors map[string]peerFacts `json:"neighbors"`
}

type peerFacts struct {
	ExtendedNextHopVPNv4 bool `json:"extended_next_hop_vpnv4"`
}

func (g *enhGate) load() {
	if g.file == "" {
		return
	}
	b, err := os.ReadFile(g.file)
	if err != nil {
		if !os.IsNotExist(err) {
			g.logf("bgp: reading %s: %v (every neighbor's VPNv4 routes wait for its capabilities)", g.file, err)
		}
		return
	}
	var f peerFile
	if err := json.Unmarshal(b, &f); err != nil {
		g.logf("bgp: reading %s: %v (every neighbor's VPNv4 routes wait for its capabilities)", g.file, err)
		return
	}
	for s, facts := range f.Neighbors {
		if a, err := netip.ParseAddr(s); err == nil {
			g.known[a] = facts.ExtendedNextHopVPNv4
		}
	}
}

// save writes what is known (g.mu held): a new file, then renamed over the old one.
func (g *enhGate) save() {
	if g.file == "" {
		return
	}
	f := peerFile{Neighbors: map[string]peerFacts{}}
	for a, enh := range g.known {
		f.Neighbors[a.String()] = peerFacts{ExtendedNextHopVPNv4: enh}
	}
	b, _ := json.MarshalIndent(f, "", "  ")
	tmp := filepath.Join(filepath.Dir(g.file), "."+filepath.Base(g.file)+".tmp")
	err := os.WriteFile(tmp, append(b, '\n'), 0o644)
	if err == nil {
		err = os.Rename(tmp, g.file)
	}
	if err != nil {
		g.logf("bgp: saving what the neighbors negotiated to %s: %v", g.file, err)
	}
}

// negotiation is what one session's OPENs agreed on, as far as this node cares.
type negotiation struct {
	families []string          // configured here and offered by the peer
	enhVPNv4 bool              // the peer's Extended Next Hop capability lists VPNv4 with IPv6 next hops
	enhEmpty bool              // the peer sent an Extended Next Hop capability without a tuple
	peerGR   bool              // the peer offers graceful restart
	notSent  map[string]string // family -> why it is not sent
}

// mismatch is one capability the two sides do not agree on, for the log.
type mismatch struct {
	capability, effect string
}

// negotiate reads the peer's capabilities against what the configuration wants.
func negotiate(w neighborWant, caps []gobgp.ParameterCapabilityInterface) (negotiation, []mismatch) {
	var n negotiation
	n.notSent = map[string]string{}
	offered := map[string]bool{}
	sawENH := false
	for _, c := range caps {
		switch c := c.(type) {
		case *gobgp.CapMultiProtocol:
			offered[familyName(c.CapValue)] = true
		case *gobgp.CapExtendedNexthop:
			sawENH = true
			if len(c.Tuples) == 0 {
				n.enhEmpty = true
			}
			for _, t := range c.Tuples {
				if t.NLRIAFI == gobgp.AFI_IP && t.NLRISAFI == uint16(gobgp.SAFI_MPLS_VPN) && t.NexthopAFI == gobgp.AFI_IP6 {
					n.enhVPNv4 = true
				}
			}
		case *gobgp.CapGracefulRestart:
			n.peerGR = true
		}
	}
	var out []mismatch
	for _, f := range w.families {
		if !offered[f] {
			n.notSent[f] = whyNotOffered
			out = append(out, mismatch{"multiprotocol " + f, f + " configured here, not offered by the peer: not exchanged"})
			continue
		}
		n.families = append(n.families, f)
	}
	if n.enhEmpty {
		eff := "no family is negotiated with IPv6 next hops"
		if offered[model.FamilyVPNv4] && w.needENH {
			eff = "vpnv4 " + whyEmptyENH
		}
		out = append(out, mismatch{"extended-nexthop", "the peer's Extended Next Hop capability is empty (accepted): " + eff})
	}
	if offered[model.FamilyVPNv4] && slices.Contains(w.families, model.FamilyVPNv4) && w.needENH && !n.enhVPNv4 {
		why := whyNoENH
		if n.enhEmpty {
			why = whyEmptyENH
		}
		n.notSent[model.FamilyVPNv4] = why
		if !n.enhEmpty {
			detail := "the peer's OPEN has no Extended Next Hop capability"
			if sawENH {
				detail = "the peer's Extended Next Hop capability does not list VPNv4 with IPv6 next hops"
			}
			out = append(out, mismatch{"extended-nexthop", detail + ": vpnv4 " + why})
		}
	}
	if w.gr && !n.peerGR {
		out = append(out, mismatch{"graceful-restart", "configured here, not offered by the peer: its routes go when its session does"})
	}
	return n, out
}

// established reads what neighbor a's new session on srv negotiated: the neighbor set follows it,
// and the mismatches are logged.
func (s *Speaker) established(srv *server.BgpServer, a netip.Addr, caps []gobgp.ParameterCapabilityInterface) {
	w, configured := s.gate.peek(a)
	if !configured {
		return
	}
	n, mismatches := negotiate(w, caps)
	s.gate.established(srv, a, n.enhVPNv4)
	s.mu.Lock()
	s.sessionOf(a).notSent = n.notSent
	s.mu.Unlock()
	for _, m := range mismatches {
		s.logRepeat(slog.LevelWarn, "cap "+a.String()+" "+m.capability+" "+m.effect, "bgp capability mismatch",
			slog.String("neighbor", a.String()), slog.String("capability", m.capability), slog.String("effect", m.effect))
	}
}

// peek is what the configuration wants of neighbor a.
func (g *enhGate) peek(a netip.Addr) (neighborWant, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w, ok := g.want[a]
	return w, ok
}

// emptyENH logs the OPEN GoBGP refused for its empty (or cut short) Extended Next Hop capability
// (gobgplog.go: GoBGP answers it with NOTIFICATION 2/7 and no session comes up).
func (s *Speaker) emptyENH(a netip.Addr, err string) {
	s.logRepeat(slog.LevelWarn, "cap "+a.String()+" empty extended-nexthop", "bgp capability mismatch",
		slog.String("neighbor", a.String()), slog.String("capability", "extended-nexthop"),
		slog.String("effect", "the peer's Extended Next Hop capability is empty or not whole 6-byte tuples; GoBGP refuses "+
			"such an OPEN (NOTIFICATION 2/7 Unsupported Capability): no session until the peer sends a tuple or leaves the capability out"),
		slog.String("error", err))
}
