package packet

// sidlookup_test.go: the SID lookup table of `seg6x-bench micro` measures what it says: the frames it
// repeats come back unchanged with the fixtures' verdicts (prefixes on and off), a frame the program
// rewrites is refused for repeated runs, and sid_conf is left as the configuration set it.

import (
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/fixtures"
)

func TestSIDLookupTiming(t *testing.T) {
	rows, err := benchrig.SIDLookups(rig, 1000, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	for _, r := range rows {
		if r.Action != "XDP_PASS" || r.PrefixesNs <= 0 || r.NoPrefixNs <= 0 {
			t.Errorf("%+v", r)
		}
	}
	var conf dataplane.Seg6xSidConf
	if err := dataplane.MapsOf(rig.Store).SidConf.Lookup(uint32(0), &conf); err != nil || conf.Prefixes != 1 {
		t.Fatalf("sid_conf after the table: %+v %v (the fixtures have prefix SIDs: want 1)", conf, err)
	}
	all, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rig.RunRepeated(nil, fixtures.Find(all, "end"), 10); err == nil || !strings.Contains(err.Error(), "changed the frame") {
		t.Fatalf("End (rewrites the frame) repeated: %v", err)
	}
}
