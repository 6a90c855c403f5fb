package dataplane

// reasons.go: names of the drop/pass reasons (enum reason in bpf/structs.h, same order; a test keeps
// them in step) and of the XDP actions, for counters and output.

// Reasons is indexed by the reason_stats key.
var Reasons = []string{
	"NONE",
	"DROP_TRUNC_VLAN",
	"DROP_TRUNC_IP",
	"DROP_BAD_IPV4_IHL",
	"DROP_TRUNC_EXTHDR",
	"DROP_TOO_MANY_EXTHDRS",
	"DROP_SRH_BAD_LEN",
	"DROP_SRH_SL_BEYOND",
	"DROP_BAD_ROUTING_TYPE",
	"DROP_DECAP_SL_NONZERO",
	"DROP_BAD_INNER",
	"DROP_NO_ROOM",
	"PASS_NO_MATCH",
	"PASS_TTL",
	"PASS_LOCAL",
	"PASS_FIB_NO_NEIGH",
	"PASS_FIB_FRAG_NEEDED",
	"PASS_FIB_UNREACHABLE",
	"PASS_FIB_OTHER",
	"PASS_TX_NOT_ATTACHED",
	"PASS_FRAGMENT",
	"PASS_SRH_TLV",
	"PASS_NO_ROOM",
}

// ReasonIndex returns the reason_stats key of a reason name, or -1.
func ReasonIndex(name string) int {
	for i, n := range Reasons {
		if n == name {
			return i
		}
	}
	return -1
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
