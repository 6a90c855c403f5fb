package dataplane

// observe.go: the BPF data plane as an Observer (state/observe.go): counters read from the stats
// maps, traces (ArmTrace) whose ring records are decoded here into state.TraceRecords, explanations
// (Explainer) decoded the same way, and the next-hop cache's generation. Everything the program's
// records encode (actions, classes, reasons, port flags, FIB result codes, behaviors) is named here,
// so no front end reads a raw record.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

// Stats reads the counters; see state.Observer.
func (b *BPF) Stats(policies, sids []uint32) (*state.Stats, error) {
	m := b.Maps
	out := &state.Stats{Actions: map[string]state.Counter{}, Reasons: map[string]state.Counter{},
		Policies: map[uint32]state.Counter{}, SIDs: map[uint32]state.Counter{}}
	for i, name := range Actions {
		c, err := sumCounter(m.ActionStats, uint32(i))
		if err != nil {
			return nil, err
		}
		out.Actions[name] = c
	}
	for _, r := range ReasonTable {
		c, err := sumCounter(m.ReasonStats, uint32(r.Value))
		if err != nil {
			return nil, err
		}
		out.Reasons[r.Name] = c
	}
	for _, id := range policies {
		c, err := sumCounter(m.PolicyStats, id)
		if err != nil {
			return nil, err
		}
		out.Policies[id] = c
	}
	for _, id := range sids {
		c, err := sumCounter(m.SidStats, id)
		if err != nil {
			return nil, err
		}
		out.SIDs[id] = c
	}
	return out, nil
}

// PluginStats reads the counters of the plugins in slots and of the plugin SIDs of binds.
func (b *BPF) PluginStats(slots []uint32, binds []state.PluginBind) (*state.PluginStats, error) {
	m := b.Maps
	out := &state.PluginStats{Slots: map[uint32]state.PluginCounters{}, Binds: map[uint32][]state.Counter{}, Own: map[uint32][]state.Counter{}}
	n := uint32(len(state.PluginOutcomes))
	for _, s := range slots {
		if s >= PluginSlots {
			return nil, fmt.Errorf("plugin slot %d: slots are below %d", s, PluginSlots)
		}
		pc := state.PluginCounters{Outcomes: make([]state.Counter, n), Reasons: make([]state.Counter, PluginReasons)}
		for o := uint32(0); o < n; o++ {
			c, err := sumCounter(m.PluginStats, s*uint32(PluginOutcomes)+o)
			if err != nil {
				return nil, err
			}
			pc.Outcomes[o] = c
		}
		for r := uint32(0); r < PluginReasons; r++ {
			c, err := sumCounter(m.PluginReasonStats, s*PluginReasons+r)
			if err != nil {
				return nil, err
			}
			pc.Reasons[r] = c
		}
		out.Slots[s] = pc
	}
	for _, pb := range binds {
		bind := pb.Bind
		if pb.Counters > 0 {
			own, err := PluginCounters(b.Dir, pb.Digest, bind, pb.Counters)
			if err != nil {
				return nil, err
			}
			out.Own[bind] = own
		}
		if bind >= PluginBinds {
			return nil, fmt.Errorf("plugin bind %d: binds are below %d", bind, PluginBinds)
		}
		cs := make([]state.Counter, n)
		for o := uint32(0); o < n; o++ {
			c, err := sumCounter(m.PluginSidStats, bind*uint32(PluginOutcomes)+o)
			if err != nil {
				return nil, err
			}
			cs[o] = c
		}
		out.Binds[bind] = cs
	}
	return out, nil
}

// sumCounter sums the per-CPU counter idx of m.
func sumCounter(m *ebpf.Map, idx uint32) (state.Counter, error) {
	var per []Seg6xCounter
	var c state.Counter
	if err := m.Lookup(idx, &per); err != nil {
		return c, err
	}
	for _, p := range per {
		c.Packets += p.Packets
		c.Bytes += p.Bytes
	}
	return c, nil
}

// InvalidateNextHops makes every cached next hop stale; see state.Observer. It may run while the
// store closes the data plane (the daemon's watcher): it then fails.
func (b *BPF) InvalidateNextHops() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Maps == nil {
		return errors.New("the data plane is closed")
	}
	return bumpGen(b.Maps.NhGen)
}

// Trace arms a trace of every program attached in the instance; see state.Observer.
func (b *BPF) Trace(f state.TraceFilter, opts state.ProgramOptions) (state.TraceSession, error) {
	cfg, err := TraceConfig(f)
	if err != nil {
		return nil, err
	}
	t, err := ArmTrace(b.Dir, opts, cfg)
	if err != nil {
		return nil, err
	}
	return &traceSession{t: t}, nil
}

// traceSession is an armed Trace whose records are decoded.
type traceSession struct{ t *Trace }

func (s *traceSession) Programs() int { return s.t.Programs() }
func (s *traceSession) Close()        { s.t.Close() }

func (s *traceSession) Next(deadline time.Time) (*state.TraceRecord, error) {
	s.t.Ring.SetDeadline(deadline)
	rec, err := s.t.Ring.Read() // os.ErrDeadlineExceeded when none came
	if err != nil {
		return nil, err
	}
	return DecodeTraceSample(rec.RawSample)
}

func (s *traceSession) Summary() (state.TraceSummary, error) {
	c, err := s.t.Counts()
	return state.TraceSummary{Matched: c.Matched, Emitted: c.Emitted, SampledOut: c.SampledOut, RateLimited: c.RateLimited,
		RingFull: c.RingFull}, err
}

// Explain runs one frame through the traced build; see state.Observer.
func (b *BPF) Explain(ifindex uint32, frame []byte, o state.ExplainOptions) (*state.TraceRecord, error) {
	var x *Explainer
	var err error
	if o.Image != nil {
		x, err = NewImageExplainer(o.Image, o.Program, o.SlowReader)
	} else {
		x, err = NewExplainer(b.Dir, o.Program, o.SlowReader)
	}
	if err != nil {
		return nil, err
	}
	defer x.Close()
	e, err := x.Run(ifindex, frame)
	if err != nil {
		return nil, err
	}
	return e.Decode(frame), nil
}

// Decode is the record of an explained frame (frame: the frame given): the time is now, the frame
// leaving is the whole output (none when dropped).
func (e *Explained) Decode(frame []byte) *state.TraceRecord {
	r := DecodeTraceRecord(&e.Record, frame, e.Out)
	r.Time = time.Now()
	r.OutLen = uint32(len(e.Out))
	if e.Record.Action == XDPDrop {
		r.Tx, r.OutLen = nil, 0
	}
	return r
}

// traceActions are the trace's action names (state.TraceActions) by XDP action.
var traceActions = map[string]uint32{"drop": XDPDrop, "pass": XDPPass, "redirect": XDPRedirect}

// fibResults name the FIB lookup's result codes (BPF_FIB_LKUP_RET_*, and the program's own).
var fibResults = map[int32]string{0: "success", 1: "blackhole", 2: "unreachable", 3: "prohibit", 4: "not-forwarded",
	5: "forwarding-disabled", 6: "unsupported-lwt", 7: "no-neigh", 8: "frag-needed", 9: "no-src-addr", 100: "egress-not-attached"}

// fibEgress: results that name an egress (success, no-neigh, egress-not-attached).
func fibEgress(rc int32) bool { return rc == 0 || rc == 7 || rc == 100 }

// portRoles name a port's flags.
var portRoles = []struct {
	flag Seg6xPortFlags
	name string
}{{Seg6xPortFlagsPORT_F_SIDS, "fabric"}, {Seg6xPortFlagsPORT_F_BOUNDARY, "access"},
	{Seg6xPortFlagsPORT_F_TENANT, "tenant"}, {Seg6xPortFlagsPORT_F_SID_SOURCES, "sid-sources"},
	{Seg6xPortFlagsPORT_F_KERNEL_FALLBACK, "kernel-fallback"}}

// TraceConfig is the program's trace_cfg for filter f.
func TraceConfig(f state.TraceFilter) (Seg6xTraceCfg, error) {
	var c Seg6xTraceCfg
	set := func(flag Seg6xTraceFilterFlags) { c.Filter |= uint32(flag) }
	if f.Ifindex != 0 {
		c.Ifindex = f.Ifindex
		set(Seg6xTraceFilterFlagsTF_IFINDEX)
	}
	if f.VLAN != nil {
		c.Vlan = *f.VLAN
		set(Seg6xTraceFilterFlagsTF_VLAN)
	}
	if f.Table != nil {
		c.Table = *f.Table
		set(Seg6xTraceFilterFlagsTF_TABLE)
	}
	for _, x := range []struct {
		p    netip.Prefix
		addr *[16]uint8
		plen *uint8
		flag Seg6xTraceFilterFlags
	}{{f.Src, &c.Src, &c.SrcPlen, Seg6xTraceFilterFlagsTF_SRC}, {f.Dst, &c.Dst, &c.DstPlen, Seg6xTraceFilterFlagsTF_DST}} {
		if !x.p.IsValid() {
			continue
		}
		p := x.p.Masked()
		*x.addr = p.Addr().As16()
		bits := p.Bits()
		if p.Addr().Is4() {
			bits += 96
		}
		*x.plen = uint8(bits)
		set(x.flag)
	}
	if f.Proto != nil {
		c.Proto = *f.Proto
		set(Seg6xTraceFilterFlagsTF_PROTO)
	}
	if f.Sport != 0 {
		c.Sport = f.Sport
		set(Seg6xTraceFilterFlagsTF_SPORT)
	}
	if f.Dport != 0 {
		c.Dport = f.Dport
		set(Seg6xTraceFilterFlagsTF_DPORT)
	}
	if f.SID.IsValid() {
		c.Sid = f.SID.As16()
		set(Seg6xTraceFilterFlagsTF_SID)
	}
	if f.Policy != 0 {
		c.Policy = f.Policy
		set(Seg6xTraceFilterFlagsTF_POLICY)
	}
	if f.Reason != "" {
		v := ReasonIndex(f.Reason)
		if v <= 0 {
			return c, fmt.Errorf("reason %q: not a reason", f.Reason)
		}
		c.Reason = uint16(v)
		set(Seg6xTraceFilterFlagsTF_REASON)
	}
	for _, a := range f.Actions {
		v, ok := traceActions[a]
		if !ok {
			return c, fmt.Errorf("action %q: not a trace action", a)
		}
		c.ActionMask |= 1 << v
		set(Seg6xTraceFilterFlagsTF_ACTIONS)
	}
	if f.Class != "" {
		i := slices.Index(state.TraceClasses, f.Class)
		if i < 0 {
			return c, fmt.Errorf("class %q: not a trace class", f.Class)
		}
		c.Class = uint8(i)
		set(Seg6xTraceFilterFlagsTF_CLASS)
	}
	c.Sample, c.Rate, c.Snaplen = f.Sample, f.Rate, f.Snaplen
	return c, nil
}

// DecodeTraceSample decodes one ring record: the fixed part, then the frame as it came in and as it
// left.
func DecodeTraceSample(b []byte) (*state.TraceRecord, error) {
	var rec Seg6xTraceRec
	n := TraceRecordSize
	if len(b) < n {
		return nil, fmt.Errorf("trace record of %d bytes, want at least %d", len(b), n)
	}
	if _, err := binary.Decode(b[:n], binary.NativeEndian, &rec); err != nil {
		return nil, err
	}
	rx, tx := int(rec.RxLen), int(rec.TxLen)
	if len(b) < n+rx+tx {
		return nil, fmt.Errorf("trace record of %d bytes, want %d", len(b), n+rx+tx)
	}
	return DecodeTraceRecord(&rec, append([]byte(nil), b[n:n+rx]...), append([]byte(nil), b[n+rx:n+rx+tx]...)), nil
}

// DecodeTraceRecord names what record r says (rx, tx: the frames recorded with it).
func DecodeTraceRecord(r *Seg6xTraceRec, rx, tx []byte) *state.TraceRecord {
	has := func(f Seg6xTraceFlags) bool { return r.Flags&uint32(f) != 0 }
	out := &state.TraceRecord{Time: monoTime(r.TsNs), Hook: "xdp", Ifindex: r.Ifindex, VLAN: r.Vlan,
		Action: traceActionName(uint32(r.Action)), FrameLen: r.FrameLen, OutLen: r.OutLen, Rx: rx, Tx: tx}
	if has(Seg6xTraceFlagsTRACE_F_TC) {
		out.Hook = "tc"
	}
	if int(r.Class) < len(state.TraceClasses) {
		out.Class = state.TraceClasses[r.Class]
	}
	if r.Reason != 0 {
		out.Reason = ReasonName(int(r.Reason))
		if out.Reason == "" {
			out.Reason = "reason " + strconv.Itoa(int(r.Reason))
		}
	}
	if has(Seg6xTraceFlagsTRACE_F_PORT) {
		p := &state.TracePort{Table: r.Table, Tenant: r.PortFlags&uint32(Seg6xPortFlagsPORT_F_TENANT) != 0}
		for _, pr := range portRoles {
			if r.PortFlags&uint32(pr.flag) != 0 {
				p.Roles = append(p.Roles, pr.name)
			}
		}
		out.Port = p
	}
	if has(Seg6xTraceFlagsTRACE_F_ROUTE) {
		a := netip.AddrFrom16(r.RouteAddr)
		if a.Is4In6() {
			a = a.Unmap()
		}
		out.Route = &state.TraceRoute{Prefix: netip.PrefixFrom(a, int(r.RoutePlen)), Policy: r.Policy}
	}
	if has(Seg6xTraceFlagsTRACE_F_SID) {
		s := &state.TraceSID{Addr: traceAddr(r.Sid), ID: r.SidId, Behavior: behaviorName(r.Behavior), Chain: uint32(r.Chain),
			SLBefore: -1, SLAfter: -1, SRHPopped: has(Seg6xTraceFlagsTRACE_F_SRH_POPPED)}
		switch {
		case !has(Seg6xTraceFlagsTRACE_F_SRH_READ):
			s.SLBefore, s.SLAfter = -2, -2
		case r.SlBefore != 0xFF:
			s.SLBefore, s.SLAfter = int32(r.SlBefore), int32(r.SlAfter)
		}
		if o := int(r.PluginOutcome) - 1; o >= 0 && o < len(state.PluginOutcomes) {
			s.Plugin = state.PluginOutcomes[o]
		}
		out.SID = s
	}
	if has(Seg6xTraceFlagsTRACE_F_FIB) {
		f := &state.TraceFIB{Table: r.FibTable, Dst: traceAddr(r.FibDst), Rc: r.FibRc, Cached: has(Seg6xTraceFlagsTRACE_F_FIB_CACHED),
			MTU: r.FibMtu, Result: fibResults[r.FibRc]}
		if f.Result == "" {
			f.Result = "code " + strconv.Itoa(int(r.FibRc))
		}
		if fibEgress(r.FibRc) {
			f.Egress = &state.TraceEgress{Ifindex: r.FibIfindex, NextHop: traceAddr(r.FibNh), DMAC: traceMAC(r.Dmac), SMAC: traceMAC(r.Smac)}
		}
		out.FIB = f
	}
	out.Outer = state.TraceAddrs{Src: traceAddr(r.OuterSrc), Dst: traceAddr(r.OuterDst), Proto: r.OuterProto}
	if has(Seg6xTraceFlagsTRACE_F_INNER) {
		out.Inner = &state.TraceAddrs{Src: traceAddr(r.InnerSrc), Dst: traceAddr(r.InnerDst), Proto: r.InnerProto}
	}
	if has(Seg6xTraceFlagsTRACE_F_L4) {
		out.Sport, out.Dport = r.Sport, r.Dport
	}
	return out
}

// traceAddr is an address of a record: IPv4 unmapped; all zeros (none) invalid.
func traceAddr(a [16]uint8) netip.Addr {
	x := netip.AddrFrom16(a).Unmap()
	if x.IsUnspecified() && x.Is6() {
		return netip.Addr{}
	}
	return x
}

// traceMAC is a MAC of a record (all zeros: none, nil).
func traceMAC(m [6]uint8) net.HardwareAddr {
	if m == ([6]uint8{}) {
		return nil
	}
	return net.HardwareAddr(m[:])
}

func traceActionName(a uint32) string {
	for name, v := range traceActions {
		if v == a {
			return name
		}
	}
	return "action " + strconv.Itoa(int(a))
}

func behaviorName(code uint8) string {
	for i := range model.Behaviors {
		if model.Behaviors[i].Code == code {
			return model.Behaviors[i].Name
		}
	}
	return "behavior " + strconv.Itoa(int(code))
}

// MonoTime turns a bpf_ktime_get_ns() time into wall-clock time (now minus its age).
func MonoTime(ns uint64) time.Time { return monoTime(ns) }

// monoTime turns a bpf_ktime_get_ns() time into wall-clock time (now minus its age).
func monoTime(ns uint64) time.Time {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return time.Now()
	}
	return time.Now().Add(-time.Duration(ts.Nano() - int64(ns)))
}
