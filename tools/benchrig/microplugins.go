package benchrig

// microplugins.go: `seg6x-bench micro`'s plugin rows: what a plugin SID costs next to the built-in
// behavior its verdict continues as. Each row sends the same fixture to the built-in SID and to a
// plugin SID copied from it, in paired rounds (both in every round, in alternating order), and reports
// both means and the median of the rounds' differences. Rows whose frame comes back unchanged (a
// pass) run it 200,000 times per test run (warm caches, as under steady traffic); the others run a
// fresh frame per test run, as the micro cases do.

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/plugincfg"
	"github.com/seg6x/seg6x/internal/pluginobj"
	"github.com/seg6x/seg6x/tools/benchrig/rigbpf"
	"github.com/seg6x/seg6x/tools/fixtures"
)

// PluginRow is one row of `seg6x-bench micro --json`'s "plugins".
type PluginRow struct {
	Case        string    `json:"case"`
	Description string    `json:"description"`
	BuiltinNs   float64   `json:"builtin_ns_per_pkt"`
	PluginNs    float64   `json:"plugin_ns_per_pkt"`
	ExtraNs     float64   `json:"extra_ns_per_pkt"` // median of the rounds' plugin - built-in
	Ratio       float64   `json:"ratio_to_builtin"` // median of the rounds' plugin / built-in
	Rounds      []float64 `json:"round_extra_ns"`
}

// pluginMicroCases: a fixture, the SID it is sent to, the plugin and its configuration: cfg's bytes,
// or settings (key=value, as a SID sets them) encoded from the plugin's BTF as the store encodes them.
var pluginMicroCases = []struct {
	name, fixture, like, desc string
	object                    func() []byte
	cfg                       []byte
	settings                  []string
	repeated                  bool // the frame comes back unchanged: RunRepeated
}{
	{"plugin_nop_pass", "end_sl0", "fc00:1::1", "a plugin that returns PASS, against End at segments left 0 (both pass the frame unchanged; 200,000 runs per test run)",
		rigbpf.PluginNopObject, verdictCfg(2), nil, true},
	{"plugin_nop_end", "end", "fc00:1::1", "a plugin that returns END, against End", rigbpf.PluginNopObject, verdictCfg(3), nil, false},
	{"plugin_nop_dt4", "end_dt4_vlan", "fc00:1::64", "a plugin that returns DT4, against End.DT4 (VLAN 100)", rigbpf.PluginNopObject, verdictCfg(4), nil, false},
	{"plugin_nop_dt46", "end_dt46_v4", "fc00:1::68", "a plugin that returns DT46, against End.DT46", rigbpf.PluginNopObject, verdictCfg(6), nil, false},
	{"plugin_ttlgate_dt46", "end_dt46_v4", "fc00:1::68", "the tutorial's ttlgate (reads the inner TTL), against End.DT46", rigbpf.PluginTtlgateObject, []byte{5}, nil, false},
	{"plugin_fw1_dt46", "end_dt46_v4", "fc00:1::68", "the shipped firewall, one rule (matching: allow), against End.DT46",
		rigbpf.PluginFirewallObject, nil, []string{"rules=1", "dflt=deny", "rule.0.proto=17", "rule.0.dport_lo=1000"}, false},
	{"plugin_fw12_dt46", "end_dt46_v4", "fc00:1::68", "the shipped firewall, 12 rules (the last one matching: allow), against End.DT46",
		rigbpf.PluginFirewallObject, nil, firewallRules12(), false},
}

// firewallRules12 are the firewall's settings with 12 rules: 11 that end_dt46_v4's packet (UDP
// 198.18.2.2:2000 > 198.18.1.2:1000) matches in all but the destination port, then one it matches.
func firewallRules12() []string {
	out := []string{"rules=12", "dflt=deny", "rule.11.proto=17", "rule.11.dport_lo=1000"}
	for i := 0; i < 11; i++ {
		r := fmt.Sprintf("rule.%d.", i)
		out = append(out, r+"proto=17", r+"src4=198.18.0.0/15", r+"dst4=198.18.0.0/15", r+"dport_lo="+fmt.Sprint(7000+i), r+"action=deny")
	}
	return out
}

// encodeSettings is the configuration of settings for plugin obj, as the store encodes it.
func encodeSettings(obj *pluginobj.Object, settings []string) ([]byte, error) {
	sc, err := plugincfg.NewSchema(obj.Config)
	if err != nil {
		return nil, err
	}
	st, err := plugincfg.ParseSettings(settings)
	if err != nil {
		return nil, err
	}
	return sc.Encode(st, nil)
}

func verdictCfg(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }

// PluginCases loads the benchmark's plugins into the rig's free slots and times every plugin case.
func PluginCases(rig *fixtures.Rig, runs int) ([]PluginRow, error) {
	all, err := fixtures.Load()
	if err != nil {
		return nil, err
	}
	var out []PluginRow
	for i, c := range pluginMicroCases {
		slot, bind := dataplane.PluginSlots-1-i, uint32(dataplane.PluginBinds-1-i)
		obj, err := dataplane.ReadPlugin(c.object())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		cfg := c.cfg
		if c.settings != nil {
			if cfg, err = encodeSettings(obj, c.settings); err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
		}
		if err := dataplane.LoadPlugin(rig.Dir, obj, slot); err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		sid := fmt.Sprintf("fc00:1::ff:%x", i+1)
		if err := rig.PluginSID(sid, c.like, uint16(slot), bind, cfg); err != nil {
			return nil, err
		}
		builtin := fixtures.Find(all, c.fixture)
		if builtin == nil {
			return nil, fmt.Errorf("%s: no fixture %s", c.name, c.fixture)
		}
		plugin, err := fixtures.ToSID(builtin, sid)
		if err != nil {
			return nil, err
		}
		row, err := pairedSIDs(rig, builtin, plugin, runs, c.repeated)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		row.Case, row.Description = c.name, c.desc
		out = append(out, row)
		if err := dataplane.UnloadPlugin(rig.Dir, slot); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pairedSIDs times the built-in fixture and its copy to the plugin SID in BaselineRounds paired rounds
// (repeated: 200,000 runs of the unchanged frame per test run). Both must give the same action and
// bytes (repeated: each its own input).
func pairedSIDs(rig *fixtures.Rig, builtin, plugin *fixtures.Fixture, runs int, repeated bool) (PluginRow, error) {
	per := max(runs/BaselineRounds, 1)
	var row PluginRow
	var sumB, sumP float64
	var ratios []float64
	for i := 0; i < BaselineRounds; i++ {
		order := []*fixtures.Fixture{builtin, plugin}
		if i%2 == 1 {
			order[0], order[1] = plugin, builtin
		}
		got := map[*fixtures.Fixture]fixtures.Result{}
		for _, f := range order {
			run := func() (fixtures.Result, error) { return rig.Run(nil, f, per) }
			if repeated {
				run = func() (fixtures.Result, error) { return rig.RunRepeated(nil, f, 200000) }
			}
			r, err := run()
			if err != nil {
				return row, err
			}
			got[f] = r
		}
		b, p := got[builtin], got[plugin]
		same := bytes.Equal(b.Output, p.Output)
		if repeated { // each frame comes back as it went in (the two differ in the SID)
			same = bytes.Equal(b.Output, builtin.Input) && bytes.Equal(p.Output, plugin.Input)
		}
		if b.Action != p.Action || !same {
			return row, fmt.Errorf("the plugin SID gave %s %x, the built-in %s %x", dataplane.Actions[p.Action], p.Output,
				dataplane.Actions[b.Action], b.Output)
		}
		sumB += float64(b.PerRun)
		sumP += float64(p.PerRun)
		row.Rounds = append(row.Rounds, float64(p.PerRun-b.PerRun))
		ratios = append(ratios, float64(p.PerRun)/float64(b.PerRun))
	}
	row.BuiltinNs, row.PluginNs = sumB/BaselineRounds, sumP/BaselineRounds
	row.ExtraNs, row.Ratio = median(row.Rounds), median(ratios)
	return row, nil
}
