package state

// idpool.go: the pools of data-plane ids (policies, tables, SIDs): ids handed out and taken back,
// a released id kept unused for a while so that a packet in flight never finds its slot reused.

import (
	"fmt"
	"time"
)

// quarantine is how long a released id stays unused: a packet that read the old id just before the
// change must not find the slot already holding something else.
const quarantine = 200 * time.Millisecond

// idPool hands out ids 1..limit-1, reusing released ids only after the quarantine.
type idPool struct {
	limit uint32
	next  uint32
	freed []freedID
	what  string
}

type freedID struct {
	id uint32
	at time.Time
}

func newIDPool(limit uint32, what string) *idPool { return &idPool{limit: limit, next: 1, what: what} }

func (p *idPool) alloc() (uint32, error) {
	if len(p.freed) > 0 && time.Since(p.freed[0].at) >= quarantine {
		id := p.freed[0].id
		p.freed = p.freed[1:]
		return id, nil
	}
	if p.next < p.limit {
		p.next++
		return p.next - 1, nil
	}
	if len(p.freed) > 0 {
		time.Sleep(quarantine - time.Since(p.freed[0].at))
		return p.alloc()
	}
	return 0, fmt.Errorf("no free id: at most %d %s", p.limit-1, p.what)
}

// release returns id to the pool; now=false makes it reusable at once (it was never visible).
func (p *idPool) release(id uint32, now bool) {
	if !now {
		// Never visible: first in line (freed stays ordered by release time, oldest first).
		p.freed = append([]freedID{{id: id}}, p.freed...)
		return
	}
	p.freed = append(p.freed, freedID{id: id, at: time.Now()})
}

// rebuild sets the pool after loading: used ids taken, every gap free.
func (p *idPool) rebuild(used map[uint32]bool) {
	p.next, p.freed = 1, nil
	for id := range used {
		if id >= p.next {
			p.next = id + 1
		}
	}
	for id := uint32(1); id < p.next; id++ {
		if !used[id] {
			p.freed = append(p.freed, freedID{id: id})
		}
	}
}
