package dataplane

// plugin.go: operators' functions (plugins, the SDK in bpf/sdk/seg6x/seg6x_plugin.h; read and checked by
// internal/pluginobj) in the data plane: loading one into a slot of the pinned program arrays (the
// verifier's message when it refuses), and emptying a slot. Putting a program into a slot replaces
// the one there in one atomic update: packets run either the old function or the new one.

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/pluginobj"
	"github.com/seg6x/seg6x/internal/state"
)

// Plugin ABI facts the data plane's users need (pluginobj has them all).
const (
	PluginSlots     = pluginobj.Slots
	PluginConfigMax = pluginobj.ConfigMax
	PluginBinds     = pluginobj.Binds
	PluginPolicies  = pluginobj.Policies
	PluginReasons   = pluginobj.Reasons
	PluginOutcomes  = int(Seg6xPluginOutcomePLUGIN_OUTCOMES)
)

// ReadPlugin is pluginobj.Read.
func ReadPlugin(elf []byte) (*pluginobj.Object, error) { return pluginobj.Read(elf) }

// LoadPlugin loads p into slot of instance dir's program arrays, for both hooks, replacing whatever
// function the slot held (one atomic update per hook). The verifier's refusal comes back whole, and
// nothing changes then.
func LoadPlugin(dir string, p *pluginobj.Object, slot int) error {
	if slot < 0 || slot >= PluginSlots {
		return fmt.Errorf("plugin slot %d: slots are 0..%d", slot, PluginSlots-1)
	}
	maps, err := openPinnedMaps(dir, append([]string{"plugin_xdp_progs", "plugin_tc_progs"}, pluginobj.SharedMaps...))
	if err != nil {
		return err
	}
	defer closeMaps(maps)
	// The plugin's own counters are pinned by its digest: a reload of the same object keeps them.
	pins := pluginPinDir(dir, p.Digest)
	if err := os.MkdirAll(pins, 0o700); err != nil {
		return err
	}
	opts := ebpf.CollectionOptions{MapReplacements: map[string]*ebpf.Map{}, Maps: ebpf.MapOptions{PinPath: pins}}
	for _, name := range pluginobj.SharedMaps {
		if _, ok := p.Spec.Maps[name]; ok {
			opts.MapReplacements[name] = maps[name]
		}
	}
	coll, err := ebpf.NewCollectionWithOptions(p.Spec.Copy(), opts)
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return fmt.Errorf("the verifier refused it: %+v", ve)
		}
		return fmt.Errorf("loading it: %w", err)
	}
	defer coll.Close()
	key := uint32(slot)
	before, err := slotProgram(maps["plugin_xdp_progs"], key)
	if err != nil {
		return err
	}
	if before != nil {
		defer before.Close()
	}
	if err := maps["plugin_xdp_progs"].Put(key, coll.Programs[p.XDP]); err != nil {
		return fmt.Errorf("putting its XDP program into slot %d: %w", slot, err)
	}
	if err := maps["plugin_tc_progs"].Put(key, coll.Programs[p.TC]); err != nil {
		if before != nil { // the slot's XDP program as it was
			_ = maps["plugin_xdp_progs"].Put(key, before)
		} else {
			_ = maps["plugin_xdp_progs"].Delete(key)
		}
		return fmt.Errorf("putting its tc program into slot %d: %w", slot, err)
	}
	return nil
}

// slotProgram is the program in slot key of a program array (nil: empty). The caller closes it.
func slotProgram(m *ebpf.Map, key uint32) (*ebpf.Program, error) {
	var id uint32
	if err := m.Lookup(key, &id); err != nil {
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading plugin slot %d: %w", key, err)
	}
	p, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
	if err != nil {
		return nil, fmt.Errorf("plugin slot %d: %w", key, err)
	}
	return p, nil
}

// pluginPinDir is where the maps of the plugin object of digest are pinned.
func pluginPinDir(dir, digest string) string { return filepath.Join(PinDir(dir), "plugins", digest) }

// PluginCounters reads the counters the plugin object of digest keeps for SID bind (n of them), or
// nil when it keeps none.
func PluginCounters(dir, digest string, bind uint32, n int) ([]state.Counter, error) {
	m, err := ebpf.LoadPinnedMap(filepath.Join(pluginPinDir(dir, digest), pluginobj.CountersMap), nil)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer m.Close()
	out := make([]state.Counter, n)
	for i := range out {
		if out[i], err = sumCounter(m, bind*uint32(n)+uint32(i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// UnloadPlugin empties slot: packets to SIDs still naming it are dropped, counted as PLUGIN_O_EMPTY.
func UnloadPlugin(dir string, slot int) error {
	if slot < 0 || slot >= PluginSlots {
		return fmt.Errorf("plugin slot %d: slots are 0..%d", slot, PluginSlots-1)
	}
	maps, err := openPinnedMaps(dir, []string{"plugin_xdp_progs", "plugin_tc_progs"})
	if err != nil {
		return err
	}
	defer closeMaps(maps)
	for _, m := range maps {
		if err := m.Delete(uint32(slot)); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("emptying slot %d: %w", slot, err)
		}
	}
	return nil
}

// openPinnedMaps opens instance dir's pinned maps by name.
func openPinnedMaps(dir string, names []string) (map[string]*ebpf.Map, error) {
	out := map[string]*ebpf.Map{}
	for _, name := range names {
		m, err := ebpf.LoadPinnedMap(filepath.Join(MapPinDir(dir), name), nil)
		if err != nil {
			closeMaps(out)
			return nil, fmt.Errorf("opening the data plane's %s map (is the data plane set up?): %w", name, err)
		}
		out[name] = m
	}
	return out, nil
}

func closeMaps(maps map[string]*ebpf.Map) {
	for _, m := range maps {
		m.Close()
	}
}

// writePlugins runs a put or delete of plugin slots (state.TablePlugins), each undone by loading
// what the slot held (Old) or emptying it.
func (b *BPF) writePlugins(t *txn, kind state.StepKind, w state.PluginWrites) error {
	restore := func(e state.Write[uint32, state.PluginSpec]) func() error {
		return func() error {
			if !e.Had {
				return UnloadPlugin(b.Dir, int(e.Key))
			}
			return loadPluginSpec(b.Dir, e.Old, int(e.Key))
		}
	}
	for _, e := range w {
		desc := fmt.Sprintf("plugin %s (slot %d)", e.Val.Name, e.Key)
		if kind == state.StepPut && !e.Had { // a slot newly used: its counters start from zero
			if err := b.zeroPluginSlot(e.Key); err != nil {
				return err
			}
		}
		if kind == state.StepPut {
			err := t.do(desc, func() error { return loadPluginSpec(b.Dir, e.Val, int(e.Key)) }, restore(e))
			if err != nil {
				return err
			}
			continue
		}
		if err := t.do("empty "+desc, func() error { return UnloadPlugin(b.Dir, int(e.Key)) }, restore(e)); err != nil {
			return err
		}
	}
	return nil
}

// zeroPluginSlot zeroes the outcome and reason counters of plugin slot.
func (b *BPF) zeroPluginSlot(slot uint32) error {
	var outcomes, reasons []uint32
	for i := uint32(0); i < uint32(PluginOutcomes); i++ {
		outcomes = append(outcomes, slot*uint32(PluginOutcomes)+i)
	}
	for i := uint32(0); i < PluginReasons; i++ {
		reasons = append(reasons, slot*PluginReasons+i)
	}
	return errors.Join(zeroCounters(b.Maps.PluginStats, outcomes), zeroCounters(b.Maps.PluginReasonStats, reasons))
}

// zeroPluginBind zeroes the counters of plugin SID bind: its outcomes, and the n counters its plugin
// (of digest) keeps for it.
func (b *BPF) zeroPluginBind(bind uint32, digest string, n int) error {
	var outcomes []uint32
	for i := uint32(0); i < uint32(PluginOutcomes); i++ {
		outcomes = append(outcomes, bind*uint32(PluginOutcomes)+i)
	}
	if err := zeroCounters(b.Maps.PluginSidStats, outcomes); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	m, err := ebpf.LoadPinnedMap(filepath.Join(pluginPinDir(b.Dir, digest), pluginobj.CountersMap), nil)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer m.Close()
	own := make([]uint32, n)
	for i := range own {
		own[i] = bind*uint32(n) + uint32(i)
	}
	return zeroCounters(m, own)
}

func loadPluginSpec(dir string, p state.PluginSpec, slot int) error {
	obj, err := pluginobj.Read(p.Object)
	if err != nil {
		return fmt.Errorf("plugin %s: %w", p.Name, err)
	}
	if err := LoadPlugin(dir, obj, slot); err != nil {
		return fmt.Errorf("plugin %s: %w", p.Name, err)
	}
	return nil
}

// writePluginConfigs writes the configuration of every plugin SID of es into its bind, before the
// SID entries that name them, and starts the counters of a bind new to its SID from zero. A bind's
// bytes never change while a SID entry names it (a new configuration gets a new bind), so nothing is
// undone here.
func (b *BPF) writePluginConfigs(es state.SIDWrites) error {
	m := b.Maps
	for _, e := range es {
		v := e.Val
		if v.Bind == 0 {
			continue
		}
		if !e.Had || e.Old.Bind != v.Bind {
			if err := b.zeroPluginBind(v.Bind, v.Digest, v.Counters); err != nil {
				return fmt.Errorf("SID %s: %w", e.Key, err)
			}
		}
		if v.Bind >= PluginBinds || len(v.Config) > PluginConfigMax {
			return fmt.Errorf("SID %s: plugin configuration slot %d of %d bytes", e.Key, v.Bind, len(v.Config))
		}
		cfg := make([]byte, PluginConfigMax)
		copy(cfg, v.Config)
		if err := m.PluginCfg.Put(v.Bind, cfg); err != nil {
			return fmt.Errorf("SID %s: its plugin configuration: %w", e.Key, err)
		}
		var pb Seg6xPluginBind
		if len(v.Policies) > len(pb.Policies) {
			return fmt.Errorf("SID %s: %d policies for its plugin; at most %d", e.Key, len(v.Policies), len(pb.Policies))
		}
		copy(pb.Policies[:], v.Policies)
		if err := m.PluginBinds.Put(v.Bind, pb); err != nil {
			return fmt.Errorf("SID %s: its plugin configuration: %w", e.Key, err)
		}
	}
	return nil
}

// reconcilePlugins loads every plugin of im into its slot (again: loading the same object replaces
// it in one update), empties the other slots, and writes the plugin SIDs' configurations.
func (b *BPF) reconcilePlugins(im *state.Image, rep *state.ReconcileReport) error {
	for slot := 1; slot < PluginSlots; slot++ {
		p, ok := im.Plugins[uint32(slot)]
		if !ok {
			if err := UnloadPlugin(b.Dir, slot); err != nil {
				return err
			}
			continue
		}
		if err := loadPluginSpec(b.Dir, p, slot); err != nil {
			return err
		}
		rep.Written++
	}
	keep := map[string]bool{}
	for _, p := range im.Plugins {
		keep[p.Digest] = true
	}
	ents, _ := os.ReadDir(filepath.Join(PinDir(b.Dir), "plugins"))
	for _, e := range ents {
		if e.IsDir() && !keep[e.Name()] {
			if err := os.RemoveAll(filepath.Join(PinDir(b.Dir), "plugins", e.Name())); err != nil {
				return err
			}
		}
	}
	var es state.SIDWrites
	for k, v := range im.SIDs {
		if v.Bind != 0 {
			// Had, with the same bind: the counters it has counted stay.
			es = append(es, state.Write[netip.Prefix, state.SIDSpec]{Key: k, Val: v, Old: v, Had: true})
		}
	}
	return b.writePluginConfigs(es)
}

// PluginDumpRing opens the ring of frame copies of the plugin object of digest (SEG6X_DUMP) in
// instance dir; the caller closes it.
func PluginDumpRing(dir, digest string) (*ebpf.Map, error) {
	m, err := ebpf.LoadPinnedMap(filepath.Join(pluginPinDir(dir, digest), pluginobj.DumpMap), nil)
	if err != nil {
		return nil, fmt.Errorf("the plugin's dump ring (is a plugin with SEG6X_DUMP loaded here?): %w", err)
	}
	return m, nil
}
