package benchrig

// slowpath.go: `seg6x-bench slowpath`: how many packets per second the daemon's slow path fragments
// and runs back in (IPv4 without DF too big for its tunnel), next to the fast path's cost for one of
// the fragments, on the packet fixtures' rig.

import (
	"context"
	"encoding/binary"
	"fmt"
	"os/exec"
	"time"

	"github.com/seg6x/seg6x/internal/slowpath"
	"github.com/seg6x/seg6x/tools/fixtures"
)

// SlowPathResult is `seg6x-bench slowpath --json`.
type SlowPathResult struct {
	Offered         int     `json:"offered"`           // packets the program queued or refused
	Fragmented      uint64  `json:"fragmented"`        // packets the relay fragmented and ran back in
	Fragments       uint64  `json:"fragments"`         // fragments run in (each encapsulated and redirected)
	Busy            uint64  `json:"busy"`              // DROP_SLOW_BUSY: the ring was full
	Failed          uint64  `json:"failed"`            // records the relay could not handle
	Seconds         float64 `json:"seconds"`           // first packet offered to last record handled
	PacketsPerSec   float64 `json:"packets_per_sec"`   // fragmented / seconds
	UsPerPacket     float64 `json:"us_per_packet"`     // 1e6 / packets_per_sec
	FastNsFragment  float64 `json:"fast_ns_fragment"`  // the fast path's program time for one fragment
	OfferedPerSec   float64 `json:"offered_per_sec"`   // rate at which the program saw the packets
	ProgramNsPacket float64 `json:"program_ns_packet"` // the program's own time to queue one packet
	HandleUsPacket  float64 `json:"handle_us_packet"`  // the relay's work for one record, without the ring
}

// RunSlowPath measures the slow path's rate; it must run inside a network namespace made for it.
func RunSlowPath(n int) (*SlowPathResult, error) {
	if n <= 0 || n > 10_000_000 {
		return nil, fmt.Errorf("--packets %d: want 1..10000000", n)
	}
	rig, err := fixtures.NewRig()
	if err != nil {
		return nil, err
	}
	defer rig.Close()
	fs, err := fixtures.Load()
	if err != nil {
		return nil, err
	}
	in, frag := fixtures.Find(fs, "slow_fragment_tf"), fixtures.Find(fs, "slow_fragment_tf_1")
	if in == nil || frag == nil {
		return nil, fmt.Errorf("fixtures slow_fragment_tf(_1) missing")
	}
	// tf0's peer needs a NAPI (GRO) to take redirected frames, as the lab's hosts do.
	_ = exec.Command("ethtool", "-K", "tf1", "gro", "on").Run()
	fast, err := rig.Run(nil, frag, 2000)
	if err != nil {
		return nil, err
	}

	relay := slowpath.New(rig.Dir, rig.Objs.SlowPath, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for i := 0; !relay.Stats().Running; i++ {
		if i > 200 {
			return nil, fmt.Errorf("the slow path relay did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The relay's own work per record (fragmenting, two live runs), without the ring: the same record
	// handed to it directly.
	ta0, err := rig.Ifindex(in.Dev)
	if err != nil {
		return nil, err
	}
	sample := binary.LittleEndian.AppendUint32(nil, slowpath.KindFragment)
	for _, v := range []uint32{ta0, 1436, 18, uint32(len(in.Input))} {
		sample = binary.LittleEndian.AppendUint32(sample, v)
	}
	sample = append(sample, in.Input...)
	const handles = 2000
	t0 := time.Now()
	for i := 0; i < handles; i++ {
		if err := relay.Handle(sample); err != nil {
			return nil, err
		}
	}
	handleUs := float64(time.Since(t0).Microseconds()) / handles
	base := relay.Stats()

	busy0, err := rig.ReasonCount("DROP_SLOW_BUSY")
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var progTime time.Duration
	for i := 0; i < n; i++ {
		res, err := rig.Run(nil, in, 1)
		if err != nil {
			return nil, err
		}
		progTime += res.PerRun
	}
	offered := time.Since(start)
	// Drained: every queued record handled (or 2 s without progress).
	busy1, err := rig.ReasonCount("DROP_SLOW_BUSY")
	if err != nil {
		return nil, err
	}
	queued := uint64(n) - (busy1 - busy0)
	queued += base.Records
	last, lastAt := relay.Stats().Records, time.Now()
	for relay.Stats().Records < queued && time.Since(lastAt) < 2*time.Second {
		time.Sleep(time.Millisecond)
		if r := relay.Stats().Records; r != last {
			last, lastAt = r, time.Now()
		}
	}
	st := relay.Stats()
	st.Fragmented -= base.Fragmented
	st.Fragments -= base.Fragments
	secs := lastAt.Sub(start).Seconds()
	r := &SlowPathResult{Offered: n, Fragmented: st.Fragmented, Fragments: st.Fragments, Busy: busy1 - busy0,
		Failed: st.Failed, Seconds: secs, FastNsFragment: float64(fast.PerRun.Nanoseconds()),
		OfferedPerSec: float64(n) / offered.Seconds(), ProgramNsPacket: float64(progTime.Nanoseconds()) / float64(n),
		HandleUsPacket: handleUs}
	if secs > 0 && st.Fragmented > 0 {
		r.PacketsPerSec = float64(st.Fragmented) / secs
		r.UsPerPacket = 1e6 / r.PacketsPerSec
	}
	if st.Failed > 0 {
		return r, fmt.Errorf("the relay failed %d records: %s", st.Failed, st.LastError)
	}
	return r, nil
}
