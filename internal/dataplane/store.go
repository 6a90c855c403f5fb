package dataplane

// store.go: the BPF data plane of one instance (pinned maps, XDP links), as the state store uses it
// (state.Dataplane): OpenStore opens a store on it, MapsOf gives tests and the daemon its maps.

import (
	"os"
	"path/filepath"

	"github.com/seg6x/seg6x/internal/state"
)

// BPF is the data plane of instance Dir: its pinned maps and the links of its interfaces.
type BPF struct {
	Dir   string
	Maps  *Seg6xMaps
	fresh bool
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

// MapsOf is the maps of a store opened with OpenStore (nil for another data plane).
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
	if b.Maps != nil {
		b.Maps.Close()
		b.Maps = nil
	}
}

func programOptions(o state.ProgramOptions) ProgramOptions {
	return ProgramOptions{NextHopCache: msDuration(o.NextHopCacheMs)}
}
