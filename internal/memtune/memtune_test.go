package memtune

// memtune_test.go: the bound's arithmetic, and that a running tuner sets it after a collection.

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestBound(t *testing.T) {
	h := Headroom{Percent: 10, Floor: 64 << 20}
	if got, want := Bound(h, 10<<20, 5<<20), uint64(10<<20+5<<20+64<<20); got != want {
		t.Errorf("small heap: %d, want %d (the floor)", got, want)
	}
	if got, want := Bound(h, 2000<<20, 30<<20), uint64(2000<<20+30<<20+200<<20); got != want {
		t.Errorf("large heap: %d, want %d (10%%)", got, want)
	}
}

func TestStartSetsLimitAfterCollection(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	keep := make([][]byte, 0, 64)
	for i := 0; i < 64; i++ {
		keep = append(keep, make([]byte, 1<<20)) // 64 MiB live, pointer-free
	}
	stop, active := Start(Headroom{Percent: 50, Floor: 1 << 20})
	if !active {
		t.Fatal("not active with GOGC and GOMEMLIMIT unset")
	}
	defer stop()
	var got int64
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs on its own goroutine
		if got = debug.SetMemoryLimit(-1); got != math.MaxInt64 {
			break
		}
	}
	runtime.KeepAlive(keep)
	// live >= 64 MiB, so the limit is at least 64 MiB * 1.5; and far below Go's default.
	if got < 96<<20 || got > 1<<40 {
		t.Fatalf("limit after a collection = %d, want between 96 MiB and 1 TiB", got)
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("after stop the limit is %d, want none", got)
	}
}

func TestEnvironmentWins(t *testing.T) {
	t.Setenv("GOGC", "50")
	if _, active := Start(Default); active {
		t.Error("active although GOGC is set")
	}
	if Overridden() != "GOGC" {
		t.Errorf("Overridden() = %q", Overridden())
	}
}
