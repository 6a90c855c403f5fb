package dataplane

// reasons_test.go: the Go reason table and enum reason in bpf/structs.h agree on every name, value and
// verdict, so a reason cannot be misfiled (a DROP_ reason handed to the kernel, or the reverse).

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestReasonsMatchC(t *testing.T) {
	src, err := os.ReadFile("../../bpf/structs.h")
	if err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`(?s)enum reason \{(.*?)\};`).FindSubmatch(src)
	if body == nil {
		t.Fatal("enum reason not found in structs.h")
	}
	c := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(\w+)\s*=\s*(\d+),`).FindAllSubmatch(body[1], -1) {
		v, _ := strconv.Atoi(string(m[2]))
		c[string(m[1])] = v
	}
	if c["REASON_MAX"] != ReasonSlots || c["REASON_PASS_FIRST"] != ReasonPassFirst || c["REASON_ANSWER_FIRST"] != ReasonAnswerFirst ||
		c["REASON_SLOW_FIRST"] != ReasonSlowFirst {
		t.Fatalf("C: REASON_MAX %d, REASON_PASS_FIRST %d, REASON_ANSWER_FIRST %d, REASON_SLOW_FIRST %d; Go: %d, %d, %d, %d", c["REASON_MAX"],
			c["REASON_PASS_FIRST"], c["REASON_ANSWER_FIRST"], c["REASON_SLOW_FIRST"], ReasonSlots, ReasonPassFirst, ReasonAnswerFirst, ReasonSlowFirst)
	}
	nc := 0
	for name, v := range c {
		if !strings.HasPrefix(name, "DROP_") && !strings.HasPrefix(name, "PASS_") && !strings.HasPrefix(name, "ICMP_") &&
			!strings.HasPrefix(name, "SLOW_") {
			continue
		}
		nc++
		if got := ReasonIndex(name); got != v {
			t.Errorf("%s: C value %d, Go %d", name, v, got)
		}
	}
	if nc != len(ReasonTable) {
		t.Errorf("C has %d reasons, Go %d", nc, len(ReasonTable))
	}
	seen := map[int]bool{}
	for _, r := range ReasonTable {
		if seen[r.Value] {
			t.Errorf("%s: value %d used twice", r.Name, r.Value)
		}
		seen[r.Value] = true
		if r.Value <= 0 || r.Value >= ReasonSlots {
			t.Errorf("%s: value %d outside 1..%d", r.Name, r.Value, ReasonSlots-1)
		}
		// The verdict the data plane gives (value range) is the one the name and the table state.
		byName := map[string]int{"DROP": XDPDrop, "SLOW": XDPDrop, "ICMP": XDPRedirect, "PASS": XDPPass}[strings.SplitN(r.Name, "_", 2)[0]]
		if byName != r.Action || ReasonAction(r.Value) != r.Action {
			t.Errorf("%s (value %d): table says action %d, its name %d, verdict() %d", r.Name, r.Value, r.Action, byName, ReasonAction(r.Value))
		}
		if slow := strings.HasPrefix(r.Name, "SLOW_"); slow != (r.Value >= ReasonSlowFirst && r.Value < ReasonAnswerFirst) {
			t.Errorf("%s (value %d): SLOW_ names and only they take values %d..%d", r.Name, r.Value, ReasonSlowFirst, ReasonAnswerFirst-1)
		}
	}
}
