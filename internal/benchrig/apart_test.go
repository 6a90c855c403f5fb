package benchrig

// apart_test.go: the product does not depend on the benchmark rig, its BPF objects or the test
// tooling; only `seg6x bench` (internal/cli) and the test suites reach the rig.

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/seg6x/seg6x/"

// product is the data plane and control plane: what a seg6x deployment runs.
var product = []string{"api/seg6xv1", "internal/dataplane", "internal/state", "internal/core", "internal/api",
	"internal/daemon", "internal/mirror", "internal/config", "internal/slowpath"}

// notForProduct: the rig tree and the test tooling (shared test support, packet fixtures, the output
// oracle and frame generator of the fuzz tests, the lab), and Go's testing package.
var notForProduct = []string{"internal/benchrig", "internal/testsupport", "internal/fixtures", "internal/pktcheck",
	"internal/pktfuzz", "internal/lab"}

// rigUsers may import the rig: `seg6x bench` (the CLI and the binary) and the test suites.
var rigUsers = []string{"cmd/seg6x", "internal/cli", "internal/benchrig", "test"}

// under reports whether the module's package path (without the module prefix) is dir or below it.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

func TestProductIsApartFromRig(t *testing.T) {
	// Deps is every package a package's build needs (its tests' imports are not among them).
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		deps[strings.TrimPrefix(f[0], module)] = f[1:]
	}
	for _, p := range product {
		ds, ok := deps[p]
		if !ok {
			t.Errorf("product package %s does not exist (update the list)", p)
		}
		for _, d := range ds {
			if d == "testing" || strings.HasPrefix(d, module) && under(strings.TrimPrefix(d, module), notForProduct) {
				t.Errorf("product package %s depends on %s", p, d)
			}
		}
	}
	checked := 0
	for p, ds := range deps {
		if under(p, rigUsers) {
			continue
		}
		checked++
		for _, d := range ds {
			if strings.HasPrefix(d, module+"internal/benchrig") {
				t.Errorf("%s depends on the benchmark rig (%s); only `seg6x bench` and the tests may", p, d)
			}
		}
	}
	if checked < len(product) {
		t.Fatalf("only %d packages checked: go list said %q", checked, out)
	}
}
