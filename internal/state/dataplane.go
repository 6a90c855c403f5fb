package state

// dataplane.go: what the store asks of a data plane, in the model's terms. The store plans (which
// entries change, in which order, what to restore); a Dataplane encodes and writes them. The BPF one
// is internal/dataplane (maps and XDP links); tests use an in-memory fake, so the model, validation,
// planning and persistence run without root.
//
// The entries of a step are typed per table (Writes: one slice type per table, each of
// Write[K, V] with the table's key and value types), so the compiler checks that a policy step
// carries uint32 -> PolicySpec, a SID step netip.Prefix -> SIDSpec, and so on, and nothing is boxed
// per entry (routes come by the million). What front ends read back from a data plane (counters,
// traces, explanations) is Observer's (observe.go), which every Dataplane also is.

import (
	"net/netip"

	"github.com/seg6x/seg6x/internal/model"
)

// Dataplane holds the forwarding state of one instance.
type Dataplane interface {
	// Apply runs the steps of one commit in order. When a step fails, every step already run is
	// undone (old values restored, new keys removed) and the error is returned; otherwise undo
	// reverts the whole commit (when what follows it, saving the state, fails).
	Apply(steps []Step) (undo func() error, err error)
	// Reconcile makes the data plane hold exactly im, without flushing what is already right, and
	// gives every interface of im the program (opts: its load-time settings).
	Reconcile(im *Image, opts ProgramOptions) (*ReconcileReport, error)
	// Fresh reports whether the data plane was created empty when the store opened (a new map
	// layout, a lost bpffs): a saved state must then be written into it.
	Fresh() bool
	Close()
	// Observer: counters, traces and explanations of what the data plane does with packets.
	Observer
}

// ProgramOptions are the load-time settings of the program attached to interfaces.
type ProgramOptions struct {
	NextHopCacheMs uint32 // 0: off
}

// Table names one table of the data plane. Its entries' key and value types (and the Writes type of
// a step that writes it):
//
//	TableTxPorts     uint32 ifindex                 -> uint32 ifindex (interfaces that may be redirected to)  TxPortWrites
//	TableSIDSpace    netip.Prefix                   -> struct{} (the domain's locators)                       SIDSpaceWrites
//	TableSIDSources  netip.Prefix                   -> struct{} (the domain's sources)                        SIDSourceWrites
//	TablePolicies    uint32 policy id               -> PolicySpec                                             PolicyWrites
//	TableGroups      uint32 group id (no GroupFlag) -> GroupSpec (a named policy's lists, per inner family)   GroupWrites
//	TableSIDs        netip.Prefix (SID.Prefix())    -> SIDSpec (a /128: exact match; shorter: by prefix)      SIDWrites
//	TableRoutes      RouteKey                       -> uint32 policy id (0: hand to the kernel)               RouteWrites
//	TablePorts       PortKey                        -> PortSpec                                               PortWrites
//	TableVXDevs      uint32 VXLAN device ifindex    -> VXDevSpec                                              VXDevWrites
//	TableVXRx        VXRxKey                        -> VXDevSpec (the device that decapsulates)               VXRxWrites
//	TableVXRemotes   VXRemoteKey                    -> struct{} (VTEPs a device takes VXLAN from)             VXRemoteWrites
//	TableVXMACs      VXMACKey                       -> VXMACSpec                                              VXMACWrites
//	TablePlugins     uint32 program slot            -> PluginSpec (an operator's function, loaded)           PluginWrites
//
// TablePolicies and TableGroups are arrays: a slot is never removed. A PolicyWrites entry whose Old
// is the zero PolicySpec (Had true) was an empty slot: undo zeroes it.
type Table int

// The tables.
const (
	TableTxPorts Table = iota + 1
	TableSIDSpace
	TableSIDSources
	TablePolicies
	TableSIDs
	TableRoutes
	TablePorts
	TableGroups
	TableVXDevs
	TableVXRx
	TableVXRemotes
	TableVXMACs
	TablePlugins
)

// StepKind says what a step does.
type StepKind int

// The steps.
const (
	StepPut                StepKind = iota + 1 // write Writes to their table
	StepDelete                                 // delete Writes' keys from their table (a key already gone is fine)
	StepResetCounters                          // zero the counters of IDs (Counters: TablePolicies or TableSIDs)
	StepAttach                                 // attach the program to Iface (replacing its program in place; undo detaches it unless it had one)
	StepDetach                                 // detach Iface
	StepInvalidateNextHops                     // make every cached next hop stale
)

// Step is one ordered step of a commit.
type Step struct {
	Kind     StepKind
	Writes   Writes // StepPut, StepDelete: the entries, all of one table (Writes.Table())
	Counters Table  // StepResetCounters: TablePolicies or TableSIDs
	IDs      []uint32
	Iface    model.Interface // StepAttach, StepDetach (its Ifindex resolved)
	Options  ProgramOptions  // StepAttach
	// IfDetached: StepAttach only when the interface has no program (its link was lost).
	IfDetached bool
}

// Table is the table a step writes (its Writes') or whose counters it resets; 0 for another step.
func (s Step) Table() Table {
	switch {
	case s.Kind == StepResetCounters:
		return s.Counters
	case s.Writes != nil:
		return s.Writes.Table()
	}
	return 0
}

// Write is one key of a put or delete step: its new value (a put), and what undo restores (Old
// when Had, else the key is removed).
type Write[K comparable, V any] struct {
	Key      K
	Val, Old V
	Had      bool
}

// RouteEntry is one route of a TableRoutes step: Key gets policy id Val (a put), and undo restores
// Old when Had.
type RouteEntry = Write[RouteKey, uint32]

// Writes is the entries of one put or delete step: one of the per-table types below (a closed set:
// a data plane takes them with a type switch), whose key and value types are the table's.
type Writes interface {
	Table() Table
	Len() int
	writes() // only this package's types
}

// The entries of a step, by table.
type (
	TxPortWrites    []Write[uint32, uint32]
	SIDSpaceWrites  []Write[netip.Prefix, struct{}]
	SIDSourceWrites []Write[netip.Prefix, struct{}]
	PolicyWrites    []Write[uint32, PolicySpec]
	GroupWrites     []Write[uint32, GroupSpec]
	SIDWrites       []Write[netip.Prefix, SIDSpec]
	RouteWrites     []RouteEntry
	PortWrites      []Write[PortKey, PortSpec]
	VXDevWrites     []Write[uint32, VXDevSpec]
	VXRxWrites      []Write[VXRxKey, VXDevSpec]
	VXRemoteWrites  []Write[VXRemoteKey, struct{}]
	VXMACWrites     []Write[VXMACKey, VXMACSpec]
	PluginWrites    []Write[uint32, PluginSpec]
)

func (TxPortWrites) Table() Table    { return TableTxPorts }
func (SIDSpaceWrites) Table() Table  { return TableSIDSpace }
func (SIDSourceWrites) Table() Table { return TableSIDSources }
func (PolicyWrites) Table() Table    { return TablePolicies }
func (GroupWrites) Table() Table     { return TableGroups }
func (SIDWrites) Table() Table       { return TableSIDs }
func (RouteWrites) Table() Table     { return TableRoutes }
func (PortWrites) Table() Table      { return TablePorts }
func (VXDevWrites) Table() Table     { return TableVXDevs }
func (VXRxWrites) Table() Table      { return TableVXRx }
func (VXRemoteWrites) Table() Table  { return TableVXRemotes }
func (VXMACWrites) Table() Table     { return TableVXMACs }
func (PluginWrites) Table() Table    { return TablePlugins }

func (w TxPortWrites) Len() int    { return len(w) }
func (w SIDSpaceWrites) Len() int  { return len(w) }
func (w SIDSourceWrites) Len() int { return len(w) }
func (w PolicyWrites) Len() int    { return len(w) }
func (w GroupWrites) Len() int     { return len(w) }
func (w SIDWrites) Len() int       { return len(w) }
func (w RouteWrites) Len() int     { return len(w) }
func (w PortWrites) Len() int      { return len(w) }
func (w VXDevWrites) Len() int     { return len(w) }
func (w VXRxWrites) Len() int      { return len(w) }
func (w VXRemoteWrites) Len() int  { return len(w) }
func (w VXMACWrites) Len() int     { return len(w) }
func (w PluginWrites) Len() int    { return len(w) }

func (TxPortWrites) writes()    {}
func (SIDSpaceWrites) writes()  {}
func (SIDSourceWrites) writes() {}
func (PolicyWrites) writes()    {}
func (GroupWrites) writes()     {}
func (SIDWrites) writes()       {}
func (RouteWrites) writes()     {}
func (PortWrites) writes()      {}
func (VXDevWrites) writes()     {}
func (VXRxWrites) writes()      {}
func (VXRemoteWrites) writes()  {}
func (VXMACWrites) writes()     {}
func (PluginWrites) writes()    {}

// RouteKey is an encap route in one version of a tenant's route table.
type RouteKey struct {
	TableID uint32
	Prefix  netip.Prefix
}

// PortKey is where a frame comes in: an interface and a VLAN (VLANAnyKey: any VLAN without an
// entry of its own).
type PortKey struct {
	Ifindex uint32
	VLAN    uint16
}

// VLANAnyKey is the VLAN of a PortKey that covers every VLAN of the interface without its own.
const VLANAnyKey = 0xFFFF

// PortSpec is how the fast path treats frames from a port.
type PortSpec struct {
	SIDs           bool // fabric: local SIDs are processed
	Boundary       bool // access: SIDs, locators and SRHs are refused
	SIDSources     bool // fabric: a packet to a local SID needs a source among the domain's sources
	Tenant         bool // tenant traffic: the headend, through TableID
	KernelFallback bool // the kernel holds the tenant's routes: it gets what XDP cannot encapsulate
	TableID        uint32
	Plens4         uint64    // bit n: the table has IPv4 routes of prefix length n
	Plens6         [3]uint64 // bit n of 192: IPv6 routes of prefix length n
	Gateway4       netip.Addr
	Gateway6       netip.Addr
	MSSClamp       uint16 // MSSClampValue
	// Bridge: a port of a bridge with a followed VXLAN device (TableID: the bridge's ifindex), whose
	// frames the fast path bridges as the kernel would (VXLAN encapsulation, or the kernel).
	Bridge         bool
	BridgeLearning bool // the bridge learns source MACs on the port
}

// PolicySpec is one SR policy: the outer header the headend prepends.
type PolicySpec struct {
	ID       uint32
	Inner6   bool
	Mode     string
	Segs     []netip.Addr
	Src      netip.Addr // the source used (the configured one, or the kernel's choice)
	HopLimit uint8      // 0: DefaultHopLimit
}

// GroupSpec is the slots a headend picks a named policy's list from (policies.go): policy ids, 0 where
// no list is up.
type GroupSpec struct {
	Buckets [model.GroupBuckets]uint32
}

// SIDSpec is a local SID with its tenant resolved to a table.
type SIDSpec struct {
	SID   model.SID
	Table uint32 // the routing table of End.T / End.DT* (the SID's own, or its tenant's)
	// Policy is the SR policy of a binding SID (End.B6.Encaps*), written before the SID (TablePolicies).
	Policy uint32
	// A plugin SID's program slot, its configuration slot and the configuration's bytes (written
	// into the bind before the SID entry names it).
	Plugin, Bind uint32
	Config       []byte
	// Digest and Counters name the plugin's own counters for this SID (SEG6X_COUNTERS: Counters
	// of them at Bind), which a new bind starts from zero, as its outcome counters.
	Digest   string
	Counters int
	// Policies are the policy ids its ENCAP verdict may use (the named policies its settings name).
	Policies []uint32
}

// PluginSpec is a plugin in its program slot (TablePlugins): its name, digest and object.
type PluginSpec struct {
	Name, Digest string
	Object       []byte
}

// VXDevSpec is how a VXLAN device encapsulates, resolved for the fast path (vxlanimage.go).
type VXDevSpec struct {
	Ifindex, Bridge uint32
	Local           netip.Addr
	VNI             uint32
	Port            uint16
	SrcPortLow      uint16 // source ports SrcPortLow .. SrcPortLow+SrcPortSpan-1
	SrcPortSpan     uint16
	MTU             uint16
	HopLimit        uint8
	TOS             uint8 // the outer traffic class but its ECN bits
	Label           uint32
	Learning        bool // the device learns remote VTEPs
	PortLearning    bool // the bridge learns source MACs on the device's port
}

// VXRxKey is what VXLAN to a local VTEP is addressed to; VNI VXVNIAny stands for any VNI (the VTEP
// and port have some device: VXLAN of another VNI is counted, not just passed).
type VXRxKey struct {
	Local netip.Addr
	Port  uint16
	VNI   uint32
}

// VXVNIAny is the VNI of the VXRxKey that says a VTEP address and port are some device's.
const VXVNIAny = 0xFFFFFFFF

// VXRemoteKey is a remote VTEP a VXLAN device takes packets from.
type VXRemoteKey struct {
	Dev    uint32
	Remote netip.Addr
}

// VXMACKey is a MAC in a bridge (by the bridge's ifindex).
type VXMACKey struct {
	Bridge uint32
	MAC    [6]byte
}

// VXMACKind says where the kernel's tables send frames to a MAC.
type VXMACKind uint8

// The kinds of MAC.
const (
	VXMACLocal  VXMACKind = iota + 1 // behind a local port (Ifindex)
	VXMACNode                        // the node's own address on the bridge
	VXMACTunnel                      // to the VXLAN device Ifindex; Remote valid: to that one VTEP
)

// VXMACSpec is one MAC of a bridge with a followed VXLAN device.
type VXMACSpec struct {
	Kind    VXMACKind
	Ifindex uint32
	Dynamic bool       // learned: refreshed by handing one frame per interval to the kernel
	Remote  netip.Addr // VXMACTunnel: the one remote (invalid: several, the kernel replicates)
	Port    uint16     // VXMACTunnel: UDP destination port
	VNI     uint32     // VXMACTunnel
	MTU     uint16     // VXMACLocal: the port's MTU
}

// Image is everything the data plane holds for one running state.
type Image struct {
	Interfaces []model.Interface // each gets the program
	TxPorts    []uint32
	SIDSpace   []netip.Prefix
	SIDSources []netip.Prefix
	Policies   map[uint32]PolicySpec
	Groups     map[uint32]GroupSpec     // by group id (without GroupFlag)
	SIDs       map[netip.Prefix]SIDSpec // by SID.Prefix()
	Routes     map[RouteKey]uint32
	Ports      map[PortKey]PortSpec
	VX         VXImage
	Plugins    map[uint32]PluginSpec // by program slot
}

// ReconcileReport says what Reconcile found and did.
type ReconcileReport struct {
	Written  int `json:"written"`  // entries written (missing or different)
	Removed  int `json:"removed"`  // stale entries removed
	Attached int `json:"attached"` // interfaces whose program was attached or updated
	Detached int `json:"detached"` // links of interfaces no longer configured

	OldLayouts []string `json:"old_layouts,omitempty"` // map directories of an older layout, removed
}
