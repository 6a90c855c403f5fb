package api

// server.go: the Seg6x gRPC service. Every change is one state.Store.Commit under one lock; errors
// are mapped to gRPC codes (bad input: InvalidArgument, stale generation: FailedPrecondition, a map
// write that failed and was rolled back: Internal) and counted.

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Version is the seg6x version reported by Status.
var Version = "0.2.0"

// MaxMessage bounds one API message (a batch of a million routes is about 100 MB).
const MaxMessage = 1 << 30

// Server implements pb.ControlServer on an open store.
type Server struct {
	pb.UnimplementedControlServer
	mu        sync.Mutex
	st        *state.Store
	daemon    bool
	started   time.Time
	lastErr   string
	apiErrors uint64
	kernel    KernelReporter
	changed   func()
	slow      func() *pb.SlowPath // the daemon's slow path counters (nil: no daemon)
	paths     state.PathFinder    // egress and MTU towards a first SID (show routes)
}

// NewServer serves st; daemon says whether a daemon (not a one-shot CLI) runs it.
func NewServer(st *state.Store, daemon bool) *Server {
	return &Server{st: st, daemon: daemon, started: time.Now(), paths: state.KernelPath}
}

// Locked runs f with the store under the API lock: the daemon (config, shutdown) and the kernel
// mirror change the store only this way, so they never interleave with an API call.
func (s *Server) Locked(f func(st *state.Store)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.st)
}

// fail records and converts an error (called with s.mu held or not; it takes no lock itself).
func (s *Server) fail(err error) error {
	code := codes.Internal
	var fe *state.FieldError
	var es state.Errors
	var oe *state.OpError
	switch {
	case errors.As(err, &fe), errors.As(err, &es):
		code = codes.InvalidArgument
	case errors.As(err, &oe) && !strings.Contains(oe.Err.Error(), ": write "):
		code = codes.InvalidArgument
	}
	s.lastErr = time.Now().UTC().Format(time.RFC3339) + " " + firstLine(err.Error())
	s.apiErrors++
	return status.Error(code, err.Error())
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func diffToPB(d *state.Diff) *pb.Diff {
	if d == nil {
		return &pb.Diff{}
	}
	return &pb.Diff{Added: d.Added, Changed: d.Changed, Removed: d.Removed}
}

// DiffFromPB converts a reply's diff for printing.
func DiffFromPB(d *pb.Diff) *state.Diff {
	out := &state.Diff{Added: d.GetAdded(), Changed: d.GetChanged(), Removed: d.GetRemoved()}
	for _, p := range []*[]string{&out.Added, &out.Changed, &out.Removed} {
		if *p == nil {
			*p = []string{}
		}
	}
	return out
}

// checkGen refuses a request made for another generation than the running one (0: any).
func (s *Server) checkGen(g uint64) error {
	if g == 0 || g == s.st.Gen() {
		return nil
	}
	s.apiErrors++
	return status.Errorf(codes.FailedPrecondition, "generation is %d, not %d: the state changed since it was read", s.st.Gen(), g)
}

func (s *Server) Commit(ctx context.Context, req *pb.CommitRequest) (*pb.CommitReply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ops, err := OpsFromPB(req.GetOps())
	if err != nil {
		return nil, s.fail(err)
	}
	if err := s.checkGen(req.GetIfGeneration()); err != nil {
		return nil, err
	}
	d, err := s.st.Commit(ops, req.GetDryRun())
	if err != nil {
		return nil, s.fail(err)
	}
	if !req.GetDryRun() && !d.Empty() {
		s.notify()
	}
	return &pb.CommitReply{Diff: diffToPB(d), Generation: s.st.Gen()}, nil
}

func (s *Server) ApplyState(ctx context.Context, req *pb.ApplyStateRequest) (*pb.CommitReply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	desired, err := StateFromPB(req.GetState())
	if err != nil {
		return nil, s.fail(err)
	}
	if err := s.checkGen(req.GetIfGeneration()); err != nil {
		return nil, err
	}
	d, err := s.st.Apply(desired, req.GetDryRun())
	if err != nil {
		return nil, s.fail(err)
	}
	if !req.GetDryRun() && !d.Empty() {
		s.notify()
	}
	return &pb.CommitReply{Diff: diffToPB(d), Generation: s.st.Gen()}, nil
}

const chunkObjects = 20000

func (s *Server) Show(req *pb.ShowRequest, stream pb.Control_ShowServer) error {
	// A consistent copy under the lock; streaming it (slow clients, big tables) holds nothing.
	s.mu.Lock()
	cur, gen := s.st.Current(), s.st.Gen()
	s.mu.Unlock()
	state.FillPaths(cur.Routes, s.paths) // the live egress MTU of every route's tunnel
	head := cur
	head.Routes, head.SIDs = nil, nil
	if err := stream.Send(&pb.StateChunk{State: StateToPB(&head), Generation: gen}); err != nil {
		return err
	}
	for lo := 0; lo < len(cur.Routes); lo += chunkObjects {
		part := state.State{Routes: cur.Routes[lo:min(lo+chunkObjects, len(cur.Routes))]}
		if err := stream.Send(&pb.StateChunk{State: StateToPB(&part)}); err != nil {
			return err
		}
	}
	for lo := 0; lo < len(cur.SIDs); lo += chunkObjects {
		part := state.State{SIDs: cur.SIDs[lo:min(lo+chunkObjects, len(cur.SIDs))]}
		if err := stream.Send(&pb.StateChunk{State: StateToPB(&part)}); err != nil {
			return err
		}
	}
	return nil
}

func sumCounter(m *ebpf.Map, idx uint32) (*pb.Counter, error) {
	var per []dataplane.Seg6xCounter
	if err := m.Lookup(idx, &per); err != nil {
		return nil, err
	}
	c := &pb.Counter{}
	for _, p := range per {
		c.Packets += p.Packets
		c.Bytes += p.Bytes
	}
	return c, nil
}

func (s *Server) Stats(ctx context.Context, req *pb.StatsRequest) (*pb.StatsReply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := s.stats()
	if err != nil {
		return nil, s.fail(err)
	}
	return out, nil
}

func (s *Server) stats() (*pb.StatsReply, error) {
	m := s.st.Maps
	out := &pb.StatsReply{Actions: map[string]*pb.Counter{}, Reasons: map[string]*pb.Counter{}}
	for i, name := range dataplane.Actions {
		c, err := sumCounter(m.ActionStats, uint32(i))
		if err != nil {
			return nil, err
		}
		out.Actions[name] = c
	}
	for _, r := range dataplane.ReasonTable {
		c, err := sumCounter(m.ReasonStats, uint32(r.Value))
		if err != nil {
			return nil, err
		}
		if c.Packets > 0 {
			out.Reasons[r.Name] = c
		}
	}
	for _, p := range s.st.Policies() {
		c, err := sumCounter(m.PolicyStats, p.ID)
		if err != nil {
			return nil, err
		}
		ps := &pb.PolicyStats{Id: p.ID, Mode: p.Mode, Routes: uint32(p.Routes), Src: p.UsedSrc.String(), Count: c}
		for _, a := range p.Segs {
			ps.Segs = append(ps.Segs, a.String())
		}
		out.Policies = append(out.Policies, ps)
	}
	for _, sd := range s.st.SIDs() {
		c, err := sumCounter(m.SidStats, sd.ID)
		if err != nil {
			return nil, err
		}
		out.Sids = append(out.Sids, &pb.SidStats{Sid: sd.SID.String(), Action: sd.Action, Count: c})
	}
	if s.slow != nil {
		out.SlowPath = s.slow()
	}
	return out, nil
}

// SetSlowPath attaches the daemon's slow path: report gives its counters (Stats, metrics).
func (s *Server) SetSlowPath(report func() *pb.SlowPath) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slow = report
}

func (s *Server) Status(ctx context.Context, req *pb.StatusRequest) (*pb.StatusReply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status(), nil
}

func (s *Server) status() *pb.StatusReply {
	n := s.st.Counts()
	out := &pb.StatusReply{Version: Version, Daemon: s.daemon, StartedUnix: s.started.Unix(), Generation: s.st.Gen(),
		Tenants: uint32(n.Tenants), Routes4: uint32(n.Routes4), Routes6: uint32(n.Routes6), Policies: uint32(n.Policies),
		Sids: uint32(n.SIDs), LastError: s.lastErr, ApiErrors: s.apiErrors, NexthopCacheMs: s.st.NextHopCacheMs(),
		Ports: PortClassesToPB(s.st.Ports())}
	d := s.st.Domain()
	out.Domain = domainToPB(&d)
	if b, err := os.ReadFile("/proc/sys/kernel/bpf_stats_enabled"); err == nil {
		out.BpfStats = strings.TrimSpace(string(b)) == "1"
	}
	seen := map[uint32]bool{}
	for _, it := range s.st.Interfaces() {
		pi := ifaceToPB(&it)
		if id, err := dataplane.ProgramID(s.st.Dir, it.Ifindex); err == nil {
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
