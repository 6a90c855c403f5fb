// Package packet runs every fixture of tools/fixtures through the real seg6x XDP program with
// BPF_PROG_TEST_RUN and compares the XDP action, the output bytes and the reason counter.
package packet

import (
	"bytes"
	"encoding/hex"
	"os"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/fixtures"
)

var rig *fixtures.Rig

func TestMain(m *testing.M) {
	os.Exit(fixtures.RigMain(m, "seg6x-pkt", func(r *fixtures.Rig) error { rig = r; return nil }))
}

func TestFixtures(t *testing.T) {
	fs, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	for i := range fs {
		f := &fs[i]
		t.Run(f.Name, func(t *testing.T) {
			var before uint64
			if f.Reason != "" {
				if before, err = rig.ReasonCount(f.Reason); err != nil {
					t.Fatal(err)
				}
			}
			var slow *slowRing
			if len(f.Slow) > 0 {
				slow = openSlowRing(t)
				defer slow.Close()
			}
			res, err := rig.Run(nil, f, 1)
			if err != nil {
				t.Fatal(err)
			}
			if slow != nil {
				slow.expect(t, f)
			}
			want := dataplane.ActionIndex(f.Action)
			if int(res.Action) != want {
				t.Errorf("%s: action %s, want %s", f.Description, dataplane.Actions[res.Action], f.Action)
			}
			if f.Action != "XDP_DROP" && !bytes.Equal(res.Output, f.Output) {
				t.Errorf("%s: output differs\n got %s\nwant %s\n(expected built by %s)", f.Description,
					hex.EncodeToString(res.Output), f.OutputHex, f.OutputScapy)
			}
			if f.Reason != "" {
				after, err := rig.ReasonCount(f.Reason)
				if err != nil {
					t.Fatal(err)
				}
				if after != before+1 {
					t.Errorf("%s: reason %s counted %d times, want 1", f.Description, f.Reason, after-before)
				}
			}
		})
	}
}

// TestEveryDropReasonHasAFixture keeps requirement "every drop reason has a packet test" true.
func TestEveryDropReasonHasAFixture(t *testing.T) {
	fs, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, f := range fs {
		covered[f.Reason] = true
	}
	// Reasons a single frame cannot produce against the fixture rig, and the test that covers each.
	elsewhere := map[string]string{
		"PASS_NO_MATCH":          "", // reserved, never counted (bpf/structs.h)
		"PASS_FIB_OTHER":         "", // forwarding disabled and other FIB states the rig does not set up
		"DROP_TX_GONE":           "TestDetachedEgressWithCachedNextHop (nhcache_test.go)",
		"DROP_TOO_BIG_RATELIMIT": "TestICMPRateLimit (icmp_test.go)",
		"DROP_SLOW_BUSY":         "TestSlowPathBusy (slowpath_test.go)",
		"PASS_GSO_UNSIZED":       "TestTCGSOAggregates (tc_test.go): GSO aggregates exist on tc only",
		"PASS_GSO_NESTED":        "TestTCGSOAggregates (tc_test.go)",
		"DROP_VXLAN_SOURCE":      "TestVXLANDecap (vxlan_test.go)",
		"PASS_VXLAN_CSUM":        "TestVXLANDecap (vxlan_test.go)",
		"PASS_VXLAN_FLOOD":       "TestVXLANEncap, TestVXLANDecap (vxlan_test.go)",
		"PASS_VXLAN_LOCAL":       "TestVXLANEncap, TestVXLANDecap (vxlan_test.go)",
		"PASS_VXLAN_NODE":        "TestVXLANEncap, TestVXLANDecap (vxlan_test.go)",
		"PASS_VXLAN_LEARN":       "TestVXLANEncap, TestVXLANDecap (vxlan_test.go)",
		"PASS_VXLAN_MALFORMED":   "TestVXLANEncap, TestVXLANDecap (vxlan_test.go)",
		"PASS_VXLAN_VNI":         "TestVXLANDecap (vxlan_test.go)",
		"PASS_VXLAN_TOO_BIG":     "TestVXLANEncap (vxlan_test.go)",
		"SLOW_VXLAN_FRAGMENT":    "TestVXLANFragmentedEncap (vxlan_test.go)",
		"PASS_VXLAN_ND":          "TestVXLANEncap, TestVXLANDecap (vxlan_test.go)",
		"PASS_VXLAN_ECN":         "TestVXLANDecap (vxlan_test.go)",
		"PASS_MULTIBUF":          "TestJumboFramesPassedWhole (multibuf_test.go), TestVXLANEncap, TestVXLANDecap",
		"DROP_MULTIBUF_HEADERS":  "TestJumboHeadersBeyondFirstBuffer (multibuf_test.go)",
		"DROP_MULTIBUF_EGRESS":   "TestMultiBufToEgressWithoutSG (rxfrags_test.go)",
		"SLOW_MULTIBUF_SEND":     "TestMultiBufToEgressWithoutSG (rxfrags_test.go)",
		"DROP_PLUGIN":            "TestPluginVerdictsRefusedAndCounted (plugin_test.go): plugin SIDs",
		"DROP_PLUGIN_ABORT":      "TestPluginVerdictsRefusedAndCounted, TestPluginEmptySlot (plugin_test.go)",
		"DROP_PLUGIN_VERDICT":    "TestPluginVerdictsRefusedAndCounted (plugin_test.go)",
		"DROP_PLUGIN_MALFORMED":  "TestPluginVerdictsRefusedAndCounted (plugin_test.go)",
		"DROP_PLUGIN_BOUNDARY":   "TestPluginEndStaysInTheFabric (plugin_test.go)",
		"PASS_PLUGIN":            "TestPluginVerdictsRefusedAndCounted (plugin_test.go)",
	}
	for _, r := range dataplane.ReasonTable {
		if _, ok := elsewhere[r.Name]; ok {
			continue
		}
		if !covered[r.Name] {
			t.Errorf("reason %s has no fixture", r.Name)
		}
	}
}
