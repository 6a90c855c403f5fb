package fabrictest

// main_test.go: what the package's tests share: one seg6x binary, and the shared topologies (topo.go),
// torn down after the last test.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/seg6x/seg6x/tools/testsupport"
)

// TestMain runs the tests with one seg6x binary for all of them (a shared topology's daemon outlives
// the test that started it), then tears down the shared topologies.
func TestMain(m *testing.M) {
	os.Exit(func() int {
		if ok, _ := testsupport.RootTests(); ok && os.Getenv(testsupport.BinDirEnv) == "" {
			dir, err := os.MkdirTemp("", "seg6x-fabric-bin-")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer os.RemoveAll(dir)
			if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "seg6x"), "../../cmd/seg6x").CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "build seg6x: %v\n%s", err, out)
				return 1
			}
			os.Setenv(testsupport.BinDirEnv, dir)
		}
		defer func() {
			for _, f := range sharedFabrics {
				f.down()
			}
		}()
		return m.Run()
	}())
}
