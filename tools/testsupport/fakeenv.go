package testsupport

// fakeenv.go: a state.Env that needs no host interfaces, for stores opened by tests.

import (
	"fmt"
	"net/netip"
)

// FakeEnv resolves interface names from the map (name -> ifindex) without touching the host's
// interfaces, and answers fc00:1::1 as the source address towards every destination.
type FakeEnv map[string]int

// Ifindex is the map's entry for dev.
func (f FakeEnv) Ifindex(dev string) (int, error) {
	if i, ok := f[dev]; ok {
		return i, nil
	}
	return 0, fmt.Errorf("no such interface %q", dev)
}

// SourceFor is always fc00:1::1.
func (FakeEnv) SourceFor(netip.Addr) (netip.Addr, error) {
	return netip.MustParseAddr("fc00:1::1"), nil
}
