// Package pluginobj reads an operator's plugin (a BPF object built against the SDK,
// bpf/sdk/seg6x/seg6x_plugin.h) and checks it against the ABI without loading anything into the
// kernel: its ABI version, the context's layout, its programs (one XDP multi-buffer, one tc), the
// helpers it calls, its configuration struct and drop reasons. The data plane loads what it accepts
// (internal/dataplane/plugin.go); the store reads the configuration's layout from it.
package pluginobj

// object.go: reading and checking a plugin object.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"
)

// ABI facts (bpf/sdk/seg6x/seg6x_plugin.h and bpf/consts.h; internal/dataplane's plugin tests check
// them against the compiled program).
const (
	ABI       = 1    // SEG6X_PLUGIN_ABI
	Slots     = 16   // PLUGIN_SLOTS: plugins loaded at once
	ConfigMax = 1024 // SEG6X_PLUGIN_CFG_MAX: bytes of one SID's configuration
	Binds     = 1024 // SEG6X_PLUGIN_BINDS: SIDs that may run a plugin
	Policies  = 4    // PLUGIN_POLICIES: policies a plugin SID may encapsulate into
	Reasons   = 16   // PLUGIN_REASONS: a plugin's own drop reasons are 1..15
)

// ContextMember is one member of struct seg6x_plugin_ctx: its name and bit offset.
type ContextMember struct {
	Name   string
	Offset uint32
}

// Context is struct seg6x_plugin_ctx as this seg6x's pipeline lays it out (64 bytes).
var Context = []ContextMember{
	{"abi", 0}, {"hook", 16}, {"chain", 24}, {"l3_off", 32}, {"srh_off", 48}, {"inner_off", 64},
	{"inner_proto", 80}, {"sl", 88}, {"last_entry", 96}, {"frags", 104}, {"vlan", 112}, {"ifindex", 128},
	{"pkt_len", 160}, {"sid_id", 192}, {"bind", 224}, {"table", 256}, {"plugin", 288}, {"pad", 304},
	{"sid", 320}, {"out_policy", 448}, {"out_reason", 480}, {"out_pad", 496},
}

// ContextBytes is the size of struct seg6x_plugin_ctx.
const ContextBytes = 64

// SharedMaps are the maps a plugin shares with the pipeline (the loader hands it seg6x's own).
var SharedMaps = []string{"plugin_ctx", "plugin_cfg"}

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

// Object is a plugin read from its ELF object and checked.
type Object struct {
	ABI     uint32
	Digest  string         // sha256 of the object's bytes, hex
	Config  *btf.Struct    // struct seg6x_plugin_config (its members are the SID's settings)
	Reasons map[int]string // enum seg6x_plugin_reason: the plugin's drop reasons by value (1..15)
	// Counters is how many counters of its own the plugin keeps per SID (SEG6X_COUNTERS; 0: none),
	// CounterNames their names by index (enum seg6x_plugin_counter).
	Counters     int
	CounterNames map[int]string
	// Dump says the plugin copies frames to a ring (SEG6X_DUMP) for `seg6x capture --plugin`.
	Dump    bool
	Spec    *ebpf.CollectionSpec
	XDP, TC string // its program for each hook (names in Spec.Programs)
}

// Read reads and checks a plugin object (the bytes of its .o file).
func Read(elf []byte) (*Object, error) {
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(elf))
	if err != nil {
		return nil, fmt.Errorf("not a BPF object: %w", err)
	}
	sum := sha256.Sum256(elf)
	p := &Object{Spec: spec, Reasons: map[int]string{}, CounterNames: map[int]string{}, Digest: hex.EncodeToString(sum[:])}
	v, ok := spec.Variables["seg6x_plugin_abi"]
	if !ok {
		return nil, errors.New("no seg6x_plugin_abi: not built with the seg6x plugin SDK (#include <seg6x/seg6x_plugin.h>, SEG6X_PLUGIN(name))")
	}
	if err := v.Get(&p.ABI); err != nil {
		return nil, fmt.Errorf("reading seg6x_plugin_abi: %w", err)
	}
	if p.ABI != ABI {
		return nil, fmt.Errorf("built for plugin ABI %d; this seg6x runs ABI %d: rebuild it with this seg6x's seg6x_plugin.h", p.ABI, ABI)
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
	if err := p.readCounters(); err != nil {
		return nil, err
	}
	return p, nil
}

// CountersMap is the name of the map of a plugin's own per-SID counters (SEG6X_COUNTERS). It is
// pinned beside the plugin (by digest), so that seg6x reads it and a reload of the same object keeps it.
const CountersMap = "seg6x_counters"

// DumpMap is the name of a plugin's ring of frame copies (SEG6X_DUMP), pinned beside it as
// CountersMap is.
const DumpMap = "seg6x_dump_ring"

// DumpRecordBytes is the size of one record of DumpMap (struct seg6x_dump_rec), and DumpHeaderBytes
// the part of it before the frame's bytes.
const (
	DumpHeaderBytes = 40
	DumpRecordBytes = DumpHeaderBytes + 1024
)

// readCounters checks the plugin's counters map and dump ring, if it has them, and reads the
// counters' names.
func (p *Object) readCounters() error {
	if m, ok := p.Spec.Maps[DumpMap]; ok {
		if m.Type != ebpf.RingBuf {
			return fmt.Errorf("map %s is not SEG6X_DUMP's (a ring buffer)", DumpMap)
		}
		m.Pinning = ebpf.PinByName
		p.Dump = true
	}
	m, ok := p.Spec.Maps[CountersMap]
	if !ok {
		return nil
	}
	if m.Type != ebpf.PerCPUArray || m.ValueSize != 16 || m.MaxEntries == 0 || m.MaxEntries%Binds != 0 {
		return fmt.Errorf("map %s is not SEG6X_COUNTERS's (a per-CPU array of %d x N counters)", CountersMap, Binds)
	}
	p.Counters = int(m.MaxEntries / Binds)
	m.Pinning = ebpf.PinByName
	var names *btf.Enum
	if err := p.Spec.Types.TypeByName("seg6x_plugin_counter", &names); err == nil {
		for _, v := range names.Values {
			if v.Value < uint64(p.Counters) {
				p.CounterNames[int(v.Value)] = v.Name
			}
		}
	}
	return nil
}

func isSharedMap(name string) bool {
	for _, s := range SharedMaps {
		if s == name {
			return true
		}
	}
	return false
}

// findPrograms finds the object's one XDP program (multi-buffer) and one tc program (SEG6X_PLUGIN
// makes both).
func (p *Object) findPrograms() error {
	for name, ps := range p.Spec.Programs {
		switch ps.Type {
		case ebpf.XDP:
			if ps.Flags&unix.BPF_F_XDP_HAS_FRAGS == 0 {
				return fmt.Errorf("program %s is XDP without multi-buffer support (SEC(\"xdp.frags\")): the pipeline's program array takes only those", name)
			}
			if p.XDP != "" {
				return fmt.Errorf("two XDP programs (%s, %s): a plugin is one SEG6X_PLUGIN", p.XDP, name)
			}
			p.XDP = name
		case ebpf.SchedCLS:
			if p.TC != "" {
				return fmt.Errorf("two tc programs (%s, %s): a plugin is one SEG6X_PLUGIN", p.TC, name)
			}
			p.TC = name
		default:
			return fmt.Errorf("program %s is of type %s: a plugin has one XDP and one tc program (SEG6X_PLUGIN)", name, ps.Type)
		}
	}
	if p.XDP == "" || p.TC == "" {
		return errors.New("a plugin needs an XDP and a tc program (SEG6X_PLUGIN(name) makes both)")
	}
	return nil
}

// checkPluginContext compares the plugin's struct seg6x_plugin_ctx with the pipeline's (Context),
// member by member (the kernel would not: a plugin reads the context from a map).
func checkPluginContext(spec *ebpf.CollectionSpec) error {
	var got *btf.Struct
	if spec.Types == nil {
		return errors.New("no BTF in the object: build it with -g")
	}
	if err := spec.Types.TypeByName("seg6x_plugin_ctx", &got); err != nil {
		return fmt.Errorf("no struct seg6x_plugin_ctx in the object's BTF (build with -g): %w", err)
	}
	if got.Size != ContextBytes || len(got.Members) != len(Context) {
		return fmt.Errorf("struct seg6x_plugin_ctx is %d bytes, %d members; this seg6x's is %d bytes, %d members: rebuild the plugin with this seg6x's seg6x_plugin.h",
			got.Size, len(got.Members), ContextBytes, len(Context))
	}
	for i, m := range Context {
		g := got.Members[i]
		if g.Name != m.Name || uint32(g.Offset) != m.Offset {
			return fmt.Errorf("struct seg6x_plugin_ctx member %d is %s at bit %d; this seg6x has %s at bit %d: rebuild the plugin with this seg6x's seg6x_plugin.h",
				i, g.Name, g.Offset, m.Name, m.Offset)
		}
	}
	return nil
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
func (p *Object) readTypes() error {
	if err := p.Spec.Types.TypeByName("seg6x_plugin_config", &p.Config); err != nil {
		return fmt.Errorf("no struct seg6x_plugin_config in the object's BTF (SEG6X_PLUGIN declares it; build with -g): %w", err)
	}
	if p.Config.Size > ConfigMax {
		return fmt.Errorf("struct seg6x_plugin_config is %d bytes; at most %d", p.Config.Size, ConfigMax)
	}
	var reasons *btf.Enum
	if err := p.Spec.Types.TypeByName("seg6x_plugin_reason", &reasons); err == nil {
		for _, v := range reasons.Values {
			if v.Value < 1 || v.Value >= Reasons {
				return fmt.Errorf("enum seg6x_plugin_reason: %s = %d; reasons are 1..%d", v.Name, v.Value, Reasons-1)
			}
			p.Reasons[int(v.Value)] = v.Name
		}
	}
	return nil
}
