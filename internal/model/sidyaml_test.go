package model

// sidyaml_test.go: a SID's YAML mapping: the sid as a prefix, also through merge keys.

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// Prefix SIDs through YAML merge keys (<<): a merged mapping's sid is a prefix as if written in place;
// the mapping's own keys win over merged ones, an earlier merged mapping over a later one.
func TestPrefixSIDThroughMerge(t *testing.T) {
	in := `
locator: &loc {sid: "fcbb:0:100::/48", action: End, flavors: [next-csid]}
other: &other {sid: "fcbb:0:200::/48", action: End.X, nh6: "fc00::2"}
sids:
  - <<: *loc
  - <<: [*other, *loc]
  - {<<: *loc, sid: "fcbb:0:300:e000::/64", action: End.DT4, table: 100, flavors: []}
`
	var doc struct {
		SIDs []SID `yaml:"sids"`
	}
	if err := yaml.Unmarshal([]byte(in), &doc); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		sid    string
		bits   uint8
		action string
	}{{"fcbb:0:100::", 48, "End"}, {"fcbb:0:200::", 48, "End.X"}, {"fcbb:0:300:e000::", 64, "End.DT4"}}
	if len(doc.SIDs) != len(want) {
		t.Fatalf("%d SIDs: %+v", len(doc.SIDs), doc.SIDs)
	}
	for i, w := range want {
		s := doc.SIDs[i]
		if s.SID.String() != w.sid || s.Bits != w.bits || s.Action != w.action {
			t.Errorf("sids[%d] = %s/%d %s, want %s/%d %s", i, s.SID, s.Bits, s.Action, w.sid, w.bits, w.action)
		}
	}
	if got := doc.SIDs[1]; got.NH6.String() != "fc00::2" || len(got.Flavors) != 1 {
		t.Errorf("sids[1]: sid, action, nh6 of the first merged mapping, flavors of the second: %+v", got)
	}
	if got := doc.SIDs[2]; got.Table != 100 || len(got.Flavors) != 0 {
		t.Errorf("sids[2]: its own keys should win over the merged ones: %+v", got)
	}
}
