package dataplane

// plugin_test.go: the loader's ABI constants against the compiled program's maps.

import "testing"

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
