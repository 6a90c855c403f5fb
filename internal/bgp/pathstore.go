package bgp

// pathstore.go: what keeps the importer's memory small at a million routes. The route
// distinguishers, route-target lists and one-SID segment lists that many paths and routes have in
// common are stored once and shared (interner: read-only values); a prefix's destinations (its
// paths' keys, one per RD) are found through prefixIndex, which holds the first one inline (an IPv4
// prefix's key in one word) instead of a map per prefix.

import (
	"net/netip"
	"slices"
)

// internLimit bounds each table of the interner: past it, a table starts again (values already
// handed out stay valid; only their sharing with later ones is lost).
const internLimit = 1 << 16

// interner hands out one shared copy of equal values. What it returns must not be modified.
type interner struct {
	strs map[string]string
	rts  map[string][]string
	segs map[netip.Addr][]netip.Addr
	buf  []byte
}

// str is s, shared.
func (n *interner) str(s string) string {
	if v, ok := n.strs[s]; ok {
		return v
	}
	if n.strs == nil || len(n.strs) >= internLimit {
		n.strs = map[string]string{}
	}
	n.strs[s] = s
	return s
}

// list is rts (route targets, sorted), shared; nil stays nil.
func (n *interner) list(rts []string) []string {
	if len(rts) == 0 {
		return rts
	}
	n.buf = n.buf[:0]
	for _, rt := range rts {
		n.buf = append(append(n.buf, rt...), 0)
	}
	if v, ok := n.rts[string(n.buf)]; ok {
		return v
	}
	if n.rts == nil || len(n.rts) >= internLimit {
		n.rts = map[string][]string{}
	}
	v := make([]string, len(rts))
	for i, rt := range rts {
		v[i] = n.str(rt)
	}
	n.rts[string(n.buf)] = v
	return v
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

// prefixIndex maps a prefix to the keys of its destinations (one per route distinguisher). IPv4
// prefixes are keyed by one word (address and length), IPv6 ones by netip.Prefix.
type prefixIndex struct {
	v4 keyIndex[uint64]
	v6 keyIndex[netip.Prefix]
}

func newPrefixIndex() prefixIndex {
	return prefixIndex{v4: newKeyIndex[uint64](), v6: newKeyIndex[netip.Prefix]()}
}

func key4(p netip.Prefix) uint64 {
	a := p.Addr().As4()
	return uint64(a[0])<<40 | uint64(a[1])<<32 | uint64(a[2])<<24 | uint64(a[3])<<16 | uint64(p.Bits())
}

func prefix4(k uint64) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(k >> 40), byte(k >> 32), byte(k >> 24), byte(k >> 16)}), int(k&0xff))
}

// add records key under p (once).
func (x *prefixIndex) add(p netip.Prefix, key string) {
	if p.Addr().Is4() {
		x.v4.add(key4(p), key)
	} else {
		x.v6.add(p, key)
	}
}

// remove drops key from p.
func (x *prefixIndex) remove(p netip.Prefix, key string) {
	if p.Addr().Is4() {
		x.v4.remove(key4(p), key)
	} else {
		x.v6.remove(p, key)
	}
}

// keys calls f with each key of p.
func (x *prefixIndex) keys(p netip.Prefix, f func(key string)) {
	if p.Addr().Is4() {
		x.v4.keys(key4(p), f)
	} else {
		x.v6.keys(p, f)
	}
}

// each calls f with every indexed prefix.
func (x *prefixIndex) each(f func(p netip.Prefix)) {
	for k := range x.v4.one {
		f(prefix4(k))
	}
	for p := range x.v6.one {
		f(p)
	}
}

// keyIndex maps a key to strings, holding the first one inline instead of a collection per key.
type keyIndex[K comparable] struct {
	one  map[K]string   // every indexed key: its first string
	more map[K][]string // keys with several: the others
}

func newKeyIndex[K comparable]() keyIndex[K] {
	return keyIndex[K]{one: map[K]string{}, more: map[K][]string{}}
}

func (x *keyIndex[K]) add(k K, s string) {
	first, ok := x.one[k]
	switch {
	case !ok:
		x.one[k] = s
	case first != s && !slices.Contains(x.more[k], s):
		x.more[k] = append(x.more[k], s)
	}
}

func (x *keyIndex[K]) remove(k K, s string) {
	first, ok := x.one[k]
	if !ok {
		return
	}
	more := x.more[k]
	if first == s {
		if len(more) == 0 {
			delete(x.one, k)
			return
		}
		x.one[k], more = more[len(more)-1], more[:len(more)-1]
	} else if i := slices.Index(more, s); i >= 0 {
		more[i], more = more[len(more)-1], more[:len(more)-1]
	}
	if len(more) == 0 {
		delete(x.more, k)
	} else {
		x.more[k] = more
	}
}

func (x *keyIndex[K]) keys(k K, f func(s string)) {
	first, ok := x.one[k]
	if !ok {
		return
	}
	f(first)
	for _, s := range x.more[k] {
		f(s)
	}
}
