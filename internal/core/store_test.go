package core

// store_test.go: a store for the controller's tests.

import (
	"fmt"
	"net/netip"
	"os"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"golang.org/x/sys/unix"
)

type fakeEnv map[string]int

func (f fakeEnv) Ifindex(dev string) (int, error) {
	if i, ok := f[dev]; ok {
		return i, nil
	}
	return 0, fmt.Errorf("no such interface %q", dev)
}

func (fakeEnv) SourceFor(netip.Addr) (netip.Addr, error) {
	return netip.MustParseAddr("fc00:1::1"), nil
}

func openStore(t *testing.T) *state.Store {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (bpffs, BPF maps)")
	}
	dir := t.TempDir()
	st, err := dataplane.OpenStore(dir, fakeEnv{}, state.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		_ = unix.Unmount(dataplane.PinDir(dir), unix.MNT_DETACH)
	})
	return st
}
