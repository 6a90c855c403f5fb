package slowpath

// relay.go: reading the slow path's perf ring and running its frames back through the XDP program of
// the port each record names (BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES: the program's
// redirects really leave, as for a frame received on that port).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/perf"
	"github.com/seg6x/seg6x/internal/dataplane"
)

// Record kinds (enum slow_kind in bpf/structs.h, as bpf2go generated it).
const (
	KindFragment = uint32(dataplane.Seg6xSlowKindSLOW_KIND_FRAGMENT) // fragment the IPv4 packet to the record's MTU, run each fragment in
	KindInject   = uint32(dataplane.Seg6xSlowKindSLOW_KIND_INJECT)   // run the frame in as it is
	// KindFragment6: fragment the outer IPv6 packet to the record's MTU, send each fragment out of the
	// record's interface (a VXLAN encapsulation larger than the underlay).
	KindFragment6 = uint32(dataplane.Seg6xSlowKindSLOW_KIND_FRAGMENT6)
	// KindSend: send the frame out of the record's interface as it is (a multi-buffer frame its driver
	// cannot send redirected).
	KindSend = uint32(dataplane.Seg6xSlowKindSLOW_KIND_SEND)
)

const (
	metaLen = int(unsafe.Sizeof(dataplane.Seg6xSlowMeta{})) // struct slow_meta
	// RingBytes is the size of each CPU's perf ring: about 320 full-size frames of backlog per CPU (a
	// TCP window of VXLAN frames to fragment);
	// beyond that the program counts DROP_SLOW_BUSY.
	RingBytes = 512 << 10
	// MaxInjectFrame is the largest frame a live-frames test run takes (a page less the kernel's
	// head- and tailroom): fragments are cut to fit it even where the tunnel takes more.
	MaxInjectFrame = 3072
	// liveFrames is BPF_F_TEST_XDP_LIVE_FRAMES.
	liveFrames = 1 << 1
	// progCheck is how often the program of a port is looked up again (it changes on upgrades).
	progCheck = time.Second
)

// Stats counts what the relay did.
type Stats struct {
	Running     bool   // a relay reads the ring
	Records     uint64 // records read
	Fragmented  uint64 // packets fragmented
	Fragments   uint64 // fragments run in
	Injected    uint64 // frames run in as they are (answers)
	Fragmented6 uint64 // IPv6 packets (VXLAN encapsulations) fragmented
	Fragments6  uint64 // their fragments sent
	Sent        uint64 // multi-buffer frames sent out of an egress whose driver cannot send them redirected
	Failed      uint64 // records that could not be handled (see LastError)
	Lost        uint64 // records the kernel dropped because the ring was full
	LastError   string
}

// Relay reads one instance's slow path ring.
type Relay struct {
	dir  string
	ring *ebpf.Map
	logf func(string, ...any)

	mu    sync.Mutex
	stats Stats
	progs map[uint32]*portProg
	tx    transmitter
}

type portProg struct {
	id      uint32
	prog    *ebpf.Program
	checked time.Time
}

// New makes the relay of instance dir, reading ring (its slow_path map).
func New(dir string, ring *ebpf.Map, logf func(string, ...any)) *Relay {
	return &Relay{dir: dir, ring: ring, logf: logf, progs: map[uint32]*portProg{}}
}

// Stats returns a copy of the counters.
func (r *Relay) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Run reads the ring until ctx ends. While it runs, the program hands it what it cannot finish;
// before and after, the program falls back (the kernel, or a counted drop).
func (r *Relay) Run(ctx context.Context) error {
	rd, err := OpenRing(r.ring, RingBytes)
	if err != nil {
		return err
	}
	r.setRunning(true)
	defer r.setRunning(false)
	stop := context.AfterFunc(ctx, func() { rd.Close() })
	defer stop()
	defer rd.Close()
	defer r.closeProgs()
	for {
		rec, err := rd.Read()
		if errors.Is(err, perf.ErrClosed) || errors.Is(err, os.ErrClosed) {
			return nil
		}
		if err != nil {
			r.fail(fmt.Errorf("reading the ring: %w", err))
			time.Sleep(10 * time.Millisecond) // not a busy loop on an error that persists
			continue
		}
		r.mu.Lock()
		r.stats.Lost += rec.LostSamples
		r.mu.Unlock()
		if len(rec.RawSample) == 0 {
			continue
		}
		if err := r.Handle(rec.RawSample); err != nil {
			r.fail(err)
		}
	}
}

// Handle does what one record (slow_meta + frame) asks.
func (r *Relay) Handle(sample []byte) error {
	r.mu.Lock()
	r.stats.Records++
	r.mu.Unlock()
	m, frame, err := Decode(sample)
	if err != nil {
		return err
	}
	switch m.Kind {
	case KindFragment6:
		return r.fragment6(m, frame)
	case KindSend:
		if err := r.tx.send(m.Ifindex, frame); err != nil {
			return err
		}
		r.mu.Lock()
		r.stats.Sent++
		r.mu.Unlock()
		return nil
	}
	frames, err := Expand(m, frame)
	if err != nil {
		return err
	}
	for _, f := range frames {
		if err := r.inject(m.Ifindex, f); err != nil {
			return err
		}
	}
	r.mu.Lock()
	if m.Kind == KindFragment {
		r.stats.Fragmented++
		r.stats.Fragments += uint64(len(frames))
	} else {
		r.stats.Injected++
	}
	r.mu.Unlock()
	return nil
}

// fragment6 sends the fragments of the record's outer IPv6 packet out of its interface.
func (r *Relay) fragment6(m dataplane.Seg6xSlowMeta, frame []byte) error {
	frags, err := Expand(m, frame)
	if err != nil {
		return err
	}
	for _, f := range frags {
		if err := r.tx.send(m.Ifindex, f); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.stats.Fragmented6++
	r.stats.Fragments6 += uint64(len(frags))
	r.mu.Unlock()
	return nil
}

// Expand is what a record asks to run in at m.Ifindex (the fragments of its IPv4 packet, or its
// frame) or to send out of it (KindFragment6: the fragments of its outer IPv6 packet; KindSend: its
// frame).
func Expand(m dataplane.Seg6xSlowMeta, frame []byte) ([][]byte, error) {
	switch m.Kind {
	case KindFragment6:
		frags, err := FragmentIPv6(frame, int(m.L3off), int(m.Mtu), fragmentID())
		if err != nil {
			return nil, fmt.Errorf("fragmenting a VXLAN packet for ifindex %d: %w", m.Ifindex, err)
		}
		return frags, nil
	case KindFragment:
		frags, err := FragmentIPv4(frame, int(m.L3off), min(int(m.Mtu), MaxInjectFrame-int(m.L3off)))
		if err != nil {
			return nil, fmt.Errorf("fragmenting a packet from ifindex %d: %w", m.Ifindex, err)
		}
		return frags, nil
	case KindInject, KindSend:
		return [][]byte{frame}, nil
	}
	return nil, fmt.Errorf("record of unknown kind %d", m.Kind)
}

// Ring reads the slow path ring through a map file of its own: the kernel removes the ring's entries
// when that file goes (Close, or the process dies), and the program falls back at once instead of
// filling rings nobody reads.
type Ring struct {
	*perf.Reader
	m *ebpf.Map
}

// OpenRing starts reading the slow path ring (the slow_path map m), perCPU bytes per CPU.
func OpenRing(m *ebpf.Map, perCPU int) (*Ring, error) {
	info, err := m.Info()
	if err != nil {
		return nil, fmt.Errorf("slow path ring: %w", err)
	}
	id, ok := info.ID()
	if !ok {
		return nil, errors.New("slow path ring: the kernel gives no map id")
	}
	own, err := ebpf.NewMapFromID(id)
	if err != nil {
		return nil, fmt.Errorf("slow path ring: %w", err)
	}
	rd, err := perf.NewReader(own, perCPU)
	if err != nil {
		own.Close()
		return nil, fmt.Errorf("slow path ring: %w", err)
	}
	return &Ring{rd, own}, nil
}

// Close stops reading; the program sees no reader from then on.
func (r *Ring) Close() error {
	err := r.Reader.Close()
	r.m.Close()
	return err
}

// Decode splits a record into its slow_meta and its frame.
func Decode(sample []byte) (dataplane.Seg6xSlowMeta, []byte, error) {
	var m dataplane.Seg6xSlowMeta
	if len(sample) < metaLen {
		return m, nil, fmt.Errorf("record of %d bytes", len(sample))
	}
	if _, err := binary.Decode(sample[:metaLen], binary.LittleEndian, &m); err != nil {
		return m, nil, err
	}
	frame := sample[metaLen:]
	if int(m.Len) > len(frame) || int(m.L3off) > int(m.Len) {
		return m, nil, fmt.Errorf("record says %d bytes of frame (IP at %d), has %d", m.Len, m.L3off, len(frame))
	}
	return m, frame[:m.Len], nil
}

// xdpMd is the test run's context (struct xdp_md): the frame arrives on IngressIfindex.
type xdpMd struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// inject runs frame through the program attached to ifindex as if received there.
func (r *Relay) inject(ifindex uint32, frame []byte) error {
	if len(frame) > MaxInjectFrame {
		return fmt.Errorf("frame of %d bytes for ifindex %d: more than %d", len(frame), ifindex, MaxInjectFrame)
	}
	prog, err := r.program(ifindex)
	if err != nil {
		return err
	}
	_, err = prog.Run(&ebpf.RunOptions{Data: frame, Repeat: 1, Flags: liveFrames, BatchSize: 1,
		Context: xdpMd{DataEnd: uint32(len(frame)), IngressIfindex: ifindex}})
	if err != nil {
		return fmt.Errorf("running a frame in at ifindex %d: %w", ifindex, err)
	}
	return nil
}

// program is the XDP program attached to ifindex through the instance's pinned link.
func (r *Relay) program(ifindex uint32) (*ebpf.Program, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.progs[ifindex]
	if p != nil && time.Since(p.checked) < progCheck {
		return p.prog, nil
	}
	id, err := dataplane.ProgramID(r.dir, int(ifindex))
	if err != nil {
		return nil, err
	}
	if id == 0 {
		return nil, fmt.Errorf("ifindex %d has no seg6x program", ifindex)
	}
	if p != nil && p.id == id {
		p.checked = time.Now()
		return p.prog, nil
	}
	prog, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
	if err != nil {
		return nil, fmt.Errorf("program %d of ifindex %d: %w", id, ifindex, err)
	}
	if p != nil {
		p.prog.Close()
	}
	r.progs[ifindex] = &portProg{id: id, prog: prog, checked: time.Now()}
	return prog, nil
}

func (r *Relay) closeProgs() {
	r.tx.close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, p := range r.progs {
		p.prog.Close()
		delete(r.progs, k)
	}
}

func (r *Relay) setRunning(v bool) {
	r.mu.Lock()
	r.stats.Running = v
	r.mu.Unlock()
}

// fail counts a record that could not be handled; the first of each burst is logged.
func (r *Relay) fail(err error) {
	r.mu.Lock()
	r.stats.Failed++
	first := r.stats.LastError != err.Error()
	r.stats.LastError = err.Error()
	r.mu.Unlock()
	if first && r.logf != nil {
		r.logf("slow path: %v", err)
	}
}
