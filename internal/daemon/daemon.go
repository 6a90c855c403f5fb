// Package daemon runs `seg6x daemon`: it owns one instance (its maps, links and saved state), adopts
// whatever an earlier process left pinned, and serves the control API until told to stop. Forwarding
// never depends on the daemon being up: the XDP programs and maps stay pinned in bpffs.
package daemon

// daemon.go: start-up (lock, reconcile, config), the listeners, and signal handling.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"
	"github.com/seg6x/seg6x/internal/config"
	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/memtune"
	"github.com/seg6x/seg6x/internal/mirror"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/slowpath"
	"github.com/seg6x/seg6x/internal/state"
)

// Options configure a daemon.
type Options struct {
	Dir     string       // instance directory
	Socket  string       // Unix socket ("" = <dir>/seg6x.sock)
	Config  string       // YAML file applied at start and on SIGHUP ("" = keep the saved state)
	Listen  string       // optional TCP address for the API (TLS with client certificates)
	TLS     api.TLSFiles // for Listen: our cert/key and the CA of client certificates
	Metrics string       // optional address of the HTTP /metrics and /healthz endpoint
	Cleanup bool         // at shutdown, detach everything and remove all state (otherwise forwarding continues)
	Mirror  bool         // follow the kernel's seg6 / seg6local routes over netlink (--mirror-kernel)
	// NextHopCacheMs is the next-hop cache time of the programs this daemon loads while the state's
	// nexthop_cache_ms is 0 (--nexthop-cache-ms; 0 = off).
	NextHopCacheMs uint32
	// LockWait is how long to wait for the instance while another process (a CLI command run
	// without a daemon, another daemon) holds it (--lock-wait; 0 = fail at once).
	LockWait time.Duration
	// GCHeadroom is how far, in percent of the live heap (at least 64 MiB), the heap may grow before
	// the next collection (--gc-headroom; internal/memtune; 0 = Go's default, GOGC=100).
	GCHeadroom int
	// The log (logging.go): written to Log (nil = stderr) from LogLevel (--log-level) up in LogFormat
	// (--log-format), or to Logger when set.
	Log       io.Writer
	LogLevel  LogLevel
	LogFormat LogFormat
	Logger    *slog.Logger
}

// logger is the daemon's log, made from the options on first use.
func (o *Options) logger() *slog.Logger {
	if o.Logger == nil {
		w := o.Log
		if w == nil {
			w = os.Stderr
		}
		o.Logger = NewLogger(w, o.LogLevel.Level, o.LogFormat)
	}
	return o.Logger
}

// logf logs a message at info, or at warn when it carries an error (logfTo).
func (o *Options) logf(format string, args ...any) { logfTo(o.logger())(format, args...) }

// Run serves until ctx ends or SIGTERM/SIGINT; SIGHUP re-applies the config file.
func Run(ctx context.Context, o Options) error {
	o.logger()
	if o.GCHeadroom < 0 {
		return fmt.Errorf("--gc-headroom %d: a percent, 0 or more (0 = Go's default)", o.GCHeadroom)
	}
	h := memtune.Default
	h.Percent = o.GCHeadroom
	if stopTune, active := memtune.Start(h); active {
		defer stopTune()
		o.logger().Debug("memory: the heap grows by at most max(64 MiB, its live size x --gc-headroom) between collections", "gc_headroom_percent", h.Percent)
	} else if v := memtune.Overridden(); v != "" && h.Percent > 0 {
		o.logger().Info("memory: "+v+" is set in the environment; --gc-headroom is not applied", "env", v)
	}
	if o.Socket == "" {
		o.Socket = api.SocketPath(o.Dir)
	}
	if o.NextHopCacheMs > model.MaxNextHopCacheMs {
		return fmt.Errorf("--nexthop-cache-ms %d is more than %d", o.NextHopCacheMs, model.MaxNextHopCacheMs)
	}
	if c, err := net.DialTimeout("unix", o.Socket, time.Second); err == nil { // waiting for it would be no use
		c.Close()
		return fmt.Errorf("a seg6x daemon already serves %s (its API answers on %s)", o.Dir, o.Socket)
	}
	lock := state.LockPath(o.Dir)
	st, err := dataplane.OpenStore(o.Dir, state.HostEnv{}, state.OpenOptions{
		NoWait: o.LockWait <= 0, Wait: o.LockWait, DefaultNextHopCacheMs: o.NextHopCacheMs,
		Waiting: func() { o.logf("%s is held by %s; waiting up to %v for it", o.Dir, lockHolder(lock), o.LockWait) },
	})
	if errors.Is(err, state.ErrLocked) {
		if o.LockWait > 0 {
			return fmt.Errorf("%s is still held by %s after %v (--lock-wait): another seg6x daemon, or a command that has not finished",
				o.Dir, lockHolder(lock), o.LockWait)
		}
		return fmt.Errorf("%s is held by %s: another seg6x daemon, or a command that has not finished", o.Dir, lockHolder(lock))
	}
	if err != nil {
		return err
	}
	defer st.Close()
	// The cache's invalidation runs before this daemon's programs are attached (it bumps once when it
	// starts, for anything cached before).
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := watchNextHops(wctx, st.Observer().InvalidateNextHops, o.logf); err != nil {
		o.logf("next-hop cache invalidation unavailable: %v (entries expire by time only)", err)
	}
	if nm := st.NewMaps; nm != nil {
		o.logf("no maps of layout %s: created them and filled them from the saved state (%d entries), moved %d interfaces to this program",
			dataplane.MapLayout, nm.Written, nm.Attached)
		if len(nm.OldLayouts) > 0 {
			o.logf("moved to map layout %s; removed the maps of %v", dataplane.MapLayout, nm.OldLayouts)
		}
	}
	t0 := time.Now()
	rep, err := st.Reconcile()
	if err != nil {
		return fmt.Errorf("adopting the pinned data plane: %w", err)
	}
	o.logf("adopted %s in %v: %d objects in state, %d map entries written, %d stale removed, %d interfaces (re)attached, %d stale links removed; next-hop cache %s",
		o.Dir, time.Since(t0).Round(time.Millisecond), total(st.Counts()), rep.Written, rep.Removed, rep.Attached, rep.Detached,
		cacheDesc(st.NextHopCacheMs()))
	if len(rep.OldLayouts) > 0 {
		o.logf("moved to map layout %s; removed the maps of %v", dataplane.MapLayout, rep.OldLayouts)
	}
	// A trace left armed by a process that died while tracing: its programs go back to their product path.
	if n, err := dataplane.DisarmTraces(o.Dir); err != nil {
		o.logf("checking for a trace left armed: %v", err)
	} else if n > 0 {
		o.logf("disarmed a trace left armed on %d programs (its process ended without disarming)", n)
	}

	// Every front end of this daemon (the config file, the link watcher, the kernel mirror, the gRPC
	// API) changes the state through this one controller.
	ctl := core.New(st)
	ctl.OnCommit(auditTo(o.logger()))
	srv := api.NewServerFor(ctl, true)
	reload := func() error { // the --config file, at start and on SIGHUP, counted for the metrics
		err := applyConfig(ctl, o.Config, &o)
		srv.CountConfigReload(err)
		return err
	}
	if o.Config != "" {
		if err := reload(); err != nil {
			return err
		}
	}

	_ = os.Remove(o.Socket) // a socket left by a daemon that was killed
	lis, err := net.Listen("unix", o.Socket)
	if err != nil {
		return err
	}
	if err := os.Chmod(o.Socket, 0o600); err != nil {
		return err
	}
	defer os.Remove(o.Socket)
	gs := api.NewGRPCServer(srv)
	go gs.Serve(lis)
	stops := []func(){gs.GracefulStop}
	defer func() { // API servers stop before the state is saved and closed (also on early returns)
		for _, stop := range stops {
			if stop != nil {
				stop()
			}
		}
	}()
	o.logf("API on unix:%s", o.Socket)

	if o.Listen != "" {
		creds, err := api.ServerTLS(o.TLS)
		if err != nil {
			return err
		}
		tl, err := net.Listen("tcp", o.Listen)
		if err != nil {
			return err
		}
		ts := api.NewGRPCServer(srv, creds)
		go ts.Serve(tl)
		stops = append(stops, ts.GracefulStop)
		o.logf("API on tcp:%s (TLS, client certificates required)", tl.Addr())
	}
	if o.Metrics != "" {
		ml, err := net.Listen("tcp", o.Metrics)
		if err != nil {
			return err
		}
		hs := &http.Server{Handler: srv.HTTPHandler(), ReadHeaderTimeout: 5 * time.Second}
		go hs.Serve(ml)
		stops = append(stops, func() { hs.Close() })
		o.logf("metrics on http://%s/metrics, health on /healthz", ml.Addr())
	}

	stops = append([]func(){startSlowPath(ctx, srv, &o)}, stops...)

	if err := watchLinks(wctx, ctl, o.Dir, o.logf); err != nil {
		o.logf("not following interface changes: %v", err)
	}
	if err := keepNeighbors(wctx, ctl, o.logf); err != nil {
		o.logf("not keeping the fast path's neighbors probed: %v", err)
	}

	if o.Mirror {
		m := mirror.New(ctl, o.logf)
		srv.SetKernel(func() *pb.KernelReply { return kernelReply(m) })
		// Another front end's change (interfaces, its own tenants and SIDs) can change what the
		// mirror may translate: it looks again.
		ctl.Subscribe(func(ch core.Change) {
			if ch.Origin != model.OriginKernel {
				m.Kick()
			}
		})
		mctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = m.Run(mctx) }()
		stops = append([]func(){func() { cancel(); <-done }}, stops...)
		o.logf("following the kernel's seg6 routes (--mirror-kernel)")
	}

	// BGP (when the state has a bgp: section): stopped first, so its peers see the session end
	// while forwarding goes on.
	stops = append([]func(){startBGP(ctx, ctl, srv, &o)}, stops...)

	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	o.logf("ready (pid %d)", os.Getpid())
	for {
		select {
		case <-ctx.Done():
			return shutdown(ctl, &o, stops)
		case s := <-sig:
			if s != syscall.SIGHUP {
				o.logf("%v: stopping", s)
				return shutdown(ctl, &o, stops)
			}
			if o.Config == "" {
				o.logf("SIGHUP: no --config file to re-apply")
				continue
			}
			if err := reload(); err != nil {
				o.logf("SIGHUP: %v (running state unchanged)", err)
			}
		}
	}
}

func total(c state.Counts) int {
	return c.Interfaces + c.Tenants + c.Routes4 + c.Routes6 + c.SIDs
}

// applyConfig makes the running state equal to the file, through the same controller call as the
// API's ApplyState.
func applyConfig(ctl *core.Controller, path string, o *Options) error {
	desired, err := config.Load(path)
	if err != nil {
		return fmt.Errorf("config: %w", err) // Load's errors name the file
	}
	res, err := ctl.Apply(desired, core.Options{Origin: model.OriginConfig, Via: "config"})
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	added, changed, removed := res.Diff.Counts()
	o.logf("applied %s: %d added, %d changed, %d removed (generation %d)", path, added, changed, removed, res.Generation)
	return nil
}

// shutdown stops the API, saves a compact snapshot and, with Cleanup, removes everything (forwarding
// stops then).
func shutdown(ctl *core.Controller, o *Options, stops []func()) error {
	for _, stop := range stops {
		stop()
	}
	clear(stops) // the deferred loop in Run finds nothing left to stop
	var err error
	ctl.Read(func(st *state.Store) { // nothing changes the objects: the snapshot only compacts the journal
		if err = st.Compact(); err != nil {
			return
		}
		if o.Cleanup {
			st.Close()
			err = dataplane.Purge(o.Dir)
			o.logf("cleanup: detached every interface and removed all state")
		}
	})
	return err
}

// startSlowPath reads the program's slow path ring while the daemon runs (bpf/slowpath.h) and returns
// its stop function.
func startSlowPath(ctx context.Context, srv *api.Server, o *Options) func() {
	ring, err := dataplane.SlowPathRing(o.Dir)
	if err != nil {
		o.logf("slow path unavailable: %v (IPv4 without DF too big for its tunnel goes to the kernel; decapsulated packets too big for their port are dropped unanswered)", err)
		return func() {}
	}
	r := slowpath.New(o.Dir, ring, o.logf)
	srv.SetSlowPath(func() *pb.SlowPath {
		s := r.Stats()
		return &pb.SlowPath{Running: s.Running, Records: s.Records, Fragmented: s.Fragmented, Fragments: s.Fragments,
			VxlanFragmented: s.Fragmented6, VxlanFragments: s.Fragments6, Sent: s.Sent,
			Injected: s.Injected, Failed: s.Failed, Lost: s.Lost, LastError: s.LastError}
	})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.Run(rctx); err != nil {
			o.logf("slow path unavailable: %v (IPv4 without DF too big for its tunnel goes to the kernel; decapsulated packets too big for their port are dropped unanswered)", err)
		}
	}()
	o.logf("slow path: fragmenting IPv4 too big for its tunnel, relaying ICMP errors of decapsulated packets")
	return func() { cancel(); <-done; ring.Close() }
}

func kernelReply(m *mirror.Mirror) *pb.KernelReply {
	st, notes, stats := m.Status()
	out := &pb.KernelReply{Mirroring: true, Notes: notes, Events: stats.Events, Resyncs: stats.Resyncs,
		Commits: stats.Commits, FailedCommits: stats.Failed, LastSyncUnixMs: stats.LastSync.UnixMilli(), LastError: stats.LastError}
	for _, r := range st {
		out.Routes = append(out.Routes, &pb.KernelRoute{Route: r.Route, Family: uint32(r.Family), Table: r.Table,
			Prefix: r.Prefix, Accelerated: r.Accelerated, Reason: r.Reason, Object: r.Object})
	}
	vxs, fdb := m.VXLANStatus()
	for _, v := range vxs {
		out.Vxlans = append(out.Vxlans, &pb.KernelVxlan{Dev: v.Dev, Vni: v.VNI, Local: v.Local, Port: uint32(v.Port), Bridge: v.Bridge,
			Followed: v.Followed, Accelerated: v.Accelerated, Reason: v.Reason, Object: v.Object})
	}
	for _, e := range fdb {
		out.Fdb = append(out.Fdb, &pb.KernelFdb{Dev: e.Dev, Bridge: e.Bridge, Mac: e.MAC, Vlan: uint32(e.VLAN), Remote: e.Remote,
			Followed: e.Followed, Accelerated: e.Accelerated, Reason: e.Reason})
	}
	return out
}

func cacheDesc(ms uint32) string {
	if ms == 0 {
		return "off"
	}
	return fmt.Sprintf("%d ms (invalidated on every netlink change)", ms)
}
