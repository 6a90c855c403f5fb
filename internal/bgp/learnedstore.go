package bgp

// learnedstore.go: the importer's learned paths, one per destination (RD and prefix), at a few dozen
// bytes each. A readable path is a record without pointers (its SID inline; its RD, route-target
// list, next hop and peer as numbers into tables of the values in use, counted, so that a value no
// path uses any more goes), kept under its prefix: the first one in a map the collector never scans,
// those of other RDs beside it. An unreadable path (rare) is kept whole, with its error, under its
// key as GoBGP writes it ("RD prefix"). learnedPath is the view that best, notes.go and the report
// read, made on demand.

import (
	"net/netip"
	"slices"
	"strings"
)

// pathRec is a readable learned path.
type pathRec struct {
	sid   [16]byte
	rd    uint32 // learnedStore.rds
	rts   uint32 // learnedStore.rts
	nh    uint32 // learnedStore.addrs
	peer  uint32 // learnedStore.addrs
	beh   uint8  // behaviorNames
	stale bool
}

var behaviorNames = []string{EndDT4, EndDT6, EndDT46}

// rdName is a route distinguisher as GoBGP writes it (the destination's key) and as seg6x does.
type rdName struct{ gobgp, shown string }

// key6 is an IPv6 prefix without a pointer.
type key6 struct {
	a    [16]byte
	bits uint8
}

// recIndex holds the readable paths of each prefix.
type recIndex[K comparable] struct {
	first map[K]pathRec   // every prefix with a readable path: one of them
	more  map[K][]pathRec // prefixes with several (RDs): the others
}

func newRecIndex[K comparable]() recIndex[K] {
	return recIndex[K]{first: map[K]pathRec{}, more: map[K][]pathRec{}}
}

// update calls f with k's record of RD rd (nil: none) and stores what f returns in its place (nil:
// nothing).
func (x *recIndex[K]) update(k K, rd uint32, f func(*pathRec) *pathRec) {
	first, ok := x.first[k]
	if ok && first.rd == rd {
		switch r := f(&first); {
		case r != nil:
			x.first[k] = *r
		case len(x.more[k]) == 0:
			delete(x.first, k)
		default:
			more := x.more[k]
			x.first[k] = more[len(more)-1]
			x.setMore(k, more[:len(more)-1])
		}
		return
	}
	more := x.more[k]
	i := slices.IndexFunc(more, func(r pathRec) bool { return r.rd == rd })
	switch {
	case i >= 0:
		if r := f(&more[i]); r != nil {
			more[i] = *r
		} else {
			more[i] = more[len(more)-1]
			x.setMore(k, more[:len(more)-1])
		}
	case !ok:
		if r := f(nil); r != nil {
			x.first[k] = *r
		}
	default:
		if r := f(nil); r != nil {
			x.more[k] = append(more, *r)
		}
	}
}

func (x *recIndex[K]) setMore(k K, more []pathRec) {
	if len(more) == 0 {
		delete(x.more, k)
	} else {
		x.more[k] = more
	}
}

// each calls f with every record of k.
func (x *recIndex[K]) each(k K, f func(*pathRec)) {
	first, ok := x.first[k]
	if !ok {
		return
	}
	f(&first)
	for i := range x.more[k] {
		f(&x.more[k][i])
	}
}

// learnedStore is the importer's learned paths.
type learnedStore struct {
	v4    recIndex[uint64]
	v6    recIndex[key6]
	n     int                        // readable paths
	bad   map[string]learnedPath     // unreadable paths, by key
	badOf map[netip.Prefix][]string  // their keys by (masked) prefix
	rds   valueTable[string, rdName] // by GoBGP's text
	rts   valueTable[string, []string]
	addrs valueTable[netip.Addr, netip.Addr]
}

func newLearnedStore() *learnedStore {
	return &learnedStore{v4: newRecIndex[uint64](), v6: newRecIndex[key6](), bad: map[string]learnedPath{},
		badOf: map[netip.Prefix][]string{}}
}

func toKey6(p netip.Prefix) key6 { return key6{a: p.Addr().As16(), bits: uint8(p.Bits())} }

// update is recIndex.update on p's family.
func (st *learnedStore) update(p netip.Prefix, rd uint32, f func(*pathRec) *pathRec) {
	if p.Addr().Is4() {
		st.v4.update(key4(p), rd, f)
	} else {
		st.v6.update(toKey6(p), rd, f)
	}
}

// put records readable path r (its prefix masked) from peer; rd is its RD as GoBGP writes it.
func (st *learnedStore) put(rd string, r *VPNRoute, peer netip.Addr, stale bool) {
	if len(st.bad) > 0 {
		st.dropBad(rd + " " + r.Prefix.String())
	}
	rec := pathRec{sid: r.SID.As16(), beh: uint8(slices.Index(behaviorNames, r.Behavior)), stale: stale,
		rd:  st.rds.acquire(rd, func() rdName { return rdName{rd, r.RD} }),
		rts: st.rts.acquire(joinRTs(r.RTs), func() []string { return slices.Clip(slices.Clone(r.RTs)) }),
		nh:  st.addrs.acquire(r.NextHop, nil), peer: st.addrs.acquire(peer, nil)}
	st.update(r.Prefix, rec.rd, func(old *pathRec) *pathRec {
		if old != nil {
			st.release(old) // after rec took its values: a value both use stays
		} else {
			st.n++
		}
		return &rec
	})
}

// putBad records unreadable path lp under key (its RD as GoBGP writes it, a space and its prefix as
// received); it replaces the readable path of the same key.
func (st *learnedStore) putBad(rd string, received netip.Prefix, key string, lp learnedPath) {
	st.removeReadable(rd, received)
	if _, ok := st.bad[key]; !ok {
		st.badOf[lp.route.Prefix] = append(st.badOf[lp.route.Prefix], key)
	}
	st.bad[key] = lp
}

// dropBad drops the unreadable path of key, if any.
func (st *learnedStore) dropBad(key string) {
	lp, ok := st.bad[key]
	if !ok {
		return
	}
	delete(st.bad, key)
	p := lp.route.Prefix
	if keys := slices.DeleteFunc(st.badOf[p], func(k string) bool { return k == key }); len(keys) > 0 {
		st.badOf[p] = keys
	} else {
		delete(st.badOf, p)
	}
}

// remove drops the path of RD rd (as GoBGP writes it) and prefix received (key: GoBGP's "RD prefix").
func (st *learnedStore) remove(rd string, received netip.Prefix, key func() string) {
	st.removeReadable(rd, received)
	if len(st.bad) > 0 {
		st.dropBad(key())
	}
}

// removeReadable drops the readable path for received under RD rd, if any (a readable path's prefix
// is always masked: one received with host bits set is unreadable).
func (st *learnedStore) removeReadable(rd string, received netip.Prefix) {
	id, ok := st.rds.find(rd)
	if !ok || received != received.Masked() {
		return
	}
	st.update(received, id, func(old *pathRec) *pathRec {
		if old != nil {
			st.release(old)
			st.n--
		}
		return nil
	})
}

// release lets go of the values a record holds.
func (st *learnedStore) release(r *pathRec) {
	st.rds.release(r.rd)
	st.rts.release(r.rts)
	st.addrs.release(r.nh)
	st.addrs.release(r.peer)
}

// view is the learnedPath of record r under prefix p.
func (st *learnedStore) view(p netip.Prefix, r *pathRec) learnedPath {
	beh := ""
	if int(r.beh) < len(behaviorNames) {
		beh = behaviorNames[r.beh]
	}
	return learnedPath{route: VPNRoute{RD: st.rds.val(r.rd).shown, Prefix: p, RTs: st.rts.val(r.rts),
		NextHop: st.addrs.val(r.nh), SID: netip.AddrFrom16(r.sid), Behavior: beh},
		peer: st.addrs.val(r.peer), stale: r.stale}
}

// paths calls f with each readable path of prefix p.
func (st *learnedStore) paths(p netip.Prefix, f func(learnedPath)) {
	if p.Addr().Is4() {
		st.v4.each(key4(p), func(r *pathRec) { f(st.view(p, r)) })
	} else {
		st.v6.each(toKey6(p), func(r *pathRec) { f(st.view(p, r)) })
	}
}

// of calls f with every learned path of prefix p, readable or not, and a function that makes its key
// ("RD prefix", as GoBGP writes them).
func (st *learnedStore) of(p netip.Prefix, f func(key func() string, lp learnedPath)) {
	visit := func(r *pathRec) {
		f(func() string { return st.rds.val(r.rd).gobgp + " " + p.String() }, st.view(p, r))
	}
	if p.Addr().Is4() {
		st.v4.each(key4(p), visit)
	} else {
		st.v6.each(toKey6(p), visit)
	}
	for _, k := range st.badOf[p] {
		f(func() string { return k }, st.bad[k])
	}
}

// prefixes calls f with every prefix that has a learned path (an unreadable one's: masked).
func (st *learnedStore) prefixes(f func(netip.Prefix)) {
	for k := range st.v4.first {
		f(prefix4(k))
	}
	for k := range st.v6.first {
		f(netip.PrefixFrom(netip.AddrFrom16(k.a), int(k.bits)))
	}
	for p := range st.badOf {
		f(p)
	}
}

// each calls f with every learned path and its key ("RD prefix", as GoBGP writes them).
func (st *learnedStore) each(f func(key string, lp learnedPath)) {
	visit := func(p netip.Prefix, r *pathRec) {
		f(st.rds.val(r.rd).gobgp+" "+p.String(), st.view(p, r))
	}
	for k, r := range st.v4.first {
		p := prefix4(k)
		visit(p, &r)
		for i := range st.v4.more[k] {
			visit(p, &st.v4.more[k][i])
		}
	}
	for k, r := range st.v6.first {
		p := netip.PrefixFrom(netip.AddrFrom16(k.a), int(k.bits))
		visit(p, &r)
		for i := range st.v6.more[k] {
			visit(p, &st.v6.more[k][i])
		}
	}
	for key, lp := range st.bad {
		f(key, lp)
	}
}

// count is the number of learned paths and how many of them are unreadable.
func (st *learnedStore) count() (all, bad int) { return st.n + len(st.bad), len(st.bad) }

func joinRTs(rts []string) string { return strings.Join(rts, "\x00") }

// valueTable numbers the distinct values in use (id 0: none), counting their users.
type valueTable[K comparable, V any] struct {
	ids  map[K]uint32
	keys []K
	vals []V
	refs []uint32
	free []uint32
}

// acquire is k's id, counted once more; mk makes its value the first time (nil: the value is k).
func (t *valueTable[K, V]) acquire(k K, mk func() V) uint32 {
	if id, ok := t.ids[k]; ok {
		t.refs[id]++
		return id
	}
	if t.ids == nil {
		t.ids = map[K]uint32{}
		t.keys, t.vals, t.refs = make([]K, 1), make([]V, 1), make([]uint32, 1)
	}
	var v V
	if mk != nil {
		v = mk()
	} else {
		v = any(k).(V)
	}
	var id uint32
	if n := len(t.free); n > 0 {
		id, t.free = t.free[n-1], t.free[:n-1]
		t.keys[id], t.vals[id], t.refs[id] = k, v, 1
	} else {
		id = uint32(len(t.keys))
		t.keys, t.vals, t.refs = append(t.keys, k), append(t.vals, v), append(t.refs, 1)
	}
	t.ids[k] = id
	return id
}

// find is k's id, if it is in use.
func (t *valueTable[K, V]) find(k K) (uint32, bool) {
	id, ok := t.ids[k]
	return id, ok
}

// release counts one user of id less; the last one frees it.
func (t *valueTable[K, V]) release(id uint32) {
	if id == 0 || int(id) >= len(t.refs) || t.refs[id] == 0 {
		return
	}
	if t.refs[id]--; t.refs[id] == 0 {
		delete(t.ids, t.keys[id])
		var k K
		var v V
		t.keys[id], t.vals[id] = k, v
		t.free = append(t.free, id)
	}
}

func (t *valueTable[K, V]) val(id uint32) V {
	if int(id) >= len(t.vals) {
		var v V
		return v
	}
	return t.vals[id]
}
