package api

// trace.go: the Trace and Explain RPCs. Trace turns the request's filter into a state.TraceFilter,
// starts a trace through the store's data plane (state.Observer), streams its decoded records as
// TraceRecords (names for interfaces, tenants and SIDs added here) and ends it when the count, the
// duration or the caller ends it. Explain runs one frame through the data plane's traced program on
// its live tables, or on private ones holding the request's state.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/frame"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

// One trace per process (the server of a daemon, or of a one-shot CLI).
var traceMu sync.Mutex

// defaultTraceRate is the per-CPU records/s limit when the request sets none.
const defaultTraceRate = 1000

// traceFilter is the data plane filter for the request (names resolved in st).
func traceFilter(st *state.Store, req *pb.TraceRequest) (state.TraceFilter, error) {
	var c state.TraceFilter
	f := req.GetFilter()
	if d := f.GetDev(); d != "" {
		it, err := net.InterfaceByName(d)
		if err != nil {
			return c, fmt.Errorf("dev %q: %v", d, err)
		}
		c.Ifindex = uint32(it.Index)
	}
	if f != nil && f.Vlan != nil {
		v := f.GetVlan()
		if v > 4094 {
			return c, fmt.Errorf("vlan %d: want 0 (untagged) to 4094", v)
		}
		vlan := uint16(v)
		c.VLAN = &vlan
	}
	if t := f.GetTenant(); t != "" {
		id, ok := st.TableIDOf(t)
		if !ok {
			return c, fmt.Errorf("tenant %q: no such tenant", t)
		}
		c.Table = &id
	}
	for _, x := range []struct {
		name, v string
		to      *netip.Prefix
	}{{"src", f.GetSrc(), &c.Src}, {"dst", f.GetDst(), &c.Dst}} {
		if x.v == "" {
			continue
		}
		p, err := model.ParsePrefix(x.v)
		if err != nil {
			return c, fmt.Errorf("%s: %v", x.name, err)
		}
		*x.to = p.Masked()
	}
	if pr := f.GetProto(); pr != "" {
		n, ok := frame.ProtoNumber(strings.ToLower(pr))
		if !ok {
			return c, fmt.Errorf("proto %q: want tcp, udp, icmp, icmpv6 or a number 0-255", pr)
		}
		c.Proto = &n
	}
	for _, x := range []struct {
		name string
		v    uint32
		to   *uint16
	}{{"sport", f.GetSport(), &c.Sport}, {"dport", f.GetDport(), &c.Dport}} {
		if x.v == 0 {
			continue
		}
		if x.v > 65535 {
			return c, fmt.Errorf("%s %d: more than 65535", x.name, x.v)
		}
		*x.to = uint16(x.v)
	}
	if s := f.GetSid(); s != "" {
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is6() || a.Is4In6() {
			return c, fmt.Errorf("sid %q: not an IPv6 address", s)
		}
		c.SID = a
	}
	c.Policy = f.GetPolicy()
	if r := f.GetReason(); r != "" {
		name := strings.ToUpper(r)
		if dataplane.ReasonIndex(name) <= 0 {
			return c, fmt.Errorf("reason %q: not a reason (seg6x stats --help lists them)", r)
		}
		c.Reason = name
	}
	for _, a := range f.GetActions() {
		name := strings.ToLower(a)
		if slices.Index(state.TraceActions, name) < 0 {
			return c, fmt.Errorf("action %q: want drop, pass or redirect", a)
		}
		c.Actions = append(c.Actions, name)
	}
	if cl := f.GetClass(); cl != "" {
		name := strings.ToLower(cl)
		if slices.Index(state.TraceClasses, name) < 0 {
			return c, fmt.Errorf("class %q: want %s", cl, strings.Join(state.TraceClasses, ", "))
		}
		c.Class = name
	}
	c.Sample = req.GetSample()
	c.Rate = req.GetRate()
	if c.Rate == 0 {
		c.Rate = defaultTraceRate
	}
	if req.GetSnaplen() > 2048 {
		return c, fmt.Errorf("snaplen %d: at most 2048", req.GetSnaplen())
	}
	c.Snaplen = req.GetSnaplen()
	return c, nil
}

// Trace streams the records of packets matching the request.
func (s *Server) Trace(req *pb.TraceRequest, stream pb.Control_TraceServer) error {
	if !traceMu.TryLock() {
		return status.Error(codes.FailedPrecondition, "a trace (or capture) already runs on this instance; one at a time")
	}
	defer traceMu.Unlock()
	var filter state.TraceFilter
	var obs state.Observer
	var opts state.ProgramOptions
	var err error
	s.ctl.Read(func(st *state.Store) {
		obs, opts = st.Observer(), st.ProgramOptions()
		if filter, err = traceFilter(st, req); err != nil {
			err = status.Error(codes.InvalidArgument, err.Error())
		}
	})
	if err != nil {
		return err
	}
	// Loading the traced builds takes about a second: not under the store's lock.
	tr, err := obs.Trace(filter, opts)
	if err != nil {
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	defer tr.Close()
	if tr.Programs() == 0 {
		return status.Error(codes.FailedPrecondition, "no interface is attached: nothing to trace")
	}
	var end time.Time
	if d := req.GetDurationMs(); d > 0 {
		end = time.Now().Add(time.Duration(d) * time.Millisecond)
	}
	names := newNamer(s)
	sent := uint32(0)
	for req.GetCount() == 0 || sent < req.GetCount() {
		if stream.Context().Err() != nil {
			break
		}
		if !end.IsZero() && time.Now().After(end) {
			break
		}
		dl := time.Now().Add(200 * time.Millisecond)
		if !end.IsZero() && end.Before(dl) {
			dl = end
		}
		r, err := tr.Next(dl)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if err != nil {
			return status.Error(codes.Internal, "reading the trace ring: "+err.Error())
		}
		if err := stream.Send(&pb.TraceEvent{Event: &pb.TraceEvent_Record{Record: names.record(r)}}); err != nil {
			return err
		}
		sent++
	}
	sum, err := tr.Summary()
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return stream.Send(&pb.TraceEvent{Event: &pb.TraceEvent_Summary{Summary: &pb.TraceSummary{Matched: sum.Matched,
		Emitted: sum.Emitted, SampledOut: sum.SampledOut, RateLimited: sum.RateLimited, RingFull: sum.RingFull,
		Programs: uint32(tr.Programs())}}})
}

// namer names interfaces and tenants (read once per trace; an unknown one is shown by number).
type namer struct {
	devs    map[uint32]string
	tenants map[uint32]model.Tenant // by data plane table id
	sids    map[uint32]string       // configured SIDs (an address, or ADDR/LEN) by counter id
}

func newNamer(s *Server) *namer {
	n := devNamer()
	s.ctl.Read(n.tenantsOf)
	return n
}

// devNamer names the interfaces; its tenants come from tenantsOf.
func devNamer() *namer {
	n := &namer{devs: map[uint32]string{}, tenants: map[uint32]model.Tenant{}, sids: map[uint32]string{}}
	if its, err := net.Interfaces(); err == nil {
		for _, it := range its {
			n.devs[uint32(it.Index)] = it.Name
		}
	}
	return n
}

// tenantsOf names the tenants of st by their data plane table ids, and its SIDs by counter id.
func (n *namer) tenantsOf(st *state.Store) {
	for _, sd := range st.SIDs() {
		n.sids[sd.ID] = sd.Name()
	}
	for _, t := range st.Tenants() {
		if id, ok := st.TableIDOf(t.Name); ok {
			n.tenants[id] = t
		}
	}
}

func (n *namer) dev(ifindex uint32) string {
	if d, ok := n.devs[ifindex]; ok {
		return d
	}
	return "if" + strconv.Itoa(int(ifindex))
}

func addrOf(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func macOf(m net.HardwareAddr) string {
	if m == nil {
		return ""
	}
	return m.String()
}

// record is the API's form of a data plane record.
func (n *namer) record(r *state.TraceRecord) *pb.TraceRecord {
	out := &pb.TraceRecord{TimeUnixNs: r.Time.UnixNano(), Hook: r.Hook, Dev: n.dev(r.Ifindex), Ifindex: r.Ifindex,
		Vlan: uint32(r.VLAN), Class: r.Class, Action: r.Action, Reason: r.Reason, FrameLen: r.FrameLen, OutLen: r.OutLen,
		Rx: r.Rx, Tx: r.Tx, SlBefore: -1, SlAfter: -1}
	if p := r.Port; p != nil {
		out.PortRoles = p.Roles
		if t, ok := n.tenants[p.Table]; ok && p.Tenant {
			out.Tenant, out.Table = t.Name, t.Table
		}
	}
	if rt := r.Route; rt != nil {
		out.Route, out.Policy = rt.Prefix.String(), rt.Policy
	}
	if sd := r.SID; sd != nil {
		out.Sid = addrOf(sd.Addr)
		if name, ok := n.sids[sd.ID]; ok && name != out.Sid {
			out.Sid = name + " (" + out.Sid + ")" // a SID served by prefix, and the address that reached it
		}
		out.Behavior, out.Chain = sd.Behavior, sd.Chain
		out.SlBefore, out.SlAfter, out.SrhPopped = sd.SLBefore, sd.SLAfter, sd.SRHPopped
		out.PluginOutcome = sd.Plugin
	}
	if f := r.FIB; f != nil {
		pf := &pb.TraceFib{Table: f.Table, Dst: addrOf(f.Dst), Rc: f.Rc, Result: f.Result, Cached: f.Cached, Mtu: f.MTU}
		if e := f.Egress; e != nil {
			pf.EgressIfindex, pf.Egress = e.Ifindex, n.dev(e.Ifindex)
			pf.NextHop, pf.Dmac, pf.Smac = addrOf(e.NextHop), macOf(e.DMAC), macOf(e.SMAC)
		}
		out.Fib = pf
	}
	out.Outer = &pb.TraceAddr{Src: addrOf(r.Outer.Src), Dst: addrOf(r.Outer.Dst), Proto: uint32(r.Outer.Proto)}
	if in := r.Inner; in != nil {
		out.Inner = &pb.TraceAddr{Src: addrOf(in.Src), Dst: addrOf(in.Dst), Proto: uint32(in.Proto)}
	}
	out.Sport, out.Dport = uint32(r.Sport), uint32(r.Dport)
	return out
}

// Explain runs one frame through the traced build: on the live maps, or with req.state on private
// maps holding that state (checked and planned as ApplyState would; nothing is applied).
func (s *Server) Explain(ctx context.Context, req *pb.ExplainRequest) (*pb.ExplainReply, error) {
	it, err := net.InterfaceByName(req.GetDev())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "dev %q: %v", req.GetDev(), err)
	}
	if len(req.GetFrame()) < 14 || len(req.GetFrame()) > 9216 {
		return nil, status.Errorf(codes.InvalidArgument, "frame of %d bytes: want 14 to 9216", len(req.GetFrame()))
	}
	var desired model.State
	if req.GetState() != nil {
		if desired, err = StateFromPB(req.GetState()); err != nil {
			return nil, grpcError(err)
		}
	}
	s.mu.Lock()
	slowReader := s.slow != nil
	s.mu.Unlock()
	names := devNamer()
	var obs state.Observer
	x := state.ExplainOptions{SlowReader: slowReader}
	s.ctl.Read(func(st *state.Store) {
		obs, x.Program = st.Observer(), st.ProgramOptions()
		if req.GetState() == nil {
			names.tenantsOf(st)
			return
		}
		_, err = st.Preview(desired, func(next *state.Store) {
			x.Image, x.Program = next.Image(), next.ProgramOptions()
			names.tenantsOf(next)
		})
	})
	if err != nil {
		return nil, grpcError(err)
	}
	// Loading the traced build takes a while: not under the store's lock.
	e, err := obs.Explain(uint32(it.Index), req.GetFrame(), x)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &pb.ExplainReply{Record: names.record(e)}, nil
}
