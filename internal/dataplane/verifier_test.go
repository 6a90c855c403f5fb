package dataplane_test

// verifier_test.go: the product program through the kernel's verifier (the rig's objects are loaded
// by internal/benchrig/rigbpf's test, the lab's by internal/lab/accessbpf's).

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/testsupport"
)

// TestVerifierLoadsEveryObject loads every program of the seg6x object through the kernel's
// verifier (without pinning anything) and logs its size and the verifier's work.
func TestVerifierLoadsEveryObject(t *testing.T) {
	testsupport.VerifierLoads(t, map[string]func() (*ebpf.CollectionSpec, error){"seg6x": dataplane.LoadSeg6x, "seg6x_tc": dataplane.LoadSeg6xTc,
		"seg6x_trace": dataplane.LoadSeg6xTrace, "seg6x_tc_trace": dataplane.LoadSeg6xTcTrace})
}
