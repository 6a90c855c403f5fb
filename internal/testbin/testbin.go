// Package testbin gives the integration tests under test/ the seg6x binary to run in their
// namespaces: built from this tree for the test, or the test skipped where it cannot run.
package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Seg6x skips t unless it runs as root (namespaces, XDP), then builds cmd/seg6x into t's temporary
// directory and returns the binary's path. Call it from a package directly under test/.
func Seg6x(t testing.TB) string {
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
