package state_test

// plugin_test.go: plugins in the store, on an in-memory data plane: loading one, SIDs that run it
// with their settings checked against its configuration's layout, a replacement that moves its SIDs
// to a new slot with new binds, refusals that change nothing, a config file's plugins, and the
// whole of it across a restart.

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/benchrig/rigbpf"
	"github.com/seg6x/seg6x/tools/testsupport"
	"github.com/seg6x/seg6x/tools/testsupport/fakedp"
)

func pluginOp(kind model.OpKind, name string, obj []byte) state.Op {
	return state.Op{Kind: kind, Plugin: &model.Plugin{Name: name, File: name + ".o", Object: obj}}
}

func pluginSIDOp(addr, plugin string, cfg map[string]string) state.Op {
	return state.Op{Kind: model.OpReplace, SID: &model.SID{SID: netip.MustParseAddr(addr), Action: "plugin", Plugin: plugin,
		Tenant: "blue", Config: cfg}}
}

func sidOf(t *testing.T, st *state.Store, addr string) model.SID {
	t.Helper()
	for _, sd := range st.SIDs() {
		if sd.SID == netip.MustParseAddr(addr) {
			return sd
		}
	}
	t.Fatalf("no SID %s", addr)
	return model.SID{}
}

func commit(t *testing.T, st *state.Store, ops ...state.Op) {
	t.Helper()
	if _, err := st.Commit(ops, false); err != nil {
		t.Fatal(err)
	}
}

func refused(t *testing.T, st *state.Store, want string, ops ...state.Op) {
	t.Helper()
	gen := st.Gen()
	_, err := st.Commit(ops, false)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("want an error with %q, got %v", want, err)
	}
	if st.Gen() != gen {
		t.Fatalf("a refused commit changed the state (gen %d -> %d)", gen, st.Gen())
	}
}

func TestPluginsInTheStore(t *testing.T) {
	dir := t.TempDir()
	st, _ := fakedp.OpenStore(t, dir, testsupport.FakeEnv{})
	ttlgate, nop := rigbpf.PluginTtlgateObject(), rigbpf.PluginNopObject()
	commit(t, st, state.Op{Kind: model.OpAdd, Tenant: &model.Tenant{Name: "blue", Table: 100}},
		pluginOp(model.OpAdd, "gate", ttlgate))
	ps := st.Plugins()
	if len(ps) != 1 || ps[0].Name != "gate" || ps[0].Slot == 0 || len(ps[0].Digest) != 64 || !strings.Contains(ps[0].Config, "min_ttl") ||
		ps[0].Reasons[1] != "low_ttl" {
		t.Fatalf("plugins: %+v", ps)
	}
	slot := ps[0].Slot

	// SIDs: settings checked against the plugin's layout; the plugin must be loaded.
	commit(t, st, pluginSIDOp("fc00:1::d", "gate", map[string]string{"min_ttl": "5"}))
	sd := sidOf(t, st, "fc00:1::d")
	if sd.Bind == 0 || sd.PluginSlot != slot {
		t.Fatalf("SID: bind %d, slot %d (plugin's %d)", sd.Bind, sd.PluginSlot, slot)
	}
	if v := st.Image().SIDs[sd.Prefix()]; v.Plugin != slot || v.Bind != sd.Bind || len(v.Config) != 1 || v.Config[0] != 5 ||
		v.Table != 100 {
		t.Fatalf("SID entry: %+v", v)
	}
	refused(t, st, "min_ttl=300: want an integer 0..255", pluginSIDOp("fc00:1::e", "gate", map[string]string{"min_ttl": "300"}))
	refused(t, st, "unknown key max_ttl; the keys: min_ttl", pluginSIDOp("fc00:1::e", "gate", map[string]string{"max_ttl": "5"}))
	refused(t, st, `no plugin "nosuch" is loaded`, pluginSIDOp("fc00:1::e", "nosuch", nil))
	refused(t, st, "SID fc00:1::d still runs it", pluginOp(model.OpDelete, "gate", nil))
	refused(t, st, `plugin "junk": file: not a BPF object`, pluginOp(model.OpAdd, "junk", []byte("\x7fELF not really")))
	// The same settings again: the same bind.
	commit(t, st, pluginSIDOp("fc00:1::d", "gate", map[string]string{"min_ttl": "5"}))
	if again := sidOf(t, st, "fc00:1::d"); again.Bind != sd.Bind {
		t.Fatalf("unchanged settings moved the SID to bind %d (was %d)", again.Bind, sd.Bind)
	}
	// New settings: a new bind (the old one's bytes stay until no packet can read them).
	commit(t, st, pluginSIDOp("fc00:1::d", "gate", map[string]string{"min_ttl": "7"}))
	moved := sidOf(t, st, "fc00:1::d")
	if moved.Bind == sd.Bind || st.Image().SIDs[sd.Prefix()].Config[0] != 7 {
		t.Fatalf("new settings: bind %d (was %d)", moved.Bind, sd.Bind)
	}

	// Replaced by an object whose layout lacks min_ttl: refused, nothing changes.
	refused(t, st, "min_ttl", pluginOp(model.OpReplace, "gate", nop))
	if ps := st.Plugins(); ps[0].Digest == "" || ps[0].Slot != slot {
		t.Fatalf("after a refused replacement: %+v", ps)
	}
	// A second plugin, and its SID with no settings; replacing it moves the SID to a new slot.
	commit(t, st, pluginOp(model.OpAdd, "n", nop), pluginSIDOp("fc00:1::f", "n", nil))
	before := sidOf(t, st, "fc00:1::f")
	commit(t, st, pluginOp(model.OpReplace, "n", ttlgate))
	after := sidOf(t, st, "fc00:1::f")
	if after.PluginSlot == before.PluginSlot || after.Bind == before.Bind {
		t.Fatalf("replacement: slot %d -> %d, bind %d -> %d", before.PluginSlot, after.PluginSlot, before.Bind, after.Bind)
	}
	if im := st.Image(); im.Plugins[after.PluginSlot].Name != "n" || len(im.Plugins) != 2 {
		t.Fatalf("image plugins: %v", im.Plugins)
	}

	// Across a restart: the plugins (objects from the state directory), slots, binds and bytes.
	want := st.Image()
	st.Close()
	st2, _ := fakedp.OpenStore(t, dir, testsupport.FakeEnv{})
	got := st2.Image()
	for slot, p := range want.Plugins {
		if g := got.Plugins[slot]; g.Name != p.Name || g.Digest != p.Digest || len(g.Object) == 0 {
			t.Errorf("slot %d after a restart: %s %s, was %s %s", slot, g.Name, g.Digest, p.Name, p.Digest)
		}
	}
	for k, v := range want.SIDs {
		if g := got.SIDs[k]; g.Bind != v.Bind || g.Plugin != v.Plugin || string(g.Config) != string(v.Config) {
			t.Errorf("SID %s after a restart: %+v, was %+v", k, g, v)
		}
	}

	// Removing: the SIDs first, then the plugin.
	commit(t, st2, state.Op{Kind: model.OpDelete, SID: &model.SID{SID: netip.MustParseAddr("fc00:1::f")}},
		pluginOp(model.OpDelete, "n", nil))
	if ps := st2.Plugins(); len(ps) != 1 || ps[0].Name != "gate" {
		t.Fatalf("after removing n: %+v", ps)
	}
}

// A config file's plugins: applied before the SIDs that run them, and applying the same file again
// changes nothing.
func TestPluginsFromAConfigFile(t *testing.T) {
	st, _ := fakedp.OpenStore(t, t.TempDir(), testsupport.FakeEnv{})
	desired := model.State{
		Tenants: []model.Tenant{{Name: "blue", Table: 100}},
		Plugins: []model.Plugin{{Name: "gate", File: "ttlgate.o", Object: rigbpf.PluginTtlgateObject()}},
		SIDs: []model.SID{{SID: netip.MustParseAddr("fc00:1::d"), Action: "plugin", Plugin: "gate", Tenant: "blue",
			Config: map[string]string{"min_ttl": "5"}}},
	}
	if _, err := st.Apply(desired, false); err != nil {
		t.Fatal(err)
	}
	d, err := st.Apply(desired, false)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Empty() {
		t.Fatalf("the same file again changed %+v", d)
	}
	desired.Plugins, desired.SIDs = nil, nil
	if _, err := st.Apply(desired, false); err != nil {
		t.Fatal(err)
	}
	if len(st.Plugins()) != 0 || len(st.SIDs()) != 0 {
		t.Fatalf("left: %v %v", st.Plugins(), st.SIDs())
	}
}
