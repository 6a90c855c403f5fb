package bgp

// pathstore.go: what keeps the importer's installed routes small at a million routes (the learned
// paths: learnedstore.go). An installed route is kept as its segments and two small ids
// (installedRoute), not as a copy of the state's route; the one-SID segment lists many routes have
// in common are stored once and shared (interner: read-only values).

import (
	"net/netip"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

// internLimit bounds each table of the interner: past it, a table starts again (values already
// handed out stay valid; only their sharing with later ones is lost).
const internLimit = 1 << 16

// interner hands out one shared copy of equal segment lists. What it returns must not be modified.
type interner struct {
	segs map[netip.Addr][]netip.Addr
}

// segList is the segment list of the one SID sid, shared (its capacity is its length: an append to
// it copies).
func (n *interner) segList(sid netip.Addr) []netip.Addr {
	if v, ok := n.segs[sid]; ok {
		return v
	}
	if n.segs == nil || len(n.segs) >= internLimit {
		n.segs = map[netip.Addr][]netip.Addr{}
	}
	v := slices.Clip([]netip.Addr{sid})
	n.segs[sid] = v
	return v
}

// installedRoute is what the importer keeps of a route it installed: what tells whether the route
// it wants now differs (the store holds the route itself). Segs is shared (interner.segList).
type installedRoute struct {
	Segs      []netip.Addr
	mode, src uint32 // routeAttrs ids
}

// routeAttrs numbers the few modes and outer sources the installed routes have. It only grows (by
// the configured next hops over time: a handful).
type routeAttrs struct {
	modes smallTable[string]
	srcs  smallTable[netip.Addr]
}

// compact is what the importer keeps of r.
func (im *importer) compact(r *model.Route) installedRoute {
	ir := installedRoute{Segs: slices.Clip(slices.Clone(r.Segs)), mode: im.attrs.modes.id(r.Mode), src: im.attrs.srcs.id(r.Src)}
	if len(r.Segs) == 1 {
		ir.Segs = im.shared.segList(r.Segs[0])
	}
	return ir
}

// expand is the part of an installed route compact kept: its mode, segments and source.
func (im *importer) expand(ir installedRoute) model.Route {
	return model.Route{Mode: im.attrs.modes.val(ir.mode), Segs: ir.Segs, Src: im.attrs.srcs.val(ir.src)}
}

// smallTable numbers distinct values (id 0: the zero value).
type smallTable[T comparable] struct {
	vals []T
	ids  map[T]uint32
}

func (t *smallTable[T]) id(v T) uint32 {
	var zero T
	if v == zero {
		return 0
	}
	if id, ok := t.ids[v]; ok {
		return id
	}
	if t.ids == nil {
		t.ids, t.vals = map[T]uint32{}, []T{zero}
	}
	t.ids[v] = uint32(len(t.vals))
	t.vals = append(t.vals, v)
	return t.ids[v]
}

func (t *smallTable[T]) val(id uint32) T {
	if id == 0 {
		var zero T
		return zero
	}
	return t.vals[id]
}

// key4 is an IPv4 prefix in one word (address and length); prefix4 reads it back.
func key4(p netip.Prefix) uint64 {
	a := p.Addr().As4()
	return uint64(a[0])<<40 | uint64(a[1])<<32 | uint64(a[2])<<24 | uint64(a[3])<<16 | uint64(p.Bits())
}

func prefix4(k uint64) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(k >> 40), byte(k >> 32), byte(k >> 24), byte(k >> 16)}), int(k&0xff))
}
