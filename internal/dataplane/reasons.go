package dataplane

// reasons.go: the drop/pass reasons of the data plane (enum reason in bpf/structs.h: same values and
// names, and a test keeps them in step) with what each does to the packet, and the XDP actions.

// Reason is one reason_stats slot.
type Reason struct {
	Value int    // enum reason value (the reason_stats key)
	Name  string // as in C
	Drop  bool   // XDP_DROP; otherwise the packet is handed to the kernel (XDP_PASS)
}

// ReasonSlots is the size of reason_stats (REASON_MAX): values 1..63 drop, 64..127 pass.
const ReasonSlots = 128

// ReasonPassFirst is the first value of a reason that hands the packet to the kernel.
const ReasonPassFirst = 64

// ReasonTable lists every reason, drops first.
var ReasonTable = []Reason{
	{1, "DROP_TRUNC_VLAN", true},
	{2, "DROP_TRUNC_IP", true},
	{3, "DROP_BAD_IPV4_IHL", true},
	{4, "DROP_TRUNC_EXTHDR", true},
	{5, "DROP_TOO_MANY_EXTHDRS", true},
	{6, "DROP_SRH_BAD_LEN", true},
	{7, "DROP_SRH_SL_BEYOND", true},
	{8, "DROP_BAD_ROUTING_TYPE", true},
	{9, "DROP_DECAP_SL_NONZERO", true},
	{10, "DROP_BAD_INNER", true},
	{11, "DROP_NO_ROOM", true},
	{12, "DROP_BOUNDARY_SID", true},
	{13, "DROP_BOUNDARY_LOCATOR", true},
	{14, "DROP_BOUNDARY_SRH", true},
	{15, "DROP_SID_SOURCE", true},
	{16, "DROP_BAD_IP_VERSION", true},
	{17, "DROP_BAD_IPV4_CSUM", true},
	{18, "DROP_BAD_IP_LEN", true},
	{19, "DROP_TX_GONE", true},
	{64, "PASS_NO_MATCH", false},
	{65, "PASS_TTL", false},
	{66, "PASS_LOCAL", false},
	{67, "PASS_FIB_NO_NEIGH", false},
	{68, "PASS_FIB_FRAG_NEEDED", false},
	{69, "PASS_FIB_UNREACHABLE", false},
	{70, "PASS_FIB_OTHER", false},
	{71, "PASS_TX_NOT_ATTACHED", false},
	{72, "PASS_FRAGMENT", false},
	{73, "PASS_SRH_TLV", false},
	{74, "PASS_NO_ROOM", false},
	{75, "PASS_IPV4_OPTIONS", false},
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

// ReasonDrops says whether reason value v drops the packet (as verdict() in bpf/stats.h decides).
func ReasonDrops(v int) bool { return v > 0 && v < ReasonPassFirst }

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
