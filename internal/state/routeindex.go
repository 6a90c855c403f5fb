package state

// routeindex.go: a tenant's routes, prefix -> policy id, held without pointers: the garbage
// collector never scans them (a million routes are a million entries here) and an IPv4 key is one
// machine word. Ids name policies as the data plane does (policyOf, tenantroutes.go): 0 pass, GroupFlag a named
// policy's group, the others runtime.polByID. A change finds its route records (touch) through the
// same index, the value then a record's place.

import "net/netip"

type routeIndex struct {
	v4 map[uint64]uint32 // address << 8 | prefix length
	v6 map[prefix6]uint32
}

type prefix6 struct {
	hi, lo uint64
	bits   uint8
}

// newRouteIndex is an empty index with room for n IPv4 prefixes.
func newRouteIndex(n int) routeIndex {
	return routeIndex{v4: make(map[uint64]uint32, n), v6: map[prefix6]uint32{}}
}

func key4(p netip.Prefix) uint64 {
	a := p.Addr().As4()
	return uint64(a[0])<<32 | uint64(a[1])<<24 | uint64(a[2])<<16 | uint64(a[3])<<8 | uint64(p.Bits())
}

func key6(p netip.Prefix) prefix6 {
	a := p.Addr().As16()
	var k prefix6
	for i := 0; i < 8; i++ {
		k.hi = k.hi<<8 | uint64(a[i])
		k.lo = k.lo<<8 | uint64(a[8+i])
	}
	k.bits = uint8(p.Bits())
	return k
}

// get is the policy id of the route for p; false when there is none.
func (x routeIndex) get(p netip.Prefix) (uint32, bool) {
	if p.Addr().Is4() {
		id, ok := x.v4[key4(p)]
		return id, ok
	}
	id, ok := x.v6[key6(p)]
	return id, ok
}

func (x routeIndex) set(p netip.Prefix, id uint32) {
	if p.Addr().Is4() {
		x.v4[key4(p)] = id
	} else {
		x.v6[key6(p)] = id
	}
}

func (x routeIndex) del(p netip.Prefix) {
	if p.Addr().Is4() {
		delete(x.v4, key4(p))
	} else {
		delete(x.v6, key6(p))
	}
}

func (x routeIndex) len() int { return len(x.v4) + len(x.v6) }

// famOf is p's family as per-family counts index it: 0 IPv4, 1 IPv6.
func famOf(p netip.Prefix) int {
	if p.Addr().Is6() {
		return 1
	}
	return 0
}

// all yields every route (in no order): for p, id := range x.all.
func (x routeIndex) all(yield func(netip.Prefix, uint32) bool) {
	for k, id := range x.v4 {
		a := netip.AddrFrom4([4]byte{byte(k >> 32), byte(k >> 24), byte(k >> 16), byte(k >> 8)})
		if !yield(netip.PrefixFrom(a, int(k&0xff)), id) {
			return
		}
	}
	for k, id := range x.v6 {
		var a [16]byte
		for i := 0; i < 8; i++ {
			a[i], a[8+i] = byte(k.hi>>(56-8*i)), byte(k.lo>>(56-8*i))
		}
		if !yield(netip.PrefixFrom(netip.AddrFrom16(a), int(k.bits)), id) {
			return
		}
	}
}
