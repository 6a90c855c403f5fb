package dataplane

// plugin_test.go: the plugin ABI as internal/pluginobj states it (constants, the context's layout)
// against the compiled program's maps and BTF.

import (
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/seg6x/seg6x/internal/pluginobj"
	"github.com/seg6x/seg6x/internal/state"
)

func TestPluginContextLayoutMatchesThePipeline(t *testing.T) {
	spec, err := LoadSeg6x()
	if err != nil {
		t.Fatal(err)
	}
	var ctx *btf.Struct
	if err := spec.Types.TypeByName("seg6x_plugin_ctx", &ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Size != pluginobj.ContextBytes || len(ctx.Members) != len(pluginobj.Context) {
		t.Fatalf("pipeline's seg6x_plugin_ctx: %d bytes, %d members; pluginobj says %d, %d", ctx.Size, len(ctx.Members),
			pluginobj.ContextBytes, len(pluginobj.Context))
	}
	for i, m := range ctx.Members {
		if w := pluginobj.Context[i]; m.Name != w.Name || uint32(m.Offset) != w.Offset {
			t.Errorf("member %d: pipeline %s at bit %d, pluginobj %s at bit %d", i, m.Name, m.Offset, w.Name, w.Offset)
		}
	}
}

func TestPluginConstantsMatchTheMaps(t *testing.T) {
	spec, err := LoadSeg6x()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m          string
		entries    int
		valueBytes int
	}{
		{"plugin_xdp_progs", PluginSlots, 4},
		{"plugin_tc_progs", PluginSlots, 4},
		{"plugin_cfg", PluginBinds, PluginConfigMax},
		{"plugin_binds", PluginBinds, 4 * PluginPolicies},
		{"plugin_stats", PluginSlots * PluginOutcomes, 16},
		{"plugin_sid_stats", PluginBinds * PluginOutcomes, 16},
		{"plugin_reason_stats", PluginSlots * PluginReasons, 16},
		{"plugin_ctx", 1, 64},
	} {
		ms, ok := spec.Maps[c.m]
		if !ok {
			t.Errorf("no map %s", c.m)
			continue
		}
		if int(ms.MaxEntries) != c.entries || int(ms.ValueSize) != c.valueBytes {
			t.Errorf("%s: %d entries of %d bytes; the loader expects %d of %d", c.m, ms.MaxEntries, ms.ValueSize, c.entries, c.valueBytes)
		}
	}
}

func TestPluginOutcomeNamesMatchTheProgram(t *testing.T) {
	for v, want := range map[Seg6xPluginOutcome]string{Seg6xPluginOutcomePLUGIN_O_EMPTY: "empty",
		Seg6xPluginOutcomePLUGIN_O_BAD_VERDICT: "bad_verdict", Seg6xPluginOutcomePLUGIN_O_MALFORMED: "malformed"} {
		if got := state.PluginOutcomes[v]; got != want {
			t.Errorf("outcome %d is %q in state.PluginOutcomes, %q in the program", v, got, want)
		}
	}
	for v, want := range map[Seg6xSeg6xVerdict]string{Seg6xSeg6xVerdictSEG6X_ABORT: "abort", Seg6xSeg6xVerdictSEG6X_DROP: "drop",
		Seg6xSeg6xVerdictSEG6X_PASS: "pass", Seg6xSeg6xVerdictSEG6X_END: "end", Seg6xSeg6xVerdictSEG6X_DT4: "dt4",
		Seg6xSeg6xVerdictSEG6X_DT6: "dt6", Seg6xSeg6xVerdictSEG6X_DT46: "dt46", Seg6xSeg6xVerdictSEG6X_ENCAP: "encap"} {
		if got := state.PluginOutcomes[v]; got != want {
			t.Errorf("verdict %d is %q in state.PluginOutcomes, want %q", v, got, want)
		}
	}
}
