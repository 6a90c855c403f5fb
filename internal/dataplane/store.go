package dataplane

// store.go: the BPF data plane of one instance (pinned maps, XDP links), as the state store uses it
// (state.Dataplane, which is also the state.Observer of observe.go): OpenStore opens a store on it;
// MapsOf gives tools and tests its raw maps (product code reads it through state.Observer, and a
// test, cmd/seg6x TestProductReadsDataplaneThroughObserver, keeps it so).

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/seg6x/seg6x/internal/state"
)

// BPF is the data plane of instance Dir: its pinned maps and the links of its interfaces.
type BPF struct {
	Dir   string
	Maps  *Seg6xMaps
	fresh bool
	mu    sync.Mutex // Maps against Close, for what runs without the store's lock (InvalidateNextHops)
}

// OpenBPF opens (creating them if needed) the pinned maps of instance dir.
func OpenBPF(dir string) (*BPF, error) {
	_, statErr := os.Stat(filepath.Join(MapPinDir(dir), "sids"))
	m, err := OpenMaps(dir)
	if err != nil {
		return nil, err
	}
	return &BPF{Dir: dir, Maps: m, fresh: os.IsNotExist(statErr)}, nil
}

// OpenStore opens instance dir's state store on its BPF data plane.
func OpenStore(dir string, env state.Env, o state.OpenOptions) (*state.Store, error) {
	o.Dataplane = func(dir string) (state.Dataplane, error) { return OpenBPF(dir) }
	return state.OpenWith(dir, env, o)
}

// MapsOf is the maps of a store opened with OpenStore (nil for another data plane): for tools and
// tests that inspect or write raw maps on purpose. Product code reads the data plane through
// st.Observer().
func MapsOf(st *state.Store) *Seg6xMaps {
	if b, ok := st.Dataplane().(*BPF); ok {
		return b.Maps
	}
	return nil
}

// Fresh reports whether the maps were created by OpenBPF (none of this layout were pinned).
func (b *BPF) Fresh() bool { return b.fresh }

// Close releases the maps (they stay pinned).
func (b *BPF) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Maps != nil {
		b.Maps.Close()
		b.Maps = nil
	}
}

func programOptions(o state.ProgramOptions) ProgramOptions {
	return ProgramOptions{NextHopCache: msDuration(o.NextHopCacheMs)}
}
