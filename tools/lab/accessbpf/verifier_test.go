package accessbpf

// verifier_test.go: the access-port object through the kernel's verifier.

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestVerifierLoadsEveryObject(t *testing.T) {
	testsupport.VerifierLoads(t, map[string]func() (*ebpf.CollectionSpec, error){"access": LoadAccess})
}
