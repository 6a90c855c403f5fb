// Package memtune bounds the garbage collector's headroom in a daemon whose heap can grow large
// (a BGP table of a million routes). Go's default (GOGC=100) lets the heap grow to twice what was
// live at the last collection before collecting again, and keeps the pages: a daemon with 1.8 GB
// of live routes sits at 3.6 GB. Headroom sets, after every collection, a soft memory limit
// (debug.SetMemoryLimit) of what is live plus max(Floor, Percent of it): small heaps keep Go's
// default (the floor is more than GOGC's headroom), large ones grow by Percent before the next
// collection, at the cost of more frequent collections while the heap grows.
//
// An operator's GOGC or GOMEMLIMIT in the environment wins: Start then changes nothing.
package memtune

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Headroom is the policy: the limit after a collection is live + max(Floor, live*Percent/100)
// plus the runtime's memory that is not heap (stacks, its own metadata). Percent 0 is off.
type Headroom struct {
	Percent int
	Floor   uint64 // bytes
}

// Default is the daemon's policy: 10% over what is live, at least 64 MiB.
var Default = Headroom{Percent: 10, Floor: 64 << 20}

// Overridden names the environment variable that turns the tuning off ("" when none does).
func Overridden() string {
	for _, v := range []string{"GOMEMLIMIT", "GOGC"} {
		if os.Getenv(v) != "" {
			return v
		}
	}
	return ""
}

// running is set while a tuner runs: the limit is the process's, so one at a time.
var running atomic.Bool

// Start applies h after every collection until the returned stop is called (stop restores Go's
// default: no limit). It does nothing when h.Percent is 0, the environment sets GOGC or
// GOMEMLIMIT, or another tuner runs in the process; active reports whether it runs.
func Start(h Headroom) (stop func(), active bool) {
	if h.Percent <= 0 || Overridden() != "" || !running.CompareAndSwap(false, true) {
		return func() {}, false
	}
	var stopped atomic.Bool
	samples := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	var arm func()
	// A finalizer on an unreachable object runs after the collection that found it: one per cycle.
	arm = func() {
		s := new([16]byte)
		runtime.SetFinalizer(s, func(*[16]byte) {
			if stopped.Load() {
				return
			}
			debug.SetMemoryLimit(int64(limit(h, samples)))
			arm()
		})
	}
	arm()
	return func() {
		if stopped.CompareAndSwap(false, true) {
			debug.SetMemoryLimit(math.MaxInt64) // Go's default: no limit
			running.Store(false)
		}
	}, true
}

// limit reads the runtime's metrics and applies h to them.
func limit(h Headroom, s []metrics.Sample) uint64 {
	metrics.Read(s)
	v := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	live, total, objects, free, released := v(0), v(1), v(2), v(3), v(4)
	// Everything the runtime holds but the heap's objects and its free pages: span slack, stacks,
	// the collector's and the scheduler's metadata. It is counted against the limit too.
	var other uint64
	if total > objects+free+released {
		other = total - objects - free - released
	}
	return Bound(h, live, other)
}

// Bound is the limit h sets for live heap bytes and other runtime bytes.
func Bound(h Headroom, live, other uint64) uint64 {
	room := live * uint64(h.Percent) / 100
	if room < h.Floor {
		room = h.Floor
	}
	return live + other + room
}
