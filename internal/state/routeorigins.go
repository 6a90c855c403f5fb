package state

// routeorigins.go: the origin of each route whose origin is not its tenant's (BGP's routes in a
// tenant of the API), held as routeindex.go holds the routes: keyed by the prefix's machine words,
// the origin as a small id, no pointers for the garbage collector to scan (a million BGP routes
// are a million entries here).

import (
	"net/netip"
	"sync"

	"github.com/seg6x/seg6x/internal/model"
)

// originIndex maps a prefix to an origin id (originID); its maps are made on first use.
type originIndex struct {
	v4 map[uint64]uint8
	v6 map[prefix6]uint8
}

// knownOrigins are the ids of the origins seg6x has; any other origin gets an id on first use.
var knownOrigins = []model.Origin{model.OriginConfig, model.OriginKernel, model.OriginBGP, model.OriginVPN}

var otherOrigins struct {
	sync.RWMutex
	list []model.Origin // id len(knownOrigins)+i
}

func originID(o model.Origin) uint8 {
	for i, k := range knownOrigins {
		if k == o {
			return uint8(i)
		}
	}
	otherOrigins.Lock()
	defer otherOrigins.Unlock()
	for i, k := range otherOrigins.list {
		if k == o {
			return uint8(len(knownOrigins) + i)
		}
	}
	otherOrigins.list = append(otherOrigins.list, o)
	return uint8(len(knownOrigins) + len(otherOrigins.list) - 1)
}

func originOfID(id uint8) model.Origin {
	if int(id) < len(knownOrigins) {
		return knownOrigins[id]
	}
	otherOrigins.RLock()
	defer otherOrigins.RUnlock()
	return otherOrigins.list[int(id)-len(knownOrigins)]
}

// get is the origin stored for p; false when there is none.
func (x *originIndex) get(p netip.Prefix) (model.Origin, bool) {
	var id uint8
	var ok bool
	if p.Addr().Is4() {
		id, ok = x.v4[key4(p)]
	} else {
		id, ok = x.v6[key6(p)]
	}
	if !ok {
		return "", false
	}
	return originOfID(id), true
}

// of is the origin stored for p, "" when there is none.
func (x *originIndex) of(p netip.Prefix) model.Origin {
	o, _ := x.get(p)
	return o
}

func (x *originIndex) set(p netip.Prefix, o model.Origin) {
	if p.Addr().Is4() {
		if x.v4 == nil {
			x.v4 = map[uint64]uint8{}
		}
		x.v4[key4(p)] = originID(o)
	} else {
		if x.v6 == nil {
			x.v6 = map[prefix6]uint8{}
		}
		x.v6[key6(p)] = originID(o)
	}
}

func (x *originIndex) del(p netip.Prefix) {
	if p.Addr().Is4() {
		delete(x.v4, key4(p))
	} else {
		delete(x.v6, key6(p))
	}
}

func (x *originIndex) len() int { return len(x.v4) + len(x.v6) }
