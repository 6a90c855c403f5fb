// Package testroot is the one test of whether a test may do what needs root (network namespaces,
// BPF programs and maps, bpffs, XDP). testsupport.NeedRoot and testsupport.RootTests are the same
// functions; this package imports nothing of seg6x, so that the in-package tests of the packages
// testsupport imports (internal/api, internal/dataplane) can use it too.
package testroot

import (
	"fmt"
	"os"
	"testing"
)

// UnitEnv is the environment variable `make test-unit` sets (to 1): only the tests that need no
// root run, as root too, so that the unit run is the same for root and for any other user.
const UnitEnv = "SEG6X_TEST_UNIT"

// Allowed says whether the tests that need root run here, and if not, why not: the process is not
// root, or UnitEnv is set.
func Allowed() (bool, string) {
	if os.Getenv(UnitEnv) != "" {
		return false, fmt.Sprintf("unit run (%s set): root tests are skipped", UnitEnv)
	}
	if os.Geteuid() != 0 {
		return false, "not root"
	}
	return true, ""
}

// Need skips t, saying why, unless Allowed; what names what the test needs root for (e.g.
// "network namespaces, XDP").
func Need(t testing.TB, what string) {
	t.Helper()
	if ok, why := Allowed(); !ok {
		t.Skipf("needs root (%s): %s", what, why)
	}
}
