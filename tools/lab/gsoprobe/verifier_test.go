package gsoprobe

// verifier_test.go: the observer object through the kernel's verifier.

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestVerifierLoadsEveryObject(t *testing.T) {
	testsupport.VerifierLoads(t, map[string]func() (*ebpf.CollectionSpec, error){"gsoprobe": LoadGsoprobe})
}
