package dataplane

// reasons.go: the drop/answer/pass reasons of the data plane (enum reason in bpf/structs.h: same values
// and names, and a test keeps them in step) with what each does to the packet, and the XDP actions.

// Reason is one reason_stats slot.
type Reason struct {
	Value int    // enum reason value (the reason_stats key)
	Name  string // as in C
	// Action is the XDP action the reason leads to: XDP_DROP (DROP_*, and SLOW_*: the frame went to
	// the daemon's slow path), XDP_REDIRECT (ICMP_*: the
	// packet is replaced by an ICMP error sent back out of the interface it came in on) or XDP_PASS
	// (PASS_*: to the kernel).
	Action int
}

// XDP actions (XDP_* in linux/bpf.h).
const (
	XDPDrop     = 1
	XDPPass     = 2
	XDPRedirect = 4
)

// ReasonSlots is the size of reason_stats (REASON_MAX): values 1..39 drop, 40..47 go to the daemon's
// slow path (the frame is consumed, XDP_DROP, and what becomes of it re-enters the program), 48..63
// answer, 64..127 pass.
const ReasonSlots = 128

// ReasonSlowFirst is the first value of a reason that hands the frame to the daemon's slow path.
const ReasonSlowFirst = 40

// ReasonAnswerFirst is the first value of a reason that answers the packet with an ICMP error.
const ReasonAnswerFirst = 48

// ReasonPassFirst is the first value of a reason that hands the packet to the kernel.
const ReasonPassFirst = 64

// ReasonTable lists every reason by value: drops, answers, passes.
var ReasonTable = []Reason{
	{1, "DROP_TRUNC_VLAN", XDPDrop},
	{2, "DROP_TRUNC_IP", XDPDrop},
	{3, "DROP_BAD_IPV4_IHL", XDPDrop},
	{4, "DROP_TRUNC_EXTHDR", XDPDrop},
	{5, "DROP_TOO_MANY_EXTHDRS", XDPDrop},
	{6, "DROP_SRH_BAD_LEN", XDPDrop},
	{7, "DROP_SRH_SL_BEYOND", XDPDrop},
	{8, "DROP_BAD_ROUTING_TYPE", XDPDrop},
	{9, "DROP_DECAP_SL_NONZERO", XDPDrop},
	{10, "DROP_BAD_INNER", XDPDrop},
	{11, "DROP_NO_ROOM", XDPDrop},
	{12, "DROP_BOUNDARY_SID", XDPDrop},
	{13, "DROP_BOUNDARY_LOCATOR", XDPDrop},
	{14, "DROP_BOUNDARY_SRH", XDPDrop},
	{15, "DROP_SID_SOURCE", XDPDrop},
	{16, "DROP_BAD_IP_VERSION", XDPDrop},
	{17, "DROP_BAD_IPV4_CSUM", XDPDrop},
	{18, "DROP_BAD_IP_LEN", XDPDrop},
	{19, "DROP_TX_GONE", XDPDrop},
	{20, "DROP_TOO_BIG", XDPDrop},
	{21, "DROP_TOO_BIG_RATELIMIT", XDPDrop},
	{22, "DROP_DECAP_TOO_BIG", XDPDrop},
	{23, "DROP_SLOW_BUSY", XDPDrop},
	{40, "SLOW_FRAGMENT", XDPDrop},
	{41, "SLOW_DECAP_ICMP", XDPDrop},
	{48, "ICMP_TOO_BIG", XDPRedirect},
	{64, "PASS_NO_MATCH", XDPPass},
	{65, "PASS_TTL", XDPPass},
	{66, "PASS_LOCAL", XDPPass},
	{67, "PASS_FIB_NO_NEIGH", XDPPass},
	{68, "PASS_FIB_FRAG_NEEDED", XDPPass},
	{69, "PASS_FIB_UNREACHABLE", XDPPass},
	{70, "PASS_FIB_OTHER", XDPPass},
	{71, "PASS_TX_NOT_ATTACHED", XDPPass},
	{72, "PASS_FRAGMENT", XDPPass},
	{73, "PASS_SRH_TLV", XDPPass},
	{74, "PASS_NO_ROOM", XDPPass},
	{75, "PASS_IPV4_OPTIONS", XDPPass},
}

// ReasonIndex returns the reason_stats key of a reason name, or -1.
func ReasonIndex(name string) int {
	for _, r := range ReasonTable {
		if r.Name == name {
			return r.Value
		}
	}
	return -1
}

// ReasonName names reason_stats slot v ("" for an unused slot).
func ReasonName(v int) string {
	for _, r := range ReasonTable {
		if r.Value == v {
			return r.Name
		}
	}
	return ""
}

// ReasonAction is the XDP action of reason value v, as verdict() in bpf/stats.h and answer() in
// bpf/icmp.h decide it.
func ReasonAction(v int) int {
	switch {
	case v >= ReasonPassFirst:
		return XDPPass
	case v >= ReasonAnswerFirst:
		return XDPRedirect
	default:
		return XDPDrop
	}
}

// Actions names XDP return codes.
var Actions = []string{"XDP_ABORTED", "XDP_DROP", "XDP_PASS", "XDP_TX", "XDP_REDIRECT"}

// ActionIndex returns the XDP return code of an action name, or -1.
func ActionIndex(name string) int {
	for i, n := range Actions {
		if n == name {
			return i
		}
	}
	return -1
}
