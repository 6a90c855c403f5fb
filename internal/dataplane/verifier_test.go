package dataplane_test

// verifier_test.go: the product program through the kernel's verifier (the rig's objects are loaded
// by tools/benchrig/rigbpf's test, the lab's by tools/lab/accessbpf's).

import (
	"maps"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// TestVerifierLoadsEveryObject loads every program of the seg6x object through the kernel's
// verifier (without pinning anything) and logs its size and the verifier's work.
func TestVerifierLoadsEveryObject(t *testing.T) {
	objects := map[string]func() (*ebpf.CollectionSpec, error){"seg6x": dataplane.LoadSeg6x, "seg6x_tc": dataplane.LoadSeg6xTc,
		"seg6x_trace": dataplane.LoadSeg6xTrace, "seg6x_tc_trace": dataplane.LoadSeg6xTcTrace}
	// Each also as the daemon loads it, with the next-hop cache on: its code is dead (and not
	// verified) with the cache off, and it takes stack of its own.
	for name, load := range maps.Clone(objects) {
		objects[name+"_nhcache"] = func() (*ebpf.CollectionSpec, error) {
			spec, err := load()
			if err != nil {
				return nil, err
			}
			return spec, spec.Variables["nh_cache_ns"].Set(uint64(time.Second))
		}
	}
	testsupport.VerifierLoads(t, objects)
}
