package testsupport

// root.go: whether a test may do what needs root (network namespaces, BPF programs and maps, bpffs,
// XDP): package testroot, which the in-package tests of internal/api and internal/dataplane use
// directly (this package imports theirs).

import (
	"testing"

	"github.com/seg6x/seg6x/tools/testsupport/testroot"
)

// UnitEnv is set (to 1) by `make test-unit`: only the tests that need no root run, as root too.
const UnitEnv = testroot.UnitEnv

// RootTests says whether the tests that need root run here, and if not, why not (for a TestMain).
func RootTests() (bool, string) { return testroot.Allowed() }

// NeedRoot skips t, saying why, unless the tests that need root run here (RootTests); what names
// what the test needs root for (e.g. "network namespaces, XDP").
func NeedRoot(t testing.TB, what string) {
	t.Helper()
	testroot.Need(t, what)
}
