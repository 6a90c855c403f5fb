package bgp

// speaker.go: the daemon's BGP speaker. It follows the state's bgp: section and the tenants' vpn:
// sections (through the controller's change notifications): runs an embedded GoBGP server with the
// configured neighbors, advertises each vpn tenant's prefixes (export.go) and turns the VPN routes it
// learns into the tenants' encap routes (import.go); what a neighbor negotiated decides what it is sent
// (negotiation.go), and its sessions are logged and reported (sessions.go, gobgplog.go). One goroutine
// does all of it (sync); GoBGP's callbacks only queue what they saw and wake it, except that a session
// coming up has its VPNv4 routes let through (or held back) at once.

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"

	api "github.com/osrg/gobgp/v4/api"
	"github.com/osrg/gobgp/v4/pkg/apiutil"
	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"
	"github.com/osrg/gobgp/v4/pkg/server"

	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

// Options of a speaker.
type Options struct {
	Logf func(format string, args ...any)
	// Logger receives the speaker's structured lines: session state changes, NOTIFICATIONs,
	// capability mismatches, summaries of refused routes (nil: none).
	Logger *slog.Logger
	// PeerFile keeps what each neighbor negotiated across restarts (negotiation.go; "": in memory).
	PeerFile string
	// KernelRoutes lists the kernel's routes of a table (for vpn.advertise_kernel); nil: none.
	KernelRoutes func(table uint32) ([]netip.Prefix, error)
	// Debounce is how long the speaker gathers changes before acting on them (default 20 ms).
	Debounce time.Duration
	// IsLocal says whether the FIB delivers an address to this node (a learned SID that would come
	// back here is refused); nil: not asked.
	IsLocal func(netip.Addr) bool
	// KernelPoll is how often kernel routes are re-read (default 5 s).
	KernelPoll time.Duration
}

// Speaker runs BGP for one controller.
type Speaker struct {
	ctl  *core.Controller
	opts Options
	kick chan struct{}
	log  *slog.Logger
	gate *enhGate // which neighbors get VPNv4 routes (negotiation.go)

	// Owned by the sync goroutine; reports read them under syncMu.
	syncMu  sync.Mutex
	srv     *server.BgpServer
	global  *model.BGP                    // what srv was started with (nil: not running)
	peers   map[netip.Addr]model.Neighbor // configured on srv
	exports map[string]export             // advertised, by key
	rtc     map[string]export             // RTC membership advertised, by route target
	imp     *importer
	started time.Time

	mu       sync.Mutex // what callbacks and reports share with the goroutine
	pending  []*apiutil.Path
	eor      map[netip.Addr]int // end-of-RIB markers seen per peer since its session came up
	stats    Stats
	sessions map[netip.Addr]*session // sessions.go
	repeats  map[string]*repeat      // sessions.go
	refusal  refusals                // refusals.go
}

// Stats are the speaker's counters.
type Stats struct {
	Commits, FailedCommits uint64
	LastError              string
}

// New makes a speaker for ctl; Run starts it.
func New(ctl *core.Controller, o Options) *Speaker {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Debounce == 0 {
		o.Debounce = 20 * time.Millisecond
	}
	if o.KernelPoll == 0 {
		o.KernelPoll = 5 * time.Second
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Speaker{ctl: ctl, opts: o, kick: make(chan struct{}, 1), log: log,
		peers: map[netip.Addr]model.Neighbor{}, exports: map[string]export{}, rtc: map[string]export{},
		eor: map[netip.Addr]int{}, sessions: map[netip.Addr]*session{}, repeats: map[string]*repeat{}}
	s.gate = newENHGate(o.PeerFile, s.fail)
	return s
}

func (s *Speaker) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run follows the state until ctx ends, then stops the BGP server (its peers withdraw this node's
// routes; the routes it learned stay in the state, to be confirmed or removed after the next start).
func (s *Speaker) Run(ctx context.Context) {
	s.started = time.Now()
	s.imp = newImporter(s)
	s.ctl.Subscribe(func(c core.Change) {
		if c.Origin != model.OriginBGP {
			s.wake()
		}
	})
	s.wake()
	poll := time.NewTicker(s.opts.KernelPoll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			// The daemon stops (or restarts): under graceful restart the sessions close without a
			// NOTIFICATION, so peers keep this node's routes (stale) until it is back.
			s.syncMu.Lock()
			s.stopServer(true)
			s.syncMu.Unlock()
			s.flushRefusals()
			return
		case <-s.kick:
		case <-poll.C:
		}
		time.Sleep(s.opts.Debounce)
		s.sync(ctx)
	}
}

// sync brings the server, its peers, the advertised routes and the imported routes in line with the
// state and with what was learned.
func (s *Speaker) sync(ctx context.Context) {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	var cfg *model.BGP
	var tenants []model.Tenant
	s.ctl.Read(func(st *state.Store) { cfg, tenants = st.BGPConfig(), st.Tenants() })
	if err := s.syncServer(ctx, cfg); err != nil {
		s.fail("bgp: %v", err)
	}
	if s.srv != nil {
		s.syncPeers(ctx, cfg)
		s.syncExports(cfg, tenants)
	}
	s.mu.Lock()
	learned := s.pending
	s.pending = nil
	s.mu.Unlock()
	s.imp.sync(cfg, tenants, learned)
}

func (s *Speaker) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.opts.Logf(format, args...) // with its arguments: the daemon logs one carrying an error as a warning
	s.mu.Lock()
	s.stats.LastError = msg
	s.mu.Unlock()
}

// sameGlobal: a server started with a can keep running for b (only neighbors and routes differ).
func sameGlobal(a, b *model.BGP) bool {
	return a.ASN == b.ASN && a.RouterID == b.RouterID && a.ListenPort == b.ListenPort &&
		a.GracefulRestart == b.GracefulRestart
}

// syncServer starts, restarts (its global settings changed) or stops the GoBGP server.
func (s *Speaker) syncServer(ctx context.Context, cfg *model.BGP) error {
	if s.global != nil && (cfg == nil || !sameGlobal(s.global, cfg)) {
		s.stopServer(false)
	}
	if cfg == nil || s.srv != nil {
		return nil
	}
	// GoBGP's log is read for what its events do not say (gobgplog.go).
	srv := server.NewBgpServer(server.LoggerOption(slog.New(&gobgpLog{s: s}), new(slog.LevelVar)))
	go srv.Serve()
	port := cfg.ListenPort
	if port == 0 {
		port = model.DefaultBGPPort
	}
	// Global tables only for the families seg6x speaks (GoBGP's default makes all 26, twice, of 2,048
	// shard maps each: ~10 MB whatever the routes).
	g := &api.Global{Asn: cfg.ASN, RouterId: cfg.RouterID.String(), ListenPort: port, Families: globalFamilies}
	if cfg.GracefulRestart.Enabled {
		g.GracefulRestart = &api.GracefulRestart{Enabled: true, RestartTime: uint32(cfg.GracefulRestart.RestartTime)}
	}
	if err := srv.StartBgp(ctx, &api.StartBgpRequest{Global: g}); err != nil {
		srv.Stop()
		return fmt.Errorf("starting the BGP server (AS %d, port %d): %w", cfg.ASN, port, err)
	}
	if err := s.gate.start(ctx, srv); err != nil {
		srv.Stop()
		return fmt.Errorf("the export policy holding VPNv4 back from neighbors without extended next hop: %w", err)
	}
	err := srv.WatchEvent(ctx, server.WatchEventMessageCallbacks{
		OnBestPath: func(paths []*apiutil.Path, _ time.Time) { s.learn(paths) },
		OnPathEor: func(p *apiutil.Path, _ time.Time) {
			if p.Family != gobgp.RF_IPv4_VPN && p.Family != gobgp.RF_IPv6_VPN {
				return
			}
			s.mu.Lock()
			s.eor[p.PeerAddress]++
			s.mu.Unlock()
			s.wake()
		},
		OnPeerUpdate: func(e *apiutil.WatchEventMessage_PeerEvent, t time.Time) { s.peerEvent(srv, e, t) },
	}, server.WatchBestPath(true), server.WatchEor(true), server.WatchPeer())
	if err != nil {
		s.gate.stop()
		srv.Stop()
		return fmt.Errorf("watching the BGP server: %w", err)
	}
	s.srv, s.global = srv, cfg
	s.opts.Logf("bgp: AS %d router id %s, listening on %s", cfg.ASN, cfg.RouterID, listenDesc(port))
	return nil
}

func listenDesc(port int32) string {
	if port < 0 {
		return "no port (outgoing sessions only)"
	}
	return fmt.Sprintf("port %d", port)
}

// stopServer stops the GoBGP server. keepRoutes (a daemon stop, not a configuration change): peers
// with graceful restart get no NOTIFICATION and keep this node's routes for the restart time.
func (s *Speaker) stopServer(keepRoutes bool) {
	if s.srv == nil {
		return
	}
	s.gate.stop() // the sessions' end changes no neighbor set
	if keepRoutes && s.global.GracefulRestart.Enabled {
		// As a crash would: the sessions end without a word (see sever.go).
		peers := map[netip.Addr]uint16{}
		for a, n := range s.peers {
			peers[a] = n.Port
			if n.Port == 0 {
				peers[a] = model.DefaultBGPPort
			}
		}
		port := s.global.ListenPort
		if port == 0 {
			port = model.DefaultBGPPort
		}
		if _, err := severSessions(peers, port); err != nil {
			s.opts.Logf("bgp: closing sessions for graceful restart: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.StopBgp(ctx, &api.StopBgpRequest{AllowGracefulRestart: keepRoutes}); err != nil {
		s.opts.Logf("bgp: stopping: %v", err)
	}
	s.srv.Stop()
	s.srv, s.global = nil, nil
	s.peers = map[netip.Addr]model.Neighbor{}
	s.exports, s.rtc = map[string]export{}, map[string]export{}
	s.mu.Lock()
	s.eor = map[netip.Addr]int{}
	s.pending = nil
	s.mu.Unlock()
	s.imp.forget()
	s.opts.Logf("bgp: stopped")
}

// learn queues best-path changes (GoBGP's goroutine; must not block).
func (s *Speaker) learn(paths []*apiutil.Path) {
	s.mu.Lock()
	s.pending = append(s.pending, paths...)
	s.mu.Unlock()
	s.wake()
}

// syncPeers adds, replaces and removes neighbors to match cfg.
func (s *Speaker) syncPeers(ctx context.Context, cfg *model.BGP) {
	want := map[netip.Addr]model.Neighbor{}
	for _, n := range cfg.Neighbors {
		want[n.Address] = n
	}
	for addr, have := range s.peers {
		if w, ok := want[addr]; !ok || !sameNeighbor(have, w) {
			if err := s.srv.DeletePeer(ctx, &api.DeletePeerRequest{Address: addr.String()}); err != nil {
				s.fail("bgp: removing neighbor %s: %v", addr, err)
			}
			delete(s.peers, addr)
		}
	}
	s.forgetSessions(func(a netip.Addr) bool { _, ok := want[a]; return ok })
	// Before a new neighbor's first session can start: its VPNv4 routes wait for its capabilities.
	s.gate.configure(ctx, cfg)
	for addr, n := range want {
		if _, ok := s.peers[addr]; ok {
			continue
		}
		if err := s.srv.AddPeer(ctx, &api.AddPeerRequest{Peer: peerConfig(n, cfg.GracefulRestart)}); err != nil {
			s.fail("bgp: neighbor %s: %v", addr, err)
			continue
		}
		s.peers[addr] = n
	}
}

func sameNeighbor(a, b model.Neighbor) bool {
	return a.ASN == b.ASN && a.Password == b.Password && a.LocalAddress == b.LocalAddress && a.Port == b.Port &&
		slices.Equal(a.Families, b.Families) && a.Description == b.Description
}

// globalFamilies are the global RIB's families, as GoBGP numbers them (oc.AfiSafiTypeToIntMap):
// l3vpn-ipv4-unicast, l3vpn-ipv6-unicast, rtc.
var globalFamilies = []uint32{4, 5, 12}

// families maps the state's family names to GoBGP's.
var families = map[string]*api.Family{
	model.FamilyVPNv4: {Afi: api.Family_AFI_IP, Safi: api.Family_SAFI_MPLS_VPN},
	model.FamilyVPNv6: {Afi: api.Family_AFI_IP6, Safi: api.Family_SAFI_MPLS_VPN},
	model.FamilyRTC:   {Afi: api.Family_AFI_IP, Safi: api.Family_SAFI_ROUTE_TARGET_CONSTRAINTS},
}

func peerConfig(n model.Neighbor, gr model.GracefulRestart) *api.Peer {
	p := &api.Peer{
		Conf: &api.PeerConf{NeighborAddress: n.Address.String(), PeerAsn: n.ASN, AuthPassword: n.Password,
			Description: n.Description},
		// Retry a lost session every 5 s (GoBGP's default is 120 s): a PE back from a restart is
		// re-learned within seconds.
		Timers:    &api.Timers{Config: &api.TimersConfig{ConnectRetry: 5, HoldTime: 90, KeepaliveInterval: 30}},
		Transport: &api.Transport{},
	}
	if n.LocalAddress.IsValid() {
		p.Transport.LocalAddress = n.LocalAddress.String()
	}
	if n.Port != 0 {
		p.Transport.RemotePort = uint32(n.Port)
	}
	if gr.Enabled {
		p.GracefulRestart = &api.GracefulRestart{Enabled: true, RestartTime: uint32(gr.RestartTime)}
	}
	for _, f := range n.Families {
		as := &api.AfiSafi{Config: &api.AfiSafiConfig{Family: families[f], Enabled: true}}
		if gr.Enabled {
			as.MpGracefulRestart = &api.MpGracefulRestart{Config: &api.MpGracefulRestartConfig{Enabled: true}}
		}
		p.AfiSafis = append(p.AfiSafis, as)
	}
	return p
}
