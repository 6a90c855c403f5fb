package testsupport

// cpu.go: keeping a test on one CPU (per-CPU state in the data plane: the next-hop cache, the ICMP
// rate limit's bucket, the slow path's ring).

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// OnOneCPU pins the calling goroutine's thread to CPU 0; the returned function undoes it. A subtest
// (t.Run) is a goroutine of its own, not pinned by its parent's call: it calls OnOneCPU itself.
func OnOneCPU(t testing.TB) (restore func()) {
	t.Helper()
	runtime.LockOSThread()
	var one, all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	one.Set(0)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	return func() {
		_ = unix.SchedSetaffinity(0, &all)
		runtime.UnlockOSThread()
	}
}
