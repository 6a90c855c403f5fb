package api

// server.go: the Seg6x gRPC service, a thin adapter over the core controller (internal/core): each call
// decodes its request, makes one controller call, and encodes the reply. Errors are mapped to gRPC
// codes by their kind (core.KindOf: bad input InvalidArgument, stale generation FailedPrecondition, a
// write that failed and was rolled back Internal).

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/buildinfo"
	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// MaxMessage bounds one API message (a batch of a million routes is about 100 MB).
const MaxMessage = 1 << 30

// Server implements pb.ControlServer over a controller.
type Server struct {
	pb.UnimplementedControlServer
	ctl     *core.Controller
	daemon  bool
	started time.Time
	paths   state.PathFinder         // egress and MTU towards a first SID (show routes)
	xdp     func(ifindex int) string // what an interface's driver can do with XDP (show interfaces)

	mu     sync.Mutex          // the reporters below
	kernel KernelReporter      // the kernel mirror's report (nil: no mirror)
	slow   func() *pb.SlowPath // the daemon's slow path counters (nil: no daemon)
	bgp    BGPReporter         // the daemon's BGP speaker (nil: none)
	routes BGPRouteCounter     // its learned routes by what became of them (nil: none)

	reloads reloadCounts // the daemon's --config applies, by result (metrics.go)
}

// NewServer serves st through a controller of its own (a one-shot CLI, tests); daemon says whether
// a daemon runs it.
func NewServer(st *state.Store, daemon bool) *Server { return NewServerFor(core.New(st), daemon) }

// NewServerFor serves ctl, which other front ends of the same process also use.
func NewServerFor(ctl *core.Controller, daemon bool) *Server {
	return &Server{ctl: ctl, daemon: daemon, started: time.Now(), paths: state.KernelPath, xdp: xdpFeatures}
}

// Controller is the controller the server adapts.
func (s *Server) Controller() *core.Controller { return s.ctl }

// grpcError converts a controller error to a status with the code of its kind.
func grpcError(err error) error {
	code := codes.Internal
	switch core.KindOf(err) {
	case core.KindInvalid:
		code = codes.InvalidArgument
	case core.KindStale:
		code = codes.FailedPrecondition
	}
	return status.Error(code, err.Error())
}

func diffToPB(d *model.Diff) *pb.Diff {
	if d == nil {
		return &pb.Diff{}
	}
	out := &pb.Diff{Added: d.Added, Changed: d.Changed, Removed: d.Removed,
		MoreAdded: uint64(d.MoreAdded), MoreChanged: uint64(d.MoreChanged), MoreRemoved: uint64(d.MoreRemoved),
		Kinds: make(map[string]*pb.KindCounts, len(d.Kinds))}
	for k, c := range d.Kinds {
		out.Kinds[k] = &pb.KindCounts{Added: uint64(c.Added), Changed: uint64(c.Changed), Removed: uint64(c.Removed)}
	}
	return out
}

// DiffFromPB converts a reply's diff for printing.
func DiffFromPB(d *pb.Diff) *model.Diff {
	out := &model.Diff{Added: d.GetAdded(), Changed: d.GetChanged(), Removed: d.GetRemoved(),
		MoreAdded: int(d.GetMoreAdded()), MoreChanged: int(d.GetMoreChanged()), MoreRemoved: int(d.GetMoreRemoved())}
	for _, p := range []*[]string{&out.Added, &out.Changed, &out.Removed} {
		if *p == nil {
			*p = []string{}
		}
	}
	out.Kinds = make(map[string]*model.KindCounts, len(d.GetKinds()))
	for k, c := range d.GetKinds() {
		out.Kinds[k] = &model.KindCounts{Added: int(c.GetAdded()), Changed: int(c.GetChanged()), Removed: int(c.GetRemoved())}
	}
	if len(out.Kinds) == 0 {
		out.CountListed() // a daemon older than the per-kind counts: its listed lines counted here
	}
	return out
}

func commitReply(res core.Result) *pb.CommitReply {
	return &pb.CommitReply{Diff: diffToPB(res.Diff), Generation: res.Generation}
}

func (s *Server) Commit(ctx context.Context, req *pb.CommitRequest) (*pb.CommitReply, error) {
	ops, err := OpsFromPB(req.GetOps())
	if err != nil {
		return nil, grpcError(s.ctl.Fail(err))
	}
	res, err := s.ctl.Commit(ops, core.Options{DryRun: req.GetDryRun(), IfGeneration: req.GetIfGeneration(),
		DiffLimit: int(min(req.GetDiffLimit(), 1<<30))})
	if err != nil {
		return nil, grpcError(err)
	}
	return commitReply(res), nil
}

func (s *Server) ApplyState(ctx context.Context, req *pb.ApplyStateRequest) (*pb.CommitReply, error) {
	desired, err := StateFromPB(req.GetState())
	if err != nil {
		return nil, grpcError(s.ctl.Fail(err))
	}
	res, err := s.ctl.Apply(desired, core.Options{DryRun: req.GetDryRun(), IfGeneration: req.GetIfGeneration()})
	if err != nil {
		return nil, grpcError(err)
	}
	return commitReply(res), nil
}

const chunkObjects = 20000

// xdpFeatures names what ifindex's driver can do with XDP, or why that is unknown.
func xdpFeatures(ifindex int) string {
	f, err := dataplane.ReadXDPFeatures(ifindex)
	if err != nil {
		return "unknown"
	}
	return f.String()
}

func (s *Server) Show(req *pb.ShowRequest, stream pb.Control_ShowServer) error {
	// A consistent copy under the lock; streaming it (slow clients, big tables) holds nothing.
	var cur model.State
	var gen uint64
	var dir string
	s.ctl.Read(func(st *state.Store) { cur, gen, dir = st.Current(), st.Gen(), st.Dir })
	state.FillPaths(cur.Routes, cur.Policies, s.paths) // the live egress MTU of every route's tunnel
	for i := range cur.Interfaces {
		if idx := cur.Interfaces[i].Ifindex; idx != 0 && s.xdp != nil {
			cur.Interfaces[i].XDPFeatures = s.xdp(idx)
			cur.Interfaces[i].MultiBuffer = dataplane.MultiBufMarks(dir, idx)
		}
	}
	head := cur
	head.Routes, head.SIDs = nil, nil
	if err := stream.Send(&pb.StateChunk{State: StateToPB(&head), Generation: gen}); err != nil {
		return err
	}
	for lo := 0; lo < len(cur.Routes); lo += chunkObjects {
		part := model.State{Routes: cur.Routes[lo:min(lo+chunkObjects, len(cur.Routes))]}
		if err := stream.Send(&pb.StateChunk{State: StateToPB(&part)}); err != nil {
			return err
		}
	}
	for lo := 0; lo < len(cur.SIDs); lo += chunkObjects {
		part := model.State{SIDs: cur.SIDs[lo:min(lo+chunkObjects, len(cur.SIDs))]}
		if err := stream.Send(&pb.StateChunk{State: StateToPB(&part)}); err != nil {
			return err
		}
	}
	return nil
}

func counter(c state.Counter) *pb.Counter { return &pb.Counter{Packets: c.Packets, Bytes: c.Bytes} }

func (s *Server) Stats(ctx context.Context, req *pb.StatsRequest) (*pb.StatsReply, error) {
	var out *pb.StatsReply
	var err error
	s.ctl.Read(func(st *state.Store) { out, err = stats(st) })
	if err != nil {
		return nil, grpcError(s.ctl.Fail(err))
	}
	s.mu.Lock()
	if s.slow != nil {
		out.SlowPath = s.slow()
	}
	s.mu.Unlock()
	return out, nil
}

func stats(st *state.Store) (*pb.StatsReply, error) {
	pols, sids := st.Policies(), st.SIDs()
	polIDs, sidIDs := make([]uint32, len(pols)), make([]uint32, len(sids))
	for i, p := range pols {
		polIDs[i] = p.ID
	}
	for i, sd := range sids {
		sidIDs[i] = sd.ID
	}
	c, err := st.Observer().Stats(polIDs, sidIDs)
	if err != nil {
		return nil, err
	}
	out := &pb.StatsReply{Actions: map[string]*pb.Counter{}, Reasons: map[string]*pb.Counter{}}
	for name, v := range c.Actions {
		out.Actions[name] = counter(v)
	}
	for name, v := range c.Reasons {
		if v.Packets > 0 {
			out.Reasons[name] = counter(v)
		}
	}
	for _, p := range pols {
		ps := &pb.PolicyStats{Id: p.ID, Mode: p.Mode, Routes: uint32(p.Routes), Src: p.UsedSrc.String(), Count: counter(c.Policies[p.ID]),
			Sids: uint32(p.SIDs), Lists: p.Lists}
		for _, a := range p.Segs {
			ps.Segs = append(ps.Segs, a.String())
		}
		out.Policies = append(out.Policies, ps)
	}
	plugins := st.Plugins()
	byName := map[string]*state.PluginInfo{}
	var slots []uint32
	var binds []state.PluginBind
	for i, p := range plugins {
		slots = append(slots, p.Slot)
		byName[p.Name] = &plugins[i]
	}
	for _, sd := range sids {
		if p := byName[sd.Plugin]; sd.Bind != 0 && p != nil {
			binds = append(binds, state.PluginBind{Bind: sd.Bind, Digest: p.Digest, Counters: p.Counters})
		}
	}
	pc, err := st.Observer().PluginStats(slots, binds)
	if err != nil {
		return nil, err
	}
	for _, sd := range sids {
		ss := &pb.SidStats{Sid: sd.Name(), Action: sd.Action, Count: counter(c.SIDs[sd.ID]), Flavors: sd.Flavors, Plugin: sd.Plugin}
		if sd.Bind != 0 {
			ss.PluginOutcomes = outcomeCounters(pc.Binds[sd.Bind])
			ss.PluginCounters = map[string]*pb.Counter{}
			for i, v := range pc.Own[sd.Bind] {
				if v.Packets == 0 {
					continue
				}
				name := fmt.Sprintf("counter %d", i)
				if p := byName[sd.Plugin]; p != nil && p.CounterNames[i] != "" {
					name = p.CounterNames[i]
				}
				ss.PluginCounters[name] = counter(v)
			}
		}
		out.Sids = append(out.Sids, ss)
	}
	for _, p := range plugins {
		ps := &pb.PluginStats{Name: p.Name, File: p.File, Digest: p.Digest, Slot: p.Slot, Config: p.Config,
			Outcomes: outcomeCounters(pc.Slots[p.Slot].Outcomes), Drops: map[string]*pb.Counter{}}
		for _, a := range p.SIDs {
			ps.Sids = append(ps.Sids, a.String())
		}
		for r, v := range pc.Slots[p.Slot].Reasons {
			if v.Packets == 0 {
				continue
			}
			name := p.Reasons[r]
			if name == "" {
				name = fmt.Sprintf("reason %d", r)
			}
			ps.Drops[name] = counter(v)
		}
		out.Plugins = append(out.Plugins, ps)
	}
	return out, nil
}

// outcomeCounters are the non-zero counters of cs by outcome name (state.PluginOutcomes).
func outcomeCounters(cs []state.Counter) map[string]*pb.Counter {
	out := map[string]*pb.Counter{}
	for i, v := range cs {
		if v.Packets > 0 && i < len(state.PluginOutcomes) {
			out[state.PluginOutcomes[i]] = counter(v)
		}
	}
	return out
}

// SetSlowPath attaches the daemon's slow path: report gives its counters (Stats, metrics).
func (s *Server) SetSlowPath(report func() *pb.SlowPath) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slow = report
}

func (s *Server) Status(ctx context.Context, req *pb.StatusRequest) (*pb.StatusReply, error) {
	return s.status(), nil
}

func (s *Server) status() *pb.StatusReply {
	var out *pb.StatusReply
	s.ctl.Read(func(st *state.Store) { out = s.statusOf(st) })
	out.LastError, out.ApiErrors = s.ctl.LastError()
	return out
}

func (s *Server) statusOf(st *state.Store) *pb.StatusReply {
	n := st.Counts()
	out := &pb.StatusReply{Version: buildinfo.Version, Daemon: s.daemon, StartedUnix: s.started.Unix(), Generation: st.Gen(),
		Tenants: uint32(n.Tenants), Routes4: uint32(n.Routes4), Routes6: uint32(n.Routes6), Policies: uint32(n.Policies),
		Sids: uint32(n.SIDs), NexthopCacheMs: st.NextHopCacheMs(), Ports: PortClassesToPB(st.Ports())}
	d := st.Domain()
	out.Domain = domainToPB(&d)
	if b, err := os.ReadFile("/proc/sys/kernel/bpf_stats_enabled"); err == nil {
		out.BpfStats = strings.TrimSpace(string(b)) == "1"
	}
	seen := map[uint32]bool{}
	for _, it := range st.Interfaces() {
		pi := ifaceToPB(&it)
		if id, err := dataplane.ProgramID(st.Dir, it.Ifindex); err == nil {
			pi.ProgId = id
		}
		out.Interfaces = append(out.Interfaces, pi)
		if pi.ProgId == 0 || seen[pi.ProgId] {
			continue
		}
		seen[pi.ProgId] = true
		if p, err := ebpf.NewProgramFromID(ebpf.ProgramID(pi.ProgId)); err == nil {
			if st, err := p.Stats(); err == nil {
				out.ProgRunNs += uint64(st.Runtime.Nanoseconds())
				out.ProgRunCount += st.RunCount
			}
			p.Close()
		}
	}
	return out
}
