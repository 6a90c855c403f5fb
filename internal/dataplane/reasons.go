package dataplane

// reasons.go: the drop/answer/pass reasons of the data plane (enum reason in bpf/structs.h, read from
// the compiled program's BTF) with what each does to the packet, and the XDP actions.

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"
)

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
const ReasonSlots = int(Seg6xReasonREASON_MAX)

// ReasonSlowFirst is the first value of a reason that hands the frame to the daemon's slow path.
const ReasonSlowFirst = int(Seg6xReasonREASON_SLOW_FIRST)

// ReasonAnswerFirst is the first value of a reason that answers the packet with an ICMP error.
const ReasonAnswerFirst = int(Seg6xReasonREASON_ANSWER_FIRST)

// ReasonPassFirst is the first value of a reason that hands the packet to the kernel.
const ReasonPassFirst = int(Seg6xReasonREASON_PASS_FIRST)

// ReasonTable lists every reason by value: drops, answers, passes. It is read from the compiled
// program's own type information (enum reason), so Go cannot disagree with C on a name or value.
var ReasonTable = reasonsFromBTF()

// reasonsFromBTF lists the DROP_, SLOW_, ICMP_ and PASS_ members of enum reason in the embedded
// program, by value.
func reasonsFromBTF() []Reason {
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(_Seg6xBytes))
	if err != nil {
		panic(fmt.Sprintf("dataplane: the embedded program has no readable BTF: %v", err))
	}
	var e *btf.Enum
	if err := spec.TypeByName("reason", &e); err != nil {
		panic(fmt.Sprintf("dataplane: enum reason not in the embedded program: %v", err))
	}
	var out []Reason
	for _, m := range e.Values {
		kind, _, _ := strings.Cut(m.Name, "_")
		if kind != "DROP" && kind != "SLOW" && kind != "ICMP" && kind != "PASS" {
			continue // REASON_NONE and the range markers
		}
		out = append(out, Reason{Value: int(m.Value), Name: m.Name, Action: ReasonAction(int(m.Value))})
	}
	slices.SortFunc(out, func(a, b Reason) int { return a.Value - b.Value })
	return out
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
