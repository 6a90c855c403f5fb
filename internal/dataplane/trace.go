package dataplane

// trace.go: the data plane side of `seg6x trace` and `seg6x explain` (bpf/trace.h). ArmTrace loads
// the traced builds of the programs against the instance's maps, writes the filter, and points every
// attached program at its traced build (its trace_prog slot, then its trace_armed flag); Close undoes
// both. Explain (explain.go) runs single frames through the same traced build.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/seg6x/seg6x/internal/state"
)

// TraceRecordSize is the fixed part of a trace record; the frame bytes follow it.
var TraceRecordSize = binary.Size(Seg6xTraceRec{})

// Trace is an armed trace of one instance.
type Trace struct {
	xdp   *Seg6xTraceObjects
	tc    *Seg6xTcTraceObjects
	armed []armedProgram
	Ring  *ringbuf.Reader
	once  sync.Once
}

// armedProgram is an attached program's flag and tail-call slot.
type armedProgram struct {
	id        ebpf.ProgramID
	flag, jmp *ebpf.Map
}

// ArmTrace starts tracing every program attached in instance dir (its programs loaded with opts)
// with cfg. Interfaces attached later are not traced.
func ArmTrace(dir string, opts state.ProgramOptions, cfg Seg6xTraceCfg) (*Trace, error) {
	t := &Trace{}
	fail := func(err error) (*Trace, error) {
		t.Close()
		return nil, err
	}
	po := programOptions(opts)
	t.xdp = &Seg6xTraceObjects{}
	if err := loadProgram(dir, po, "traced XDP", LoadSeg6xTrace, t.xdp); err != nil {
		t.xdp = nil
		return fail(err)
	}
	if err := t.xdp.TraceConfig.Put(uint32(0), &cfg); err != nil {
		return fail(fmt.Errorf("writing the trace filter: %w", err))
	}
	if err := zeroPerCPU(t.xdp.TraceCounts); err != nil {
		return fail(err)
	}
	ring, err := ringbuf.NewReader(t.xdp.TraceRing)
	if err != nil {
		return fail(fmt.Errorf("opening the trace ring: %w", err))
	}
	t.Ring = ring
	// The ring is pinned: what an earlier trace emitted and never read is still in it, and is not
	// this trace's. Nothing is armed yet, so nothing new comes in while it is dropped.
	if err := dropQueued(ring); err != nil {
		return fail(fmt.Errorf("emptying the trace ring: %w", err))
	}
	ids, err := attachedPrograms(dir)
	if err != nil {
		return fail(err)
	}
	for id, hook := range ids {
		prog := t.xdp.Seg6xXdpTrace
		if hook == "tc" {
			if t.tc == nil {
				t.tc = &Seg6xTcTraceObjects{}
				if err := loadProgram(dir, po, "traced tc", LoadSeg6xTcTrace, t.tc); err != nil {
					t.tc = nil
					return fail(err)
				}
			}
			prog = t.tc.Seg6xTcTrace
		}
		a, err := armProgram(id, prog)
		if err != nil {
			return fail(fmt.Errorf("program %d: %w", id, err))
		}
		t.armed = append(t.armed, a)
	}
	return t, nil
}

// dropQueued reads and drops every record queued in ring, without waiting for more.
func dropQueued(ring *ringbuf.Reader) error {
	ring.SetDeadline(time.Now())
	defer ring.SetDeadline(time.Time{})
	var rec ringbuf.Record
	for {
		err := ring.ReadInto(&rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Programs is how many attached programs the trace armed.
func (t *Trace) Programs() int { return len(t.armed) }

// Counts sums the traced programs' per-CPU counters.
func (t *Trace) Counts() (Seg6xTraceStats, error) {
	var all []Seg6xTraceStats
	var sum Seg6xTraceStats
	if err := t.xdp.TraceCounts.Lookup(uint32(0), &all); err != nil {
		return sum, err
	}
	for _, c := range all {
		sum.Matched += c.Matched
		sum.Emitted += c.Emitted
		sum.SampledOut += c.SampledOut
		sum.RateLimited += c.RateLimited
		sum.RingFull += c.RingFull
	}
	return sum, nil
}

// Close disarms every program (flag first, then the slot) and releases the traced builds.
func (t *Trace) Close() {
	t.once.Do(func() {
		for _, a := range t.armed {
			_ = a.flag.Put(uint32(0), uint32(0))
			_ = a.jmp.Delete(uint32(0))
			a.flag.Close()
			a.jmp.Close()
		}
		if t.Ring != nil {
			t.Ring.Close()
		}
		if t.xdp != nil {
			t.xdp.Close()
		}
		if t.tc != nil {
			t.tc.Close()
		}
	})
}

// DisarmTraces clears the trace flag and slot of every attached program of instance dir (a trace
// whose process died while it ran) and returns how many were armed.
func DisarmTraces(dir string) (int, error) {
	ids, err := attachedPrograms(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for id := range ids {
		a, err := programTraceMaps(id)
		if err != nil {
			continue // a program from a build without tracing
		}
		var on uint32
		if a.flag.Lookup(uint32(0), &on) == nil && on != 0 {
			n++
		}
		_ = a.flag.Put(uint32(0), uint32(0))
		_ = a.jmp.Delete(uint32(0))
		a.flag.Close()
		a.jmp.Close()
	}
	return n, nil
}

// attachedPrograms are the programs of the instance's pinned links, with their hook.
func attachedPrograms(dir string) (map[ebpf.ProgramID]string, error) {
	ents, err := os.ReadDir(filepath.Join(PinDir(dir), "links"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	out := map[ebpf.ProgramID]string{}
	for _, e := range ents {
		ifindex, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		l, err := link.LoadPinnedLink(linkPath(dir, ifindex), nil)
		if err != nil {
			return nil, err
		}
		info, err := l.Info()
		hook := "xdp"
		if isTCX(l) {
			hook = "tc"
		}
		l.Close()
		if err != nil {
			return nil, err
		}
		out[info.Program] = hook
	}
	return out, nil
}

// armProgram finds the flag and the slot of attached program id, puts traced in the slot and sets
// the flag.
func armProgram(id ebpf.ProgramID, traced *ebpf.Program) (armedProgram, error) {
	a, err := programTraceMaps(id)
	if err != nil {
		return a, err
	}
	if err := a.jmp.Put(uint32(0), uint32(traced.FD())); err != nil {
		a.jmp.Close()
		a.flag.Close()
		return a, fmt.Errorf("installing the traced build: %w", err)
	}
	if err := a.flag.Put(uint32(0), uint32(1)); err != nil {
		_ = a.jmp.Delete(uint32(0))
		a.jmp.Close()
		a.flag.Close()
		return a, fmt.Errorf("setting the trace flag: %w", err)
	}
	return a, nil
}

// programTraceMaps finds the trace flag (the .bss map holding trace_armed) and the trace_prog slot
// of program id.
func programTraceMaps(id ebpf.ProgramID) (armedProgram, error) {
	a := armedProgram{id: id}
	p, err := ebpf.NewProgramFromID(id)
	if err != nil {
		return a, err
	}
	defer p.Close()
	info, err := p.Info()
	if err != nil {
		return a, err
	}
	mids, _ := info.MapIDs()
	for _, mid := range mids {
		m, err := ebpf.NewMapFromID(mid)
		if err != nil {
			return a, err
		}
		mi, err := m.Info()
		switch {
		case err != nil:
			m.Close()
		case mi.Name == "trace_prog" && a.jmp == nil:
			a.jmp = m
		case mi.Type == ebpf.Array && mi.ValueSize == 4 && mi.MaxEntries == 1 && isBSS(mi.Name) && a.flag == nil:
			a.flag = m
		default:
			m.Close()
		}
	}
	if a.jmp == nil || a.flag == nil {
		if a.jmp != nil {
			a.jmp.Close()
		}
		if a.flag != nil {
			a.flag.Close()
		}
		return a, errors.New("no trace_prog map or trace flag: a program from a build without tracing (re-attach it)")
	}
	return a, nil
}

// isBSS: the kernel's name of an object's .bss map ends in ".bss" (cilium/ebpf may prefix it).
func isBSS(name string) bool {
	return len(name) >= 4 && name[len(name)-4:] == ".bss"
}

func zeroPerCPU(m *ebpf.Map) error {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	return m.Put(uint32(0), make([]Seg6xTraceStats, n))
}

// LoadTraceObjects loads the traced XDP build of instance dir on its maps (benchmarks; a trace of
// the attached programs goes through ArmTrace).
func LoadTraceObjects(dir string, po ProgramOptions) (*Seg6xTraceObjects, error) {
	o := &Seg6xTraceObjects{}
	if err := loadProgram(dir, po, "traced XDP", LoadSeg6xTrace, o); err != nil {
		return nil, err
	}
	return o, nil
}
