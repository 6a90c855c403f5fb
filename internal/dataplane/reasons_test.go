package dataplane

import (
	"os"
	"regexp"
	"testing"
)

// TestReasonsMatchC keeps the Go names in the order of enum reason in bpf/structs.h.
func TestReasonsMatchC(t *testing.T) {
	src, err := os.ReadFile("../../bpf/structs.h")
	if err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`(?s)enum reason \{(.*?)\};`).FindSubmatch(src)
	if body == nil {
		t.Fatal("enum reason not found in structs.h")
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\s*(REASON_NONE|DROP_\w+|PASS_\w+|REASON_MAX)\b`).FindAllSubmatch(body[1], -1) {
		names = append(names, string(m[1]))
	}
	if len(names) != len(Reasons)+1 || names[len(names)-1] != "REASON_MAX" {
		t.Fatalf("C has %d reasons %v, Go has %d", len(names)-1, names, len(Reasons))
	}
	for i, n := range Reasons[1:] {
		if names[i+1] != n {
			t.Errorf("reason %d: C %s, Go %s", i+1, names[i+1], n)
		}
	}
}
