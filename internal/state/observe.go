package state

// observe.go: what front ends read from a data plane besides its tables, in the model's terms:
// packet counters (by action and reason name, by policy id, by SID counter id), traces of live
// packets as decoded TraceRecords, explanations of one frame, and the next-hop cache's invalidation.
// Every Dataplane is an Observer (the interface embeds it); front ends reach it through
// Store.Observer() and never learn which data plane they have. The BPF one (internal/dataplane)
// reads its maps and trace ring and decodes the program's records there; a test's fake returns its
// own counts, and the records a test gives it.

import (
	"net"
	"net/netip"
	"time"
)

// Observer is what front ends (the API's stats, trace and explain; the daemon's next-hop watcher)
// ask of a data plane. Stats runs under the store's lock (it reads the maps the store writes);
// Trace, Explain and InvalidateNextHops only use what the data plane pinned when it opened and may
// run without it (loading a traced program takes a second or so).
type Observer interface {
	// Stats reads the counters: every action and reason, and the policies and SIDs asked for (by
	// their counter ids).
	Stats(policies, sids []uint32) (*Stats, error)
	// PluginStats reads the counters of the plugins in slots and of the plugin SIDs of binds.
	PluginStats(slots []uint32, binds []PluginBind) (*PluginStats, error)
	// Trace starts tracing, in every attached program (loaded with opts), the packets f matches.
	Trace(f TraceFilter, opts ProgramOptions) (TraceSession, error)
	// Explain runs one frame, arriving on ifindex, through the traced program without sending it or
	// counting it: on the data plane's tables, or on private tables holding x.Image when it is set.
	Explain(ifindex uint32, frame []byte, x ExplainOptions) (*TraceRecord, error)
	// InvalidateNextHops makes every cached next hop stale (a route, rule, link or neighbor changed).
	InvalidateNextHops() error
}

// Counter is packets and bytes (summed over CPUs).
type Counter struct {
	Packets, Bytes uint64
}

// Stats are the data plane's counters.
type Stats struct {
	Actions  map[string]Counter // every action the program returns, by name (XDP_DROP, ...)
	Reasons  map[string]Counter // every reason, by name (DROP_*, SLOW_*, ICMP_*, PASS_*)
	Policies map[uint32]Counter // the policies asked for, by id
	SIDs     map[uint32]Counter // the SIDs asked for, by counter id (SID.ID)
}

// PluginStats are the counters of plugins (by program slot) and of plugin SIDs (by bind).
type PluginStats struct {
	Slots map[uint32]PluginCounters
	Binds map[uint32][]Counter // by outcome (PluginOutcomes)
	// Own are the counters a plugin keeps per SID itself (SEG6X_COUNTERS), by bind and index.
	Own map[uint32][]Counter
}

// PluginBind is a plugin SID's configuration slot, with its plugin's digest and how many counters
// of its own the plugin keeps per SID.
type PluginBind struct {
	Bind     uint32
	Digest   string
	Counters int
}

// PluginCounters are one plugin's counters: what became of its packets (by outcome, PluginOutcomes)
// and its own drop reasons (by value, 1..15).
type PluginCounters struct {
	Outcomes []Counter
	Reasons  []Counter
}

// PluginOutcomes names what becomes of a packet at a plugin SID, by value: the verdict the function
// returned (abort .. encap, enum seg6x_verdict), or why there was none or it was refused.
var PluginOutcomes = []string{"abort", "drop", "pass", "end", "dt4", "dt6", "dt46", "encap", "empty", "bad_verdict", "malformed"}

// The trace's names of actions and classes (TraceRecord, TraceFilter).
var (
	TraceActions = []string{"drop", "pass", "redirect"}
	TraceClasses = []string{"not-ours", "tenant", "sid", "boundary", "malformed"}
)

// TraceFilter is what a trace records: the packets every field set matches (the zero value: all).
type TraceFilter struct {
	Ifindex      uint32       // the interface the packet came in on (0: any)
	VLAN         *uint16      // its VLAN (0: untagged; nil: any)
	Table        *uint32      // the data plane table of the tenant port it came in on (nil: any)
	Src, Dst     netip.Prefix // its addresses (invalid: any)
	Proto        *uint8       // its protocol (nil: any)
	Sport, Dport uint16       // its ports (0: any)
	SID          netip.Addr   // the local SID it reached (invalid: any)
	Policy       uint32       // the policy it was encapsulated with (0: any)
	Reason       string       // the reason it was counted under (a name; "": any)
	Actions      []string     // what became of it: any of these TraceActions (none: any)
	Class        string       // its class, one of TraceClasses ("": any)
	Sample       uint32       // record one packet in Sample (0, 1: every one)
	Rate         uint32       // records per second and CPU at most
	Snaplen      uint32       // bytes of each frame (in and out) recorded
}

// TraceSession is a running trace; Close ends it.
type TraceSession interface {
	// Programs is how many attached programs the trace armed.
	Programs() int
	// Next waits until deadline for the next record (an error wrapping os.ErrDeadlineExceeded when
	// none came).
	Next(deadline time.Time) (*TraceRecord, error)
	// Summary is the trace's counters so far.
	Summary() (TraceSummary, error)
	Close()
}

// TraceSummary counts what a trace saw.
type TraceSummary struct {
	Matched, Emitted, SampledOut, RateLimited, RingFull uint64
}

// ExplainOptions say where Explain runs a frame.
type ExplainOptions struct {
	Image      *Image         // nil: the data plane's own tables
	Program    ProgramOptions // the program's load-time settings
	SlowReader bool           // a daemon reads the slow path (its answers are a running daemon's)
}

// TraceRecord is what the program did with one packet, decoded.
type TraceRecord struct {
	Time             time.Time // when the program saw it
	Hook             string    // "xdp" or "tc"
	Ifindex          uint32    // where it came in
	VLAN             uint16
	Class            string // a TraceClasses name ("" for a code without one)
	Action           string // a TraceActions name, or "action N"
	Reason           string // the reason's name, "reason N" for one without a name ("": none)
	FrameLen, OutLen uint32
	Rx, Tx           []byte      // the frame as it came in and as it left (up to the snap length)
	Port             *TracePort  // the port entry it met (nil: none)
	Route            *TraceRoute // the route it matched (nil: none)
	SID              *TraceSID   // the local SID it reached (nil: none)
	FIB              *TraceFIB   // the FIB lookup made for it (nil: none)
	Outer            TraceAddrs
	Inner            *TraceAddrs // the inner packet's (nil: none read)
	Sport, Dport     uint16      // 0 when none read
}

// TracePort is a port entry as a record saw it.
type TracePort struct {
	Roles  []string // fabric, access, tenant, sid-sources, kernel-fallback
	Tenant bool     // a tenant port: Table is its tenant's data plane table
	Table  uint32
}

// TraceRoute is a route as a record saw it.
type TraceRoute struct {
	Prefix netip.Prefix
	Policy uint32
}

// TraceSID is a local SID as a record saw it.
type TraceSID struct {
	Addr      netip.Addr // the address that reached it (invalid: none)
	ID        uint32     // its counter id
	Behavior  string     // its behavior's name, or "behavior N"
	Chain     uint32     // SIDs processed before it in the same pass
	SLBefore  int32      // segments left before and after (-1: no SRH, -2: the SRH was not read)
	SLAfter   int32
	SRHPopped bool
	Plugin    string // a plugin SID's outcome (PluginOutcomes: the verdict its function returned, or why none)
}

// TraceFIB is a FIB lookup as a record saw it.
type TraceFIB struct {
	Table  uint32
	Dst    netip.Addr // invalid: none
	Rc     int32
	Result string // the result's name, or "code N"
	Cached bool   // answered from the next-hop cache
	MTU    uint32
	Egress *TraceEgress // where it leads (nil: a result without one)
}

// TraceEgress is where a FIB lookup leads.
type TraceEgress struct {
	Ifindex    uint32
	NextHop    netip.Addr       // invalid: none
	DMAC, SMAC net.HardwareAddr // nil: none
}

// TraceAddrs are a packet's addresses (invalid: none) and protocol.
type TraceAddrs struct {
	Src, Dst netip.Addr
	Proto    uint8
}
