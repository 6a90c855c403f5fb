package dataplane_test

// enums_test.go: every enum the control plane shares with the compiled program (the export_*
// anchors in bpf/seg6x.bpf.c) has a Go counterpart with the same members and values: the behavior
// table (enum sid_action), the reasons (enum reason), the control plane's limits (enum limits) and
// MSS clamp values, and the generated constants the encoder and the slow path use directly. A C
// member without a counterpart, or a different value, fails here.

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

// goCounterparts holds, per shared enum, the Go value of every member name.
func goCounterparts() map[string]map[string]int64 {
	behaviors := map[string]int64{}
	for i := range model.Behaviors {
		b := &model.Behaviors[i]
		behaviors[b.CName()] = int64(b.Code)
	}
	reasons := map[string]int64{"REASON_NONE": 0, "REASON_SLOW_FIRST": int64(dataplane.ReasonSlowFirst),
		"REASON_ANSWER_FIRST": int64(dataplane.ReasonAnswerFirst), "REASON_PASS_FIRST": int64(dataplane.ReasonPassFirst),
		"REASON_MAX": int64(dataplane.ReasonSlots)}
	for _, r := range dataplane.ReasonTable {
		reasons[r.Name] = int64(r.Value)
	}
	return map[string]map[string]int64{
		"sid_action": behaviors,
		"reason":     reasons,
		"limits": {
			"LIMIT_SEGMENTS": model.MaxSegments, "LIMIT_POLICIES": state.MaxPolicies, "LIMIT_ROUTES4": state.MaxRoutes4,
			"LIMIT_ROUTES6": state.MaxRoutes6, "LIMIT_SIDS": state.MaxSIDs, "LIMIT_DOMAIN_PREFIXES": model.MaxDomainPrefixes,
		},
		"mss_clamp": {"MSS_CLAMP_OFF": int64(model.MSSClampOffValue), "MSS_CLAMP_AUTO": int64(model.MSSClampAutoValue)},
		// Used through bpf2go's constants (state/encode.go, slowpath/relay.go): listed so that a new
		// member shows up here, and so that the generated file is the one built from this C.
		"slow_kind": {"SLOW_KIND_FRAGMENT": int64(dataplane.Seg6xSlowKindSLOW_KIND_FRAGMENT),
			"SLOW_KIND_INJECT": int64(dataplane.Seg6xSlowKindSLOW_KIND_INJECT), "SLOW_KIND_FRAGMENT6": int64(dataplane.Seg6xSlowKindSLOW_KIND_FRAGMENT6),
			"SLOW_KIND_SEND": int64(dataplane.Seg6xSlowKindSLOW_KIND_SEND)},
		"rx_frags_mode": {"RX_FRAGS_NATIVE": int64(dataplane.Seg6xRxFragsModeRX_FRAGS_NATIVE),
			"RX_FRAGS_GENERIC": int64(dataplane.Seg6xRxFragsModeRX_FRAGS_GENERIC)},
		"port_flags": {"PORT_F_SIDS": int64(dataplane.Seg6xPortFlagsPORT_F_SIDS), "PORT_F_BOUNDARY": int64(dataplane.Seg6xPortFlagsPORT_F_BOUNDARY),
			"PORT_F_TENANT": int64(dataplane.Seg6xPortFlagsPORT_F_TENANT), "PORT_F_SID_SOURCES": int64(dataplane.Seg6xPortFlagsPORT_F_SID_SOURCES),
			"PORT_F_KERNEL_FALLBACK": int64(dataplane.Seg6xPortFlagsPORT_F_KERNEL_FALLBACK),
			"PORT_F_BRIDGE":          int64(dataplane.Seg6xPortFlagsPORT_F_BRIDGE), "PORT_F_LEARNING": int64(dataplane.Seg6xPortFlagsPORT_F_LEARNING)},
		// VXLAN entries (encode_vxlan.go).
		"vx_mac_kind": {"VX_MAC_LOCAL": int64(dataplane.Seg6xVxMacKindVX_MAC_LOCAL), "VX_MAC_NODE": int64(dataplane.Seg6xVxMacKindVX_MAC_NODE),
			"VX_MAC_TUNNEL": int64(dataplane.Seg6xVxMacKindVX_MAC_TUNNEL)},
		"vx_mac_flags": {"VX_MAC_F_DYNAMIC": int64(dataplane.Seg6xVxMacFlagsVX_MAC_F_DYNAMIC), "VX_MAC_F_REMOTE": int64(dataplane.Seg6xVxMacFlagsVX_MAC_F_REMOTE)},
		"vx_dev_flags": {"VX_F_LEARNING": int64(dataplane.Seg6xVxDevFlagsVX_F_LEARNING), "VX_F_PORT_LEARNING": int64(dataplane.Seg6xVxDevFlagsVX_F_PORT_LEARNING)},
		"port_vlan":    {"PORT_VLAN_ANY": int64(dataplane.Seg6xPortVlanPORT_VLAN_ANY)},
		"sid_flags": {"SID_F_VLAN": int64(dataplane.Seg6xSidFlagsSID_F_VLAN), "SID_F_NEXT_CSID": int64(dataplane.Seg6xSidFlagsSID_F_NEXT_CSID),
			"SID_F_PSP": int64(dataplane.Seg6xSidFlagsSID_F_PSP), "SID_F_USP": int64(dataplane.Seg6xSidFlagsSID_F_USP),
			"SID_F_USD": int64(dataplane.Seg6xSidFlagsSID_F_USD), "SID_F_PLUGIN": int64(dataplane.Seg6xSidFlagsSID_F_PLUGIN)},
		// Plugins (plugin.go): the verdicts of the SDK and the outcomes counted per plugin and SID.
		"seg6x_verdict": {"SEG6X_ABORT": 0, "SEG6X_DROP": 1, "SEG6X_PASS": 2, "SEG6X_END": 3, "SEG6X_DT4": 4,
			"SEG6X_DT6": 5, "SEG6X_DT46": 6, "SEG6X_ENCAP": 7},
		"plugin_outcome": {"PLUGIN_O_EMPTY": int64(dataplane.Seg6xPluginOutcomePLUGIN_O_EMPTY),
			"PLUGIN_O_BAD_VERDICT": int64(dataplane.Seg6xPluginOutcomePLUGIN_O_BAD_VERDICT),
			"PLUGIN_O_MALFORMED":   int64(dataplane.Seg6xPluginOutcomePLUGIN_O_MALFORMED),
			"PLUGIN_OUTCOMES":      int64(dataplane.PluginOutcomes)},
		// Used through bpf2go's constants (internal/trace).
		"trace_class": {"TRACE_NOT_OURS": int64(dataplane.Seg6xTraceClassTRACE_NOT_OURS), "TRACE_TENANT": int64(dataplane.Seg6xTraceClassTRACE_TENANT),
			"TRACE_SID": int64(dataplane.Seg6xTraceClassTRACE_SID), "TRACE_BOUNDARY": int64(dataplane.Seg6xTraceClassTRACE_BOUNDARY),
			"TRACE_MALFORMED": int64(dataplane.Seg6xTraceClassTRACE_MALFORMED)},
		"trace_flags": {"TRACE_F_PORT": int64(dataplane.Seg6xTraceFlagsTRACE_F_PORT), "TRACE_F_ROUTE": int64(dataplane.Seg6xTraceFlagsTRACE_F_ROUTE),
			"TRACE_F_SID": int64(dataplane.Seg6xTraceFlagsTRACE_F_SID), "TRACE_F_FIB": int64(dataplane.Seg6xTraceFlagsTRACE_F_FIB),
			"TRACE_F_FIB_CACHED": int64(dataplane.Seg6xTraceFlagsTRACE_F_FIB_CACHED), "TRACE_F_INNER": int64(dataplane.Seg6xTraceFlagsTRACE_F_INNER),
			"TRACE_F_L4": int64(dataplane.Seg6xTraceFlagsTRACE_F_L4), "TRACE_F_TC": int64(dataplane.Seg6xTraceFlagsTRACE_F_TC),
			"TRACE_F_SRH_READ":   int64(dataplane.Seg6xTraceFlagsTRACE_F_SRH_READ),
			"TRACE_F_SRH_POPPED": int64(dataplane.Seg6xTraceFlagsTRACE_F_SRH_POPPED)},
		"trace_filter_flags": {"TF_IFINDEX": int64(dataplane.Seg6xTraceFilterFlagsTF_IFINDEX), "TF_VLAN": int64(dataplane.Seg6xTraceFilterFlagsTF_VLAN),
			"TF_TABLE": int64(dataplane.Seg6xTraceFilterFlagsTF_TABLE), "TF_POLICY": int64(dataplane.Seg6xTraceFilterFlagsTF_POLICY),
			"TF_SID": int64(dataplane.Seg6xTraceFilterFlagsTF_SID), "TF_REASON": int64(dataplane.Seg6xTraceFilterFlagsTF_REASON),
			"TF_SRC": int64(dataplane.Seg6xTraceFilterFlagsTF_SRC), "TF_DST": int64(dataplane.Seg6xTraceFilterFlagsTF_DST),
			"TF_PROTO": int64(dataplane.Seg6xTraceFilterFlagsTF_PROTO), "TF_SPORT": int64(dataplane.Seg6xTraceFilterFlagsTF_SPORT),
			"TF_DPORT": int64(dataplane.Seg6xTraceFilterFlagsTF_DPORT), "TF_ACTIONS": int64(dataplane.Seg6xTraceFilterFlagsTF_ACTIONS),
			"TF_CLASS": int64(dataplane.Seg6xTraceFilterFlagsTF_CLASS)},
	}
}

func TestSharedEnumsMatchC(t *testing.T) {
	spec, err := dataplane.LoadSeg6x()
	if err != nil {
		t.Fatal(err)
	}
	want := goCounterparts()
	seen := map[string]bool{}
	for name := range spec.Variables {
		enum, ok := strings.CutPrefix(name, "export_")
		if !ok {
			continue
		}
		seen[enum] = true
		var e *btf.Enum
		if err := spec.Types.TypeByName(enum, &e); err != nil {
			t.Errorf("enum %s (anchored by %s): %v", enum, name, err)
			continue
		}
		gov, ok := want[enum]
		if !ok {
			t.Errorf("enum %s is shared with the control plane but has no Go counterpart in this test", enum)
			continue
		}
		cnames := map[string]bool{}
		for _, m := range e.Values {
			cnames[m.Name] = true
			v, ok := gov[m.Name]
			switch {
			case !ok:
				t.Errorf("enum %s: C member %s = %d has no Go counterpart", enum, m.Name, m.Value)
			case uint64(v) != m.Value:
				t.Errorf("enum %s: %s is %d in C, %d in Go", enum, m.Name, m.Value, v)
			}
		}
		for n, v := range gov {
			if !cnames[n] {
				t.Errorf("enum %s: Go has %s = %d, C does not", enum, n, v)
			}
		}
	}
	for enum := range want {
		if !seen[enum] {
			t.Errorf("enum %s: not exported by the program (no export_%s anchor in bpf/seg6x.bpf.c)", enum, enum)
		}
	}
}
