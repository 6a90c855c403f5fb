package model

// behaviors.go: the one table of the SRv6 endpoint behaviors a local SID can have (RFC 8986). Each row
// says what the data plane calls the behavior (enum sid_action in bpf/structs.h; a test in
// internal/dataplane checks every code against the compiled program), which parameters it takes,
// whether it decapsulates, the flavors it allows, the kernel seg6local action it corresponds to, and
// its help line. Validation, map encoding, the kernel mirror and the CLI help all read this table; a
// new behavior is one new row (and its C function, dispatched in bpf/endpoint.h).

import (
	"fmt"
	"strings"
)

// Param is a parameter of a local SID that a behavior may need.
type Param string

// Parameters a behavior can require (Behavior.Needs).
const (
	ParamNone  Param = ""
	ParamNH4   Param = "nh4"   // an IPv4 next hop
	ParamNH6   Param = "nh6"   // an IPv6 next hop
	ParamTable Param = "table" // a routing table (or, for a decap behavior, a tenant that names one)
	ParamSegs  Param = "segs"  // a segment list (and optionally its source): the SR policy of a binding SID
	// ParamPlugin: a loaded plugin (by name) and its settings; its verdicts may decapsulate into the
	// SID's table or tenant, which is optional.
	ParamPlugin Param = "plugin"
)

// KernelTable says which attribute of the kernel's seg6local route carries a behavior's table.
type KernelTable int

// Where the kernel keeps the table of a seg6local route.
const (
	KernelTableNone   KernelTable = iota
	KernelTableMain               // "table N"
	KernelTableVRF                // "vrftable N"
	KernelTableEither             // "vrftable N" when set, else "table N" (End.DT6's two forms)
)

// Behavior describes one endpoint behavior.
type Behavior struct {
	Name  string // RFC 8986 name, as the CLI, YAML files and the API spell it
	Code  uint8  // enum sid_action value in the data plane
	Needs Param  // the parameter it requires (ParamNone: none)
	// Decap: it decapsulates, so it may push a VLAN on egress ("vlan VID"), and when it looks the
	// inner packet up in a table that table may be given as a tenant ("tenant NAME").
	Decap bool
	// Flavors it accepts: NEXT-C-SID (RFC 9800) on End and End.X as the kernel has it; PSP, USP, USD
	// (RFC 8986 4.16) on End, End.X, End.T, where the kernel has only PSP on End. USD on End.X (an
	// inner IPv4 packet to an IPv6 adjacency) is not implemented.
	Flavors []string
	// KernelAction is the kernel's SEG6_LOCAL_ACTION_* number of the same behavior, and KernelTable
	// the attribute of its table.
	KernelAction int
	KernelTable  KernelTable
	// PolicyMode, for a binding SID (Needs ParamSegs): how its policy encapsulates (ModeEncap or
	// ModeEncapRed), as a route's mode.
	PolicyMode string
	Help       string // what it does, for `seg6x sid --help`
}

// Behaviors lists every endpoint behavior seg6x implements.
var Behaviors = []Behavior{
	{Name: "End", Code: 1, KernelAction: 1, Flavors: []string{FlavorNextCSID, FlavorPSP, FlavorUSP, FlavorUSD},
		Help: "next segment"},
	{Name: "End.X", Code: 2, Needs: ParamNH6, KernelAction: 2, Flavors: []string{FlavorNextCSID, FlavorPSP, FlavorUSP},
		Help: "next segment, forwarded to an IPv6 next hop"},
	{Name: "End.T", Code: 3, Needs: ParamTable, KernelAction: 3, KernelTable: KernelTableMain,
		Flavors: []string{FlavorPSP, FlavorUSP, FlavorUSD},
		Help:    "next segment, looked up in routing table ID"},
	{Name: "End.DX4", Code: 4, Needs: ParamNH4, Decap: true, KernelAction: 6,
		Help: "decapsulate, forward the IPv4 packet to ADDR"},
	{Name: "End.DX6", Code: 5, Needs: ParamNH6, Decap: true, KernelAction: 5,
		Help: "decapsulate, forward the IPv6 packet to ADDR"},
	{Name: "End.DT4", Code: 6, Needs: ParamTable, Decap: true, KernelAction: 8, KernelTable: KernelTableVRF,
		Help: "decapsulate, look the IPv4 packet up in table ID"},
	{Name: "End.DT6", Code: 7, Needs: ParamTable, Decap: true, KernelAction: 7, KernelTable: KernelTableEither,
		Help: "decapsulate, look the IPv6 packet up in table ID"},
	{Name: "End.DT46", Code: 8, Needs: ParamTable, Decap: true, KernelAction: 16, KernelTable: KernelTableVRF,
		Help: "decapsulate either family, look it up in table ID"},
	{Name: "End.B6.Encaps", Code: 9, Needs: ParamSegs, KernelAction: 10, PolicyMode: ModeEncap,
		Help: "next segment, then into an SR policy: a new IPv6 header + SRH"},
	{Name: "End.B6.Encaps.Red", Code: 10, Needs: ParamSegs, PolicyMode: ModeEncapRed,
		Help: "as End.B6.Encaps, the policy's SRH reduced (H.Encaps.Red)"},
	{Name: "plugin", Code: 11, Needs: ParamPlugin, Decap: true,
		Help: "an operator's function (seg6x plugin load) first; its verdict: drop, pass, End, End.DT4/6/46 in the SID's table"},
}

// Actions lists the behaviors' names, in table order.
var Actions = func() []string {
	out := make([]string, len(Behaviors))
	for i, b := range Behaviors {
		out[i] = b.Name
	}
	return out
}()

// BehaviorNamed returns the behavior called name, or nil.
func BehaviorNamed(name string) *Behavior {
	for i := range Behaviors {
		if Behaviors[i].Name == name {
			return &Behaviors[i]
		}
	}
	return nil
}

// BehaviorOfKernel returns the behavior of the kernel's seg6local action number, or nil.
func BehaviorOfKernel(action int) *Behavior {
	if action <= 0 { // SEG6_LOCAL_ACTION_UNSPEC; behaviors the kernel lacks have KernelAction 0
		return nil
	}
	for i := range Behaviors {
		if Behaviors[i].KernelAction == action {
			return &Behaviors[i]
		}
	}
	return nil
}

// IsDecap reports whether action decapsulates (and so may push a VLAN on egress).
func IsDecap(action string) bool {
	b := BehaviorNamed(action)
	return b != nil && b.Decap
}

// TakesTenant reports whether the behavior's table may be given as a tenant.
func (b *Behavior) TakesTenant() bool {
	return b.Decap && (b.Needs == ParamTable || b.Needs == ParamPlugin)
}

// CName is the behavior's name in enum sid_action (End.DT46: SID_END_DT46).
func (b *Behavior) CName() string {
	return "SID_" + strings.ToUpper(strings.ReplaceAll(b.Name, ".", "_"))
}

// Synopsis is the parameter the CLI takes for the behavior ("nh6 ADDR"), or "".
func (b *Behavior) Synopsis() string {
	switch b.Needs {
	case ParamNH4, ParamNH6:
		return string(b.Needs) + " ADDR"
	case ParamTable:
		return "table ID"
	case ParamSegs:
		return "segs SID[,SID]"
	case ParamPlugin:
		return "plugin NAME [KEY=VALUE ...]"
	}
	return ""
}

// BehaviorHelp is the table of behaviors as `seg6x sid add --help` shows it.
func BehaviorHelp() string {
	var b strings.Builder
	nw, sw := 0, 0
	for _, bh := range Behaviors {
		nw, sw = max(nw, len(bh.Name)), max(sw, len(bh.Synopsis()))
	}
	for _, bh := range Behaviors {
		fmt.Fprintf(&b, "  %-*s %-*s %s\n", nw, bh.Name, sw, bh.Synopsis(), bh.Help)
	}
	var tenant, decap []string
	for _, bh := range Behaviors {
		if bh.TakesTenant() {
			tenant = append(tenant, bh.Name)
		}
		if bh.Decap {
			decap = append(decap, bh.Name)
		}
	}
	fmt.Fprintf(&b, "\"tenant NAME\" may replace \"table\" for %s;\n", strings.Join(tenant, ", "))
	fmt.Fprintf(&b, "%s may push \"vlan VID\" on egress;\n", strings.Join(decap, ", "))
	b.WriteString("End.B6.Encaps* take \"src ADDR\", the policy's outer source (default: the kernel's choice).")
	return b.String()
}
