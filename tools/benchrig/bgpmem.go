package benchrig

// bgpmem.go: the node's memory as `seg6x-bench bgp` reports it: its resident set (what the kernel
// counts for the process: the Go heap including what the runtime has freed but not yet returned, the
// goroutine stacks, the binary's pages touched; not the BPF maps, which are kernel memory) and its Go
// heap after a collection, before the routes and after; a heap profile to say where the heap goes;
// its CPU time (control.go's cpuSeconds: what a lower GOGC costs).

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
)

// memSample is the node's memory at one moment.
type memSample struct {
	rssMB, heapMB float64 // resident set; Go heap in use (HeapInuse) after a collection
}

func sampleMemory() memSample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSample{rssMB: rssMB(), heapMB: float64(ms.HeapInuse) / (1 << 20)}
}

// releasedRSSMB is the resident set once the runtime has returned every free page to the kernel
// (debug.FreeOSMemory): what the process holds for its live data; the difference to the RSS before
// it is heap the collector had freed and the runtime kept.
func releasedRSSMB() float64 {
	debug.FreeOSMemory()
	return rssMB()
}

// writeHeapProfile writes the heap profile (read it with
// `go tool pprof -top -sample_index=inuse_space FILE`).
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// perRoute is the growth from a to b in bytes per route.
func perRoute(a, b float64, routes int) float64 {
	return (b - a) * (1 << 20) / float64(routes)
}

func rssMB() float64     { return procStatusMB("VmRSS:") }
func peakRSSMB() float64 { return procStatusMB("VmHWM:") }

// procStatusMB is a field of /proc/self/status (in kB there) in MB.
func procStatusMB(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
