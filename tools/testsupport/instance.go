package testsupport

// instance.go: scratch seg6x instance directories: their bpffs mounted from this mount namespace (one
// mounted by seg6x inside `ip netns exec` would vanish with that command's), and removed again; a
// store opened on one for a test.

import (
	"os"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
)

// MountInstance mounts the bpffs of the instance directory dir (creating dir).
func MountInstance(dir string) error { return dataplane.EnsureBPFFS(dataplane.PinDir(dir)) }

// UnmountInstance lets go of the pins of the instance directory dir: the bpffs mounted for it, or
// its directory in the host's bpffs (dataplane.DropPins).
func UnmountInstance(dir string) { dataplane.DropPins(dir) }

// RemoveInstance unmounts the bpffs of the instance directory dir and removes dir.
func RemoveInstance(dir string) {
	UnmountInstance(dir)
	_ = os.RemoveAll(dir)
}

// ScratchInstance mounts the bpffs of instance directory dir for t and unmounts it when t ends.
func ScratchInstance(t testing.TB, dir string) {
	t.Helper()
	if err := MountInstance(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { UnmountInstance(dir) })
}

// OpenStore opens a store on the BPF data plane in instance dir for a test (skipped without root),
// closed and unmounted when the test ends.
func OpenStore(t testing.TB, dir string, env state.Env) *state.Store {
	t.Helper()
	NeedRoot(t, "bpffs, BPF maps")
	st, err := dataplane.OpenStore(dir, env, state.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		UnmountInstance(dir)
	})
	return st
}
