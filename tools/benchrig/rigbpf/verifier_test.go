package rigbpf

// verifier_test.go: the rig's objects through the kernel's verifier.

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestVerifierLoadsEveryObject(t *testing.T) {
	testsupport.VerifierLoads(t, map[string]func() (*ebpf.CollectionSpec, error){
		"baseline":         LoadBaseline,
		"bench":            LoadBench,
		"seg6x_fib_direct": LoadSeg6xFibDirect,
	})
}
