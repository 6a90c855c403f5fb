package dataplane

// plugin.go: operators' functions (plugins, the SDK in bpf/sdk/seg6x/seg6x_plugin.h; read and checked by
// internal/pluginobj) in the data plane: loading one into a slot of the pinned program arrays (the
// verifier's message when it refuses), and emptying a slot. Putting a program into a slot replaces
// the one there in one atomic update: packets run either the old function or the new one.

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/pluginobj"
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
	opts := ebpf.CollectionOptions{MapReplacements: map[string]*ebpf.Map{}}
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
