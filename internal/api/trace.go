package api

// trace.go: the Trace and Explain RPCs. Trace turns the request's filter into the data plane's
// trace_cfg, arms the traced build (dataplane.ArmTrace), streams the ring's records as TraceRecords
// (names for interfaces, tenants, reasons, behaviors, FIB results) and disarms when the count, the
// duration or the caller ends it. Explain runs one frame through the traced build on the live maps.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/frame"
	"github.com/seg6x/seg6x/internal/state"
)

// One trace per process (the server of a daemon, or of a one-shot CLI).
var traceMu sync.Mutex

// defaultTraceRate is the per-CPU records/s limit when the request sets none.
const defaultTraceRate = 1000

// traceClasses and traceActions name the record's class and action (bpf/structs.h, XDP values).
var (
	traceClasses = []string{"not-ours", "tenant", "sid", "boundary", "malformed"}
	traceActions = map[string]uint32{"drop": dataplane.XDPDrop, "pass": dataplane.XDPPass, "redirect": dataplane.XDPRedirect}
	fibResults   = map[int32]string{0: "success", 1: "blackhole", 2: "unreachable", 3: "prohibit", 4: "not-forwarded",
		5: "forwarding-disabled", 6: "unsupported-lwt", 7: "no-neigh", 8: "frag-needed", 9: "no-src-addr", 100: "egress-not-attached"}
)

// traceConfig is the data plane filter for f (names resolved in st).
func traceConfig(st *state.Store, req *pb.TraceRequest) (dataplane.Seg6xTraceCfg, error) {
	var c dataplane.Seg6xTraceCfg
	f := req.GetFilter()
	set := func(flag dataplane.Seg6xTraceFilterFlags) { c.Filter |= uint32(flag) }
	if d := f.GetDev(); d != "" {
		it, err := net.InterfaceByName(d)
		if err != nil {
			return c, fmt.Errorf("dev %q: %v", d, err)
		}
		c.Ifindex = uint32(it.Index)
		set(dataplane.Seg6xTraceFilterFlagsTF_IFINDEX)
	}
	if f != nil && f.Vlan != nil {
		v := f.GetVlan()
		if v > 4094 {
			return c, fmt.Errorf("vlan %d: want 0 (untagged) to 4094", v)
		}
		c.Vlan = uint16(v)
		set(dataplane.Seg6xTraceFilterFlagsTF_VLAN)
	}
	if t := f.GetTenant(); t != "" {
		id, ok := st.TableIDOf(t)
		if !ok {
			return c, fmt.Errorf("tenant %q: no such tenant", t)
		}
		c.Table = id
		set(dataplane.Seg6xTraceFilterFlagsTF_TABLE)
	}
	for _, x := range []struct {
		name, v string
		addr    *[16]uint8
		plen    *uint8
		flag    dataplane.Seg6xTraceFilterFlags
	}{{"src", f.GetSrc(), &c.Src, &c.SrcPlen, dataplane.Seg6xTraceFilterFlagsTF_SRC},
		{"dst", f.GetDst(), &c.Dst, &c.DstPlen, dataplane.Seg6xTraceFilterFlagsTF_DST}} {
		if x.v == "" {
			continue
		}
		p, err := state.ParsePrefix(x.v)
		if err != nil {
			return c, fmt.Errorf("%s: %v", x.name, err)
		}
		p = p.Masked()
		*x.addr = p.Addr().As16()
		bits := p.Bits()
		if p.Addr().Is4() {
			bits += 96
		}
		*x.plen = uint8(bits)
		set(x.flag)
	}
	if pr := f.GetProto(); pr != "" {
		n, ok := frame.ProtoNumber(strings.ToLower(pr))
		if !ok {
			return c, fmt.Errorf("proto %q: want tcp, udp, icmp, icmpv6 or a number 0-255", pr)
		}
		c.Proto = n
		set(dataplane.Seg6xTraceFilterFlagsTF_PROTO)
	}
	for _, x := range []struct {
		name string
		v    uint32
		to   *uint16
		flag dataplane.Seg6xTraceFilterFlags
	}{{"sport", f.GetSport(), &c.Sport, dataplane.Seg6xTraceFilterFlagsTF_SPORT},
		{"dport", f.GetDport(), &c.Dport, dataplane.Seg6xTraceFilterFlagsTF_DPORT}} {
		if x.v == 0 {
			continue
		}
		if x.v > 65535 {
			return c, fmt.Errorf("%s %d: more than 65535", x.name, x.v)
		}
		*x.to = uint16(x.v)
		set(x.flag)
	}
	if s := f.GetSid(); s != "" {
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is6() || a.Is4In6() {
			return c, fmt.Errorf("sid %q: not an IPv6 address", s)
		}
		c.Sid = a.As16()
		set(dataplane.Seg6xTraceFilterFlagsTF_SID)
	}
	if p := f.GetPolicy(); p != 0 {
		c.Policy = p
		set(dataplane.Seg6xTraceFilterFlagsTF_POLICY)
	}
	if r := f.GetReason(); r != "" {
		v := dataplane.ReasonIndex(strings.ToUpper(r))
		if v <= 0 {
			return c, fmt.Errorf("reason %q: not a reason (seg6x stats --help lists them)", r)
		}
		c.Reason = uint16(v)
		set(dataplane.Seg6xTraceFilterFlagsTF_REASON)
	}
	for _, a := range f.GetActions() {
		v, ok := traceActions[strings.ToLower(a)]
		if !ok {
			return c, fmt.Errorf("action %q: want drop, pass or redirect", a)
		}
		c.ActionMask |= 1 << v
		set(dataplane.Seg6xTraceFilterFlagsTF_ACTIONS)
	}
	if cl := f.GetClass(); cl != "" {
		i := indexOf(traceClasses, strings.ToLower(cl))
		if i < 0 {
			return c, fmt.Errorf("class %q: want %s", cl, strings.Join(traceClasses, ", "))
		}
		c.Class = uint8(i)
		set(dataplane.Seg6xTraceFilterFlagsTF_CLASS)
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

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// Trace streams the records of packets matching the request.
func (s *Server) Trace(req *pb.TraceRequest, stream pb.Control_TraceServer) error {
	if !traceMu.TryLock() {
		return status.Error(codes.FailedPrecondition, "a trace (or capture) already runs on this instance; one at a time")
	}
	defer traceMu.Unlock()
	var cfg dataplane.Seg6xTraceCfg
	var dir string
	var opts state.ProgramOptions
	var err error
	s.ctl.Read(func(st *state.Store) {
		dir, opts = st.Dir, st.ProgramOptions()
		if dataplane.MapsOf(st) == nil {
			err = status.Error(codes.FailedPrecondition, "tracing needs the BPF data plane")
		} else if cfg, err = traceConfig(st, req); err != nil {
			err = status.Error(codes.InvalidArgument, err.Error())
		}
	})
	if err != nil {
		return err
	}
	// Loading the traced builds takes about a second: not under the store's lock.
	tr, err := dataplane.ArmTrace(dir, opts, cfg)
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
		tr.Ring.SetDeadline(dl)
		rec, err := tr.Ring.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if err != nil {
			return status.Error(codes.Internal, "reading the trace ring: "+err.Error())
		}
		r, err := decodeTraceSample(rec.RawSample)
		if err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		if err := stream.Send(&pb.TraceEvent{Event: &pb.TraceEvent_Record{Record: names.record(r)}}); err != nil {
			return err
		}
		sent++
	}
	sum, err := tr.Counts()
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return stream.Send(&pb.TraceEvent{Event: &pb.TraceEvent_Summary{Summary: &pb.TraceSummary{Matched: sum.Matched,
		Emitted: sum.Emitted, SampledOut: sum.SampledOut, RateLimited: sum.RateLimited, RingFull: sum.RingFull,
		Programs: uint32(tr.Programs())}}})
}

// traceSample is a decoded ring record.
type traceSample struct {
	rec    dataplane.Seg6xTraceRec
	rx, tx []byte
}

func decodeTraceSample(b []byte) (traceSample, error) {
	var t traceSample
	n := dataplane.TraceRecordSize
	if len(b) < n {
		return t, fmt.Errorf("trace record of %d bytes, want at least %d", len(b), n)
	}
	if _, err := binary.Decode(b[:n], binary.NativeEndian, &t.rec); err != nil {
		return t, err
	}
	rx, tx := int(t.rec.RxLen), int(t.rec.TxLen)
	if len(b) < n+rx+tx {
		return t, fmt.Errorf("trace record of %d bytes, want %d", len(b), n+rx+tx)
	}
	t.rx = append([]byte(nil), b[n:n+rx]...)
	t.tx = append([]byte(nil), b[n+rx:n+rx+tx]...)
	return t, nil
}

// namer names interfaces and tenants (read once per trace; an unknown one is shown by number).
type namer struct {
	devs    map[uint32]string
	tenants map[uint32]state.Tenant // by data plane table id
	sids    map[uint32]string       // configured SIDs (an address, or ADDR/LEN) by counter id
}

func newNamer(s *Server) *namer {
	n := devNamer()
	s.ctl.Read(n.tenantsOf)
	return n
}

// devNamer names the interfaces; its tenants come from tenantsOf.
func devNamer() *namer {
	n := &namer{devs: map[uint32]string{}, tenants: map[uint32]state.Tenant{}, sids: map[uint32]string{}}
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

func addrOf(a [16]uint8) string {
	x := netip.AddrFrom16(a).Unmap()
	if x.IsUnspecified() && x.Is6() {
		return ""
	}
	return x.String()
}

func mac(m [6]uint8) string {
	if m == ([6]uint8{}) {
		return ""
	}
	return net.HardwareAddr(m[:]).String()
}

var portRoles = []struct {
	flag dataplane.Seg6xPortFlags
	name string
}{{dataplane.Seg6xPortFlagsPORT_F_SIDS, "fabric"}, {dataplane.Seg6xPortFlagsPORT_F_BOUNDARY, "access"},
	{dataplane.Seg6xPortFlagsPORT_F_TENANT, "tenant"}, {dataplane.Seg6xPortFlagsPORT_F_SID_SOURCES, "sid-sources"},
	{dataplane.Seg6xPortFlagsPORT_F_KERNEL_FALLBACK, "kernel-fallback"}}

// record is the API's form of a data plane record.
func (n *namer) record(t traceSample) *pb.TraceRecord {
	r := &t.rec
	has := func(f dataplane.Seg6xTraceFlags) bool { return r.Flags&uint32(f) != 0 }
	out := &pb.TraceRecord{TimeUnixNs: monoToUnix(r.TsNs), Hook: "xdp", Dev: n.dev(r.Ifindex), Ifindex: r.Ifindex,
		Vlan: uint32(r.Vlan), Action: actionName(uint32(r.Action)), FrameLen: r.FrameLen, OutLen: r.OutLen, Rx: t.rx, Tx: t.tx,
		SlBefore: -1, SlAfter: -1}
	if has(dataplane.Seg6xTraceFlagsTRACE_F_TC) {
		out.Hook = "tc"
	}
	if int(r.Class) < len(traceClasses) {
		out.Class = traceClasses[r.Class]
	}
	if r.Reason != 0 {
		out.Reason = reasonName(int(r.Reason))
	}
	if has(dataplane.Seg6xTraceFlagsTRACE_F_PORT) {
		for _, pr := range portRoles {
			if r.PortFlags&uint32(pr.flag) != 0 {
				out.PortRoles = append(out.PortRoles, pr.name)
			}
		}
		if t, ok := n.tenants[r.Table]; ok && r.PortFlags&uint32(dataplane.Seg6xPortFlagsPORT_F_TENANT) != 0 {
			out.Tenant, out.Table = t.Name, t.Table
		}
	}
	if has(dataplane.Seg6xTraceFlagsTRACE_F_ROUTE) {
		a := netip.AddrFrom16(r.RouteAddr)
		bits := int(r.RoutePlen)
		if a.Is4In6() {
			a = a.Unmap()
		}
		out.Route = netip.PrefixFrom(a, bits).String()
		out.Policy = r.Policy
	}
	if has(dataplane.Seg6xTraceFlagsTRACE_F_SID) {
		out.Sid = addrOf(r.Sid)
		if name, ok := n.sids[r.SidId]; ok && name != out.Sid {
			out.Sid = name + " (" + out.Sid + ")" // a SID served by prefix, and the address that reached it
		}
		out.Behavior = behaviorName(r.Behavior)
		out.Chain = uint32(r.Chain)
		switch {
		case !has(dataplane.Seg6xTraceFlagsTRACE_F_SRH_READ):
			out.SlBefore, out.SlAfter = -2, -2
		case r.SlBefore != 0xFF:
			out.SlBefore, out.SlAfter = int32(r.SlBefore), int32(r.SlAfter)
		}
		out.SrhPopped = has(dataplane.Seg6xTraceFlagsTRACE_F_SRH_POPPED)
	}
	if has(dataplane.Seg6xTraceFlagsTRACE_F_FIB) {
		f := &pb.TraceFib{Table: r.FibTable, Dst: addrOf(r.FibDst), Rc: r.FibRc, Cached: has(dataplane.Seg6xTraceFlagsTRACE_F_FIB_CACHED),
			Mtu: r.FibMtu}
		f.Result = fibResults[r.FibRc]
		if f.Result == "" {
			f.Result = "code " + strconv.Itoa(int(r.FibRc))
		}
		if r.FibRc == 0 || r.FibRc == 7 || r.FibRc == 100 {
			f.EgressIfindex = r.FibIfindex
			f.Egress = n.dev(r.FibIfindex)
			f.NextHop, f.Dmac, f.Smac = addrOf(r.FibNh), mac(r.Dmac), mac(r.Smac)
		}
		out.Fib = f
	}
	out.Outer = &pb.TraceAddr{Src: addrOf(r.OuterSrc), Dst: addrOf(r.OuterDst), Proto: uint32(r.OuterProto)}
	if has(dataplane.Seg6xTraceFlagsTRACE_F_INNER) {
		out.Inner = &pb.TraceAddr{Src: addrOf(r.InnerSrc), Dst: addrOf(r.InnerDst), Proto: uint32(r.InnerProto)}
	}
	if has(dataplane.Seg6xTraceFlagsTRACE_F_L4) {
		out.Sport, out.Dport = uint32(r.Sport), uint32(r.Dport)
	}
	return out
}

func actionName(a uint32) string {
	for name, v := range traceActions {
		if v == a {
			return name
		}
	}
	return "action " + strconv.Itoa(int(a))
}

func reasonName(v int) string {
	if n := dataplane.ReasonName(v); n != "" {
		return n
	}
	return "reason " + strconv.Itoa(v)
}

func behaviorName(code uint8) string {
	for i := range state.Behaviors {
		if state.Behaviors[i].Code == code {
			return state.Behaviors[i].Name
		}
	}
	return "behavior " + strconv.Itoa(int(code))
}

// monoToUnix turns a bpf_ktime_get_ns() time into wall-clock time (now minus its age).
func monoToUnix(ns uint64) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return time.Now().UnixNano()
	}
	return time.Now().UnixNano() - (ts.Nano() - int64(ns))
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
	var desired state.State
	if req.GetState() != nil {
		if desired, err = StateFromPB(req.GetState()); err != nil {
			return nil, grpcError(err)
		}
	}
	s.mu.Lock()
	slowReader := s.slow != nil
	s.mu.Unlock()
	names := devNamer()
	var dir string
	var opts state.ProgramOptions
	var im *state.Image
	bpf := true
	s.ctl.Read(func(st *state.Store) {
		bpf = dataplane.MapsOf(st) != nil
		dir, opts = st.Dir, st.ProgramOptions()
		if req.GetState() == nil {
			names.tenantsOf(st)
			return
		}
		_, err = st.Preview(desired, func(next *state.Store) {
			im, opts = next.Image(), next.ProgramOptions()
			names.tenantsOf(next)
		})
	})
	if err != nil {
		return nil, grpcError(err)
	}
	if !bpf {
		return nil, status.Error(codes.FailedPrecondition, "explain needs the BPF data plane")
	}
	// Loading the traced build takes a while: not under the store's lock.
	var x *dataplane.Explainer
	if im != nil {
		x, err = dataplane.NewImageExplainer(im, opts, slowReader)
	} else {
		x, err = dataplane.NewExplainer(dir, opts, slowReader)
	}
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	defer x.Close()
	e, err := x.Run(uint32(it.Index), req.GetFrame())
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	r := names.record(traceSample{rec: e.Record, rx: req.GetFrame(), tx: e.Out})
	r.TimeUnixNs = time.Now().UnixNano()
	r.OutLen = uint32(len(e.Out))
	if e.Record.Action == dataplane.XDPDrop {
		r.Tx, r.OutLen = nil, 0
	}
	return &pb.ExplainReply{Record: r}, nil
}
