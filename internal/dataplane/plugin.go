package dataplane

// plugin.go: operators' functions (plugins, the SDK in bpf/sdk/seg6x/seg6x_plugin.h) in the data plane:
// reading a plugin object and checking it against the ABI (its version, the context's layout, the
// programs and the helpers it may call), loading it into a slot of the pinned program arrays (the
// verifier's message when it refuses), and emptying a slot. Putting a program into a slot replaces
// the one there in one atomic update: packets run either the old function or the new one.

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"
)

// Plugin ABI facts (bpf/sdk/seg6x/seg6x_plugin.h and bpf/consts.h; plugin_test.go checks them against
// the compiled maps).
const (
	PluginABI       = 1    // SEG6X_PLUGIN_ABI
	PluginSlots     = 16   // PLUGIN_SLOTS: plugins loaded at once
	PluginConfigMax = 1024 // SEG6X_PLUGIN_CFG_MAX: bytes of one SID's configuration
	PluginBinds     = 1024 // SEG6X_PLUGIN_BINDS: SIDs that may run a plugin
	PluginPolicies  = 4    // PLUGIN_POLICIES: policies a plugin SID may encapsulate into
	PluginReasons   = 16   // PLUGIN_REASONS: a plugin's own drop reasons are 1..15
	PluginOutcomes  = int(Seg6xPluginOutcomePLUGIN_OUTCOMES)
)

// The maps a plugin shares with the pipeline (the loader hands it seg6x's own).
var pluginSharedMaps = []string{"plugin_ctx", "plugin_cfg"}

// pluginHelpers are the BPF helpers a plugin may call: reading and rewriting its frame, its own maps,
// time, randomness, loops, FIB lookups, rings to user space. Whatever would send the packet somewhere
// (redirects, tail calls), reach other state (sockets, probes of kernel memory) or change the packet's
// metadata is refused: the pipeline carries out the plugin's verdict.
var pluginHelpers = map[asm.BuiltinFunc]bool{
	asm.FnMapLookupElem: true, asm.FnMapUpdateElem: true, asm.FnMapDeleteElem: true,
	asm.FnMapPushElem: true, asm.FnMapPopElem: true, asm.FnMapPeekElem: true, asm.FnForEachMapElem: true,
	asm.FnSpinLock: true, asm.FnSpinUnlock: true,
	asm.FnKtimeGetNs: true, asm.FnKtimeGetCoarseNs: true, asm.FnKtimeGetBootNs: true, asm.FnJiffies64: true,
	asm.FnGetPrandomU32: true, asm.FnGetSmpProcessorId: true, asm.FnLoop: true, asm.FnTracePrintk: true,
	asm.FnSkbLoadBytes: true, asm.FnSkbStoreBytes: true, asm.FnSkbPullData: true,
	asm.FnL3CsumReplace: true, asm.FnL4CsumReplace: true, asm.FnCsumDiff: true,
	asm.FnXdpLoadBytes: true, asm.FnXdpStoreBytes: true, asm.FnXdpGetBuffLen: true,
	asm.FnXdpAdjustHead: true, asm.FnXdpAdjustTail: true,
	asm.FnFibLookup: true, asm.FnPerfEventOutput: true,
	asm.FnRingbufOutput: true, asm.FnRingbufReserve: true, asm.FnRingbufSubmit: true,
	asm.FnRingbufDiscard: true, asm.FnRingbufQuery: true,
}

// PluginObject is a plugin read from its ELF object and checked; LoadPlugin loads it.
type PluginObject struct {
	ABI     uint32
	Config  *btf.Struct    // struct seg6x_plugin_config (its members are the SID's settings)
	Reasons map[int]string // enum seg6x_plugin_reason: the plugin's drop reasons by value (1..15)
	spec    *ebpf.CollectionSpec
	xdp, tc string // its program for each hook
}

// ReadPlugin reads and checks a plugin object (the bytes of its .o file).
func ReadPlugin(elf []byte) (*PluginObject, error) {
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(elf))
	if err != nil {
		return nil, fmt.Errorf("not a BPF object: %w", err)
	}
	p := &PluginObject{spec: spec, Reasons: map[int]string{}}
	v, ok := spec.Variables["seg6x_plugin_abi"]
	if !ok {
		return nil, errors.New("no seg6x_plugin_abi: not built with the seg6x plugin SDK (#include <seg6x/seg6x_plugin.h>, SEG6X_PLUGIN(name))")
	}
	if err := v.Get(&p.ABI); err != nil {
		return nil, fmt.Errorf("reading seg6x_plugin_abi: %w", err)
	}
	if p.ABI != PluginABI {
		return nil, fmt.Errorf("built for plugin ABI %d; this seg6x runs ABI %d: rebuild it with this seg6x's seg6x_plugin.h", p.ABI, PluginABI)
	}
	if err := p.findPrograms(); err != nil {
		return nil, err
	}
	if err := checkPluginContext(spec); err != nil {
		return nil, err
	}
	if err := checkPluginHelpers(spec); err != nil {
		return nil, err
	}
	if err := p.readTypes(); err != nil {
		return nil, err
	}
	for name, m := range spec.Maps {
		if isSharedMap(name) {
			continue
		}
		if strings.HasPrefix(name, ".") { // .rodata, .bss, .data: the object's own variables
			continue
		}
		m.Pinning = ebpf.PinNone // a plugin's own maps live with its programs
	}
	return p, nil
}

func isSharedMap(name string) bool {
	for _, s := range pluginSharedMaps {
		if s == name {
			return true
		}
	}
	return false
}

// findPrograms finds the object's one XDP program (multi-buffer) and one tc program (SEG6X_PLUGIN
// makes both).
func (p *PluginObject) findPrograms() error {
	for name, ps := range p.spec.Programs {
		switch ps.Type {
		case ebpf.XDP:
			if ps.Flags&unix.BPF_F_XDP_HAS_FRAGS == 0 {
				return fmt.Errorf("program %s is XDP without multi-buffer support (SEC(\"xdp.frags\")): the pipeline's program array takes only those", name)
			}
			if p.xdp != "" {
				return fmt.Errorf("two XDP programs (%s, %s): a plugin is one SEG6X_PLUGIN", p.xdp, name)
			}
			p.xdp = name
		case ebpf.SchedCLS:
			if p.tc != "" {
				return fmt.Errorf("two tc programs (%s, %s): a plugin is one SEG6X_PLUGIN", p.tc, name)
			}
			p.tc = name
		default:
			return fmt.Errorf("program %s is of type %s: a plugin has one XDP and one tc program (SEG6X_PLUGIN)", name, ps.Type)
		}
	}
	if p.xdp == "" || p.tc == "" {
		return errors.New("a plugin needs an XDP and a tc program (SEG6X_PLUGIN(name) makes both)")
	}
	return nil
}

// checkPluginContext compares the plugin's struct seg6x_plugin_ctx with the pipeline's, member by
// member (the kernel would not: a plugin reads the context from a map).
func checkPluginContext(spec *ebpf.CollectionSpec) error {
	mine, err := pipelineBTF()
	if err != nil {
		return err
	}
	var want, got *btf.Struct
	if err := mine.TypeByName("seg6x_plugin_ctx", &want); err != nil {
		return fmt.Errorf("the pipeline's BTF: %w", err)
	}
	if spec.Types == nil {
		return errors.New("no BTF in the object: build it with -g")
	}
	if err := spec.Types.TypeByName("seg6x_plugin_ctx", &got); err != nil {
		return fmt.Errorf("no struct seg6x_plugin_ctx in the object's BTF (build with -g): %w", err)
	}
	if got.Size != want.Size || len(got.Members) != len(want.Members) {
		return fmt.Errorf("struct seg6x_plugin_ctx is %d bytes, %d members; this seg6x's is %d bytes, %d members: rebuild the plugin with this seg6x's seg6x_plugin.h",
			got.Size, len(got.Members), want.Size, len(want.Members))
	}
	for i, m := range want.Members {
		g := got.Members[i]
		if g.Name != m.Name || g.Offset != m.Offset {
			return fmt.Errorf("struct seg6x_plugin_ctx member %d is %s at bit %d; this seg6x has %s at bit %d: rebuild the plugin with this seg6x's seg6x_plugin.h",
				i, g.Name, g.Offset, m.Name, m.Offset)
		}
	}
	return nil
}

// pipelineBTF is the BTF of the embedded XDP program.
func pipelineBTF() (*btf.Spec, error) {
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(_Seg6xBytes))
	if err != nil {
		return nil, fmt.Errorf("the embedded program's BTF: %w", err)
	}
	return spec, nil
}

// checkPluginHelpers refuses a plugin whose programs call a helper outside pluginHelpers, or a kfunc.
func checkPluginHelpers(spec *ebpf.CollectionSpec) error {
	var bad []string
	seen := map[string]bool{}
	for name, ps := range spec.Programs {
		for _, ins := range ps.Instructions {
			what := ""
			switch {
			case ins.IsKfuncCall():
				what = "a kernel function (kfunc)"
			case ins.IsBuiltinCall():
				fn, err := asm.BuiltinFuncForPlatform("linux", uint32(ins.Constant))
				if err != nil || !pluginHelpers[fn] {
					what = fmt.Sprintf("helper %v", fn)
				}
			}
			if what != "" && !seen[name+what] {
				seen[name+what] = true
				bad = append(bad, fmt.Sprintf("%s calls %s", name, what))
			}
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("plugins may not call it (the pipeline forwards the packet, by the verdict): %s", strings.Join(bad, "; "))
	}
	return nil
}

// readTypes finds the configuration struct and the reason names in the object's BTF.
func (p *PluginObject) readTypes() error {
	if err := p.spec.Types.TypeByName("seg6x_plugin_config", &p.Config); err != nil {
		return fmt.Errorf("no struct seg6x_plugin_config in the object's BTF (SEG6X_PLUGIN declares it; build with -g): %w", err)
	}
	if p.Config.Size > PluginConfigMax {
		return fmt.Errorf("struct seg6x_plugin_config is %d bytes; at most %d", p.Config.Size, PluginConfigMax)
	}
	var reasons *btf.Enum
	if err := p.spec.Types.TypeByName("seg6x_plugin_reason", &reasons); err == nil {
		for _, v := range reasons.Values {
			if v.Value < 1 || v.Value >= PluginReasons {
				return fmt.Errorf("enum seg6x_plugin_reason: %s = %d; reasons are 1..%d", v.Name, v.Value, PluginReasons-1)
			}
			p.Reasons[int(v.Value)] = v.Name
		}
	}
	return nil
}

// LoadPlugin loads p into slot of instance dir's program arrays, for both hooks, replacing whatever
// function the slot held (one atomic update per hook). The verifier's refusal comes back whole, and
// nothing changes then.
func LoadPlugin(dir string, p *PluginObject, slot int) error {
	if slot < 0 || slot >= PluginSlots {
		return fmt.Errorf("plugin slot %d: slots are 0..%d", slot, PluginSlots-1)
	}
	maps, err := openPinnedMaps(dir, append([]string{"plugin_xdp_progs", "plugin_tc_progs"}, pluginSharedMaps...))
	if err != nil {
		return err
	}
	defer closeMaps(maps)
	opts := ebpf.CollectionOptions{MapReplacements: map[string]*ebpf.Map{}}
	for _, name := range pluginSharedMaps {
		if _, ok := p.spec.Maps[name]; ok {
			opts.MapReplacements[name] = maps[name]
		}
	}
	coll, err := ebpf.NewCollectionWithOptions(p.spec.Copy(), opts)
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
	if err := maps["plugin_xdp_progs"].Put(key, coll.Programs[p.xdp]); err != nil {
		return fmt.Errorf("putting its XDP program into slot %d: %w", slot, err)
	}
	if err := maps["plugin_tc_progs"].Put(key, coll.Programs[p.tc]); err != nil {
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
