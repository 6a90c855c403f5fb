// Package testsupport is what the test suites (test/...), the packet fixtures, the lab and the
// benchmark rig share instead of keeping copies: the seg6x binary built for a test, commands run
// with their output in the error, network namespaces, scratch seg6x instances, a seg6x daemon started
// in a namespace, packet builders, a fake state.Env and the verifier check of BPF objects.
// Product packages never import it (internal/benchrig's TestProductIsApartFromRig checks).
package testsupport

// testsupport.go: the package comment and the seg6x binary a test runs.

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildSeg6x skips t unless it runs as root (namespaces, XDP), then builds cmd/seg6x into t's
// temporary directory and returns the binary's path. Call it from a package directly under test/.
func BuildSeg6x(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (namespaces, XDP)")
	}
	bin := filepath.Join(t.TempDir(), "seg6x")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/seg6x").CombinedOutput(); err != nil {
		t.Fatalf("build seg6x: %v\n%s", err, out)
	}
	return bin
}
