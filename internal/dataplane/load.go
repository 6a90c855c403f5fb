package dataplane

// load.go: loading the seg6x objects with their maps pinned under a bpffs directory, so every
// invocation of seg6x (and later the daemon) works on the same data plane state.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// PinDir is where the instance whose state directory is dir pins: links in PinDir/links, maps in
// PinDir/<MapLayout>. It is a link into the host's bpffs, or a bpffs of its own (pins.go).
func PinDir(dir string) string { return filepath.Join(dir, "bpf") }

// MapLayout names the layout of the maps (their types, keys and values). A version that changes
// the layout changes this name: it then creates fresh maps beside the old ones, fills them from the
// saved state, and switches every link to its program in one atomic update per interface (see
// state.Reconcile), so even such an upgrade does not stop forwarding.
const MapLayout = "maps-v4" // v4: vx_gen became cache_gen

// MapPinDir is where the maps of the current layout are pinned.
func MapPinDir(dir string) string { return filepath.Join(PinDir(dir), MapLayout) }

// EnsureBPFFS makes path a bpffs mount (creating the directory and mounting one if needed).
func EnsureBPFFS(path string) error {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", path, err)
	}
	if st.Type == unix.BPF_FS_MAGIC {
		return nil
	}
	if err := unix.Mount("bpf", path, "bpf", 0, "mode=0700"); err != nil {
		return fmt.Errorf("mount bpffs on %s: %w", path, err)
	}
	return nil
}

func collectionOptions(dir string) *ebpf.CollectionOptions {
	return &ebpf.CollectionOptions{Maps: ebpf.MapOptions{PinPath: MapPinDir(dir)}}
}

// OpenMaps opens (creating and pinning on first use) the data plane maps of instance dir.
func OpenMaps(dir string) (*Seg6xMaps, error) {
	if err := EnsurePins(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(MapPinDir(dir), 0o700); err != nil {
		return nil, err
	}
	spec, err := LoadSeg6x()
	if err != nil {
		return nil, err
	}
	var m Seg6xMaps
	if err := spec.LoadAndAssign(&m, collectionOptions(dir)); err != nil {
		if errors.Is(err, ebpf.ErrMapIncompatible) {
			return nil, fmt.Errorf("pinned maps in %s were made by a seg6x with another map layout under the same name "+
				"(%s): detach and remove them (seg6x detach --all --purge) before using this version: %w", MapPinDir(dir), MapLayout, err)
		}
		return nil, fmt.Errorf("loading maps: %w", err)
	}
	return &m, nil
}

// SlowPathRing opens the slow path ring of instance dir (its pinned slow_path map, made when the
// data plane was opened), which the daemon's relay (internal/slowpath) reads; the caller closes it.
func SlowPathRing(dir string) (*ebpf.Map, error) {
	m, err := ebpf.LoadPinnedMap(filepath.Join(MapPinDir(dir), Seg6xMapSlowPath), nil)
	if err != nil {
		return nil, fmt.Errorf("opening the slow path ring: %w", err)
	}
	return m, nil
}

// ProgramOptions are the load-time settings of the XDP program (constants the verifier sees).
type ProgramOptions struct {
	NextHopCache time.Duration // how long the headend may reuse a FIB result (0: never)
}

// LoadObjects loads the XDP program of instance dir, bound to its pinned maps.
func LoadObjects(dir string, po ProgramOptions) (*Seg6xObjects, error) {
	var o Seg6xObjects
	if err := loadProgram(dir, po, "XDP", LoadSeg6x, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// LoadProgramFile loads the XDP program of another build of bpf/seg6x.bpf.c read from file (e.g.
// `git show REV:internal/dataplane/seg6x_bpfel.o`), for `bench micro --baseline`. The maps it uses
// are this build's pinned maps, shared by name: it must declare those alike (maps this build added
// need not be in it).
func LoadProgramFile(dir string, po ProgramOptions, file string) (*ebpf.Program, error) {
	var o struct {
		Prog *ebpf.Program `ebpf:"seg6x_xdp"`
	}
	load := func() (*ebpf.CollectionSpec, error) { return ebpf.LoadCollectionSpec(file) }
	if err := loadProgram(dir, po, "XDP", load, &o); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return o.Prog, nil
}

// LoadTCObjects loads the tc program of instance dir, bound to the same pinned maps as the XDP one
// (both objects declare them alike, pinned by name).
func LoadTCObjects(dir string, po ProgramOptions) (*Seg6xTcObjects, error) {
	var o Seg6xTcObjects
	if err := loadProgram(dir, po, "tc", LoadSeg6xTc, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

func loadProgram(dir string, po ProgramOptions, hook string, load func() (*ebpf.CollectionSpec, error), to any) error {
	return loadProgramWith(dir, po, hook, load, to, nil)
}

// loadProgramWith is loadProgram with more of the object's read-only variables set (name -> value).
func loadProgramWith(dir string, po ProgramOptions, hook string, load func() (*ebpf.CollectionSpec, error), to any, vars map[string]any) error {
	if err := EnsurePins(dir); err != nil {
		return err
	}
	spec, err := programSpec(load, po, vars)
	if err != nil {
		return err
	}
	if err := spec.LoadAndAssign(to, collectionOptions(dir)); err != nil {
		return loadError(hook, err)
	}
	return nil
}

// programSpec is an object's spec with its read-only variables set: the load-time options and vars
// (name -> value).
func programSpec(load func() (*ebpf.CollectionSpec, error), po ProgramOptions, vars map[string]any) (*ebpf.CollectionSpec, error) {
	spec, err := load()
	if err != nil {
		return nil, err
	}
	if err := spec.Variables["nh_cache_ns"].Set(uint64(po.NextHopCache.Nanoseconds())); err != nil {
		return nil, fmt.Errorf("set nh_cache_ns: %w", err)
	}
	if v, ok := spec.Variables["decap_tunnel_flag"]; ok {
		if err := v.Set(DecapTunnelFlag()); err != nil {
			return nil, fmt.Errorf("set decap_tunnel_flag: %w", err)
		}
	}
	for name, v := range vars {
		if err := spec.Variables[name].Set(v); err != nil {
			return nil, fmt.Errorf("set %s: %w", name, err)
		}
	}
	return spec, nil
}

// loadError says which program failed to load, with the verifier's log when it was the verifier.
func loadError(hook string, err error) error {
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		return fmt.Errorf("verifier rejected the seg6x %s program: %+v", hook, ve)
	}
	return fmt.Errorf("loading the %s program: %w", hook, err)
}

// Programs are the two programs of one load (ProgramOptions), each loaded when first asked for: an
// instance without tc interfaces never loads the tc program.
type Programs struct {
	dir string
	po  ProgramOptions
	xdp *Seg6xObjects
	tc  *Seg6xTcObjects
}

// NewPrograms prepares the programs of instance dir; nothing is loaded yet.
func NewPrograms(dir string, po ProgramOptions) *Programs { return &Programs{dir: dir, po: po} }

// For returns the program of attach mode m (loading it on first use).
func (p *Programs) For(m Mode) (*ebpf.Program, error) {
	var err error
	if m == ModeTC {
		if p.tc == nil {
			p.tc, err = LoadTCObjects(p.dir, p.po)
		}
		if err != nil {
			return nil, err
		}
		return p.tc.Seg6xTc, nil
	}
	if p.xdp == nil {
		p.xdp, err = LoadObjects(p.dir, p.po)
	}
	if err != nil {
		return nil, err
	}
	return p.xdp.Seg6xXdp, nil
}

// Close releases the loaded programs (attached ones stay, held by their links).
func (p *Programs) Close() {
	if p.xdp != nil {
		p.xdp.Close()
	}
	if p.tc != nil {
		p.tc.Close()
	}
}
