package dataplane

// explain.go: the data plane side of `seg6x explain`. An Explainer runs single frames through the
// traced XDP build (bpf/trace.h) with BPF_PROG_TEST_RUN, pinned to one CPU, and reads the record the
// run left in that CPU's trace scratch. The build is loaded with trace_explain set: it counts
// nothing, writes nothing to the trace ring and sends nothing to the slow path. It runs either on an
// instance's live maps (NewExplainer) or on private maps filled with a state not applied yet
// (NewImageExplainer: `seg6x apply --explain`).

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/seg6x/seg6x/internal/state"
)

// Explained is what one frame did in the traced build.
type Explained struct {
	Record Seg6xTraceRec
	Ret    uint32 // the hook's return code
	Out    []byte // the frame as it left (or was dropped, or passed)
}

// xdpRunCtx is struct xdp_md for BPF_PROG_TEST_RUN.
type xdpRunCtx struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// Explainer runs frames through the traced XDP build (nothing is sent, nothing counted in the live
// counters, nothing written to the trace ring).
type Explainer struct {
	o *Seg6xTraceObjects
}

// explainVars are the traced build's explain settings. slowReader: a daemon reads the slow path
// (its answers are then those of a running daemon: fragmented, relayed), else as without one.
func explainVars(slowReader bool) map[string]any {
	mode := uint32(1) // TRACE_EXPLAIN
	if slowReader {
		mode = 2 // TRACE_EXPLAIN_SLOW_READER
	}
	return map[string]any{"trace_explain": mode}
}

// NewExplainer loads the traced build on the live maps of instance dir (its programs loaded with
// opts).
func NewExplainer(dir string, opts state.ProgramOptions, slowReader bool) (*Explainer, error) {
	o := &Seg6xTraceObjects{}
	if err := loadProgramWith(dir, programOptions(opts), "traced XDP", LoadSeg6xTrace, o, explainVars(slowReader)); err != nil {
		return nil, err
	}
	return &Explainer{o: o}, nil
}

// NewImageExplainer loads the traced build on private maps (not pinned, freed by Close) that hold
// im: frames run as they would once im is applied. The next-hop cache starts empty; the FIB is
// the caller's network namespace's, as for the attached program.
func NewImageExplainer(im *state.Image, opts state.ProgramOptions, slowReader bool) (*Explainer, error) {
	spec, err := programSpec(LoadSeg6xTrace, programOptions(opts), explainVars(slowReader))
	if err != nil {
		return nil, err
	}
	maxPolicy, maxSID := uint32(0), uint32(0)
	for id := range im.Policies {
		maxPolicy = max(maxPolicy, id)
	}
	for _, v := range im.SIDs {
		maxSID = max(maxSID, v.SID.ID)
	}
	// Sized for im, not for the limits: the live maps' preallocated arrays and caches are tens of MB.
	size := map[string]uint32{"policies": maxPolicy + 1, "policy_stats": maxPolicy + 1,
		"sids": uint32(len(im.SIDs)) + 1, "sid_stats": maxSID + 1, "nh_cache": 64, "trace_ring": 4096, "vx_seen": 64,
		"vx_enc_cache": 64, "vx_dec_cache": 64, "vx_nh": 16, "policy_nh": 16}
	for name, ms := range spec.Maps {
		ms.Pinning = ebpf.PinNone
		if n, ok := size[name]; ok {
			ms.MaxEntries = n
		}
	}
	o := &Seg6xTraceObjects{}
	if err := spec.LoadAndAssign(o, nil); err != nil {
		return nil, loadError("traced XDP", err)
	}
	m := o.Seg6xTraceMaps
	fm := imageMaps{TxPorts: m.TxPorts, Policies: m.Policies, PolicyGroups: m.PolicyGroups, Sids: m.Sids, SidPrefixes: m.SidPrefixes, SidConf: m.SidConf,
		Routes4: m.Routes4, Routes6: m.Routes6, SidSpace: m.SidSpace, SidSources: m.SidSources, Ports: m.Ports,
		VxDevs: m.VxDevs, VxRx: m.VxRx, VxRemotes: m.VxRemotes, VxMacs: m.VxMacs, CacheGen: m.CacheGen}
	if err := writeImage(fm, im, &state.ReconcileReport{}); err != nil {
		o.Close()
		return nil, fmt.Errorf("writing the state into the explain maps: %w", err)
	}
	return &Explainer{o: o}, nil
}

// Close releases the traced build (and private maps).
func (x *Explainer) Close() { x.o.Close() }

// Run runs frame, arriving on ifindex, and returns its record and output.
func (x *Explainer) Run(ifindex uint32, frame []byte) (*Explained, error) {
	if len(frame) < 14 {
		return nil, fmt.Errorf("a frame of %d bytes: not even an Ethernet header", len(frame))
	}
	// One CPU for the run and the read of its per-CPU record.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	cpu := -1
	for i := 0; i < 1024 && cpu < 0; i++ {
		if set.IsSet(i) {
			cpu = i
		}
	}
	if cpu < 0 {
		return nil, errors.New("no CPU in this thread's affinity")
	}
	one := set
	one.Zero()
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		return nil, err
	}
	defer unix.SchedSetaffinity(0, &set)
	out := make([]byte, len(frame)+4096)
	ctx := xdpRunCtx{DataEnd: uint32(len(frame)), IngressIfindex: ifindex}
	run := &ebpf.RunOptions{Data: frame, DataOut: out, Context: ctx}
	ret, err := x.o.Seg6xXdpTrace.Run(run)
	if err != nil {
		return nil, fmt.Errorf("BPF_PROG_TEST_RUN: %w", err)
	}
	var bufs []Seg6xTraceBuf
	if err := x.o.TraceScratch.Lookup(uint32(0), &bufs); err != nil {
		return nil, err
	}
	if cpu >= len(bufs) {
		return nil, fmt.Errorf("no trace record for CPU %d", cpu)
	}
	return &Explained{Record: bufs[cpu].Rec, Ret: ret, Out: run.DataOut}, nil
}
