// Package testsupport is what the test suites (test/...), the packet fixtures, the lab and the
// benchmark rig share instead of keeping copies: the seg6x binaries built for a test, commands run
// with their output in the error, network namespaces, scratch seg6x instances, a seg6x daemon started
// in a namespace, packet builders, a fake state.Env and the verifier check of BPF objects.
// Product packages never import it (cmd/seg6x's TestProductIsApartFromTools checks).
package testsupport

// testsupport.go: the package comment and the binaries a test runs.

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BinDirEnv names a directory holding seg6x, seg6x-lab and seg6x-bench built from this tree:
// BuildCmd returns the binary there instead of building one per test. `make test` sets it to bin/,
// which it has just built (a link of each binary per test was a good part of the suites' time).
const BinDirEnv = "SEG6X_TEST_BINDIR"

// BuildSeg6x skips t unless it runs as root (namespaces, XDP; NeedRoot), then builds cmd/seg6x into
// t's temporary directory and returns the binary's path (or the one in $SEG6X_TEST_BINDIR). Call it
// from a package directly under test/.
func BuildSeg6x(t testing.TB) string { return BuildCmd(t, "seg6x") }

// BuildCmd is BuildSeg6x for any command of cmd/: seg6x, seg6x-lab or seg6x-bench.
func BuildCmd(t testing.TB, name string) string {
	t.Helper()
	NeedRoot(t, "namespaces, XDP")
	if dir := os.Getenv(BinDirEnv); dir != "" {
		bin, err := filepath.Abs(filepath.Join(dir, name))
		if err == nil {
			_, err = os.Stat(bin)
		}
		if err != nil {
			t.Fatalf("%s=%s: %v (make build puts the binaries there)", BinDirEnv, dir, err)
		}
		return bin
	}
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/"+name).CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out)
	}
	return bin
}
