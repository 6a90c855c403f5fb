package fabrictest

// stream.go: a paced stream of a few tenant flows from h, and p's record of what arrived on which
// uplink, for the failure tests: every frame of flow f carries its sequence number, sent at about
// start + seq/rate, so lost frames can be placed in time; the tests wait on what has arrived (every
// flow, both uplinks) instead of for fixed times.

import (
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// stream sends flows at rate frames/s each until stopped, and reads what p receives meanwhile.
type stream struct {
	f     *fabric
	flows []int
	rate  int

	mu      sync.Mutex
	sentAt  []time.Time // send time of each sequence number (the same for every flow)
	got     map[int]map[int]arrivalAt
	flowAt  map[int][]time.Time     // arrival times of each flow's counted frames, in order
	upAt    map[string][]time.Time  // arrival times of the counted frames on each uplink, in order
	dead    map[string][2]time.Time // uplink -> window in which arrivals there count as lost
	stop    chan struct{}
	wg      sync.WaitGroup
	sendErr error
}

// arrivalAt is one frame of a flow that reached p.
type arrivalAt struct {
	uplink string
	at     time.Time
}

// startStream starts sending flows at rate frames/s each (bounded by limit in time).
func (f *fabric) startStream(flows []int, rate int, limit time.Duration) *stream {
	s := &stream{f: f, flows: flows, rate: rate, got: map[int]map[int]arrivalAt{}, flowAt: map[int][]time.Time{},
		upAt: map[string][]time.Time{}, dead: map[string][2]time.Time{}, stop: make(chan struct{})}
	for _, fl := range flows {
		s.got[fl] = map[int]arrivalAt{}
	}
	s.wg.Add(2)
	go s.receive()
	go s.send(limit)
	return s
}

func (s *stream) send(limit time.Duration) {
	defer s.wg.Done()
	start := time.Now()
	period := time.Second / time.Duration(s.rate)
	for seq := 0; ; seq++ {
		due := start.Add(time.Duration(seq) * period)
		if d := time.Until(due); d > 0 {
			select {
			case <-s.stop:
				return
			case <-time.After(d):
			}
		} else {
			select {
			case <-s.stop:
				return
			default:
			}
		}
		if time.Since(start) > limit {
			return
		}
		now := time.Now()
		for _, fl := range s.flows {
			if err := s.f.sendFrame(s.f.frame(fl, seq)); err != nil {
				s.mu.Lock()
				s.sendErr = err
				s.mu.Unlock()
				return
			}
		}
		s.mu.Lock()
		s.sentAt = append(s.sentAt, now)
		s.mu.Unlock()
	}
}

func (s *stream) receive() {
	defer s.wg.Done()
	buf := make([]byte, 16384)
	for {
		select {
		case <-s.stop:
			// what is still queued
			s.readAll(buf)
			return
		default:
		}
		if !s.readAll(buf) {
			time.Sleep(time.Millisecond)
		}
	}
}

// readAll reads every queued frame on both uplinks; false when there was none.
func (s *stream) readAll(buf []byte) bool {
	any := false
	for _, u := range uplinks {
		for {
			n, from, err := unix.Recvfrom(s.f.recv[u], buf, unix.MSG_DONTWAIT)
			if err != nil {
				break
			}
			// Only frames addressed to p count: one sent to a MAC p no longer has is lost.
			if ll, ok := from.(*unix.SockaddrLinklayer); !ok || ll.Pkttype != unix.PACKET_HOST {
				continue
			}
			flow, seq, _, ok := parse(buf[:n])
			if !ok {
				continue
			}
			now := time.Now()
			s.mu.Lock()
			w, isDead := s.dead[u]
			if m := s.got[flow]; m != nil && !(isDead && now.After(w[0]) && (w[1].IsZero() || now.Before(w[1]))) {
				m[seq] = arrivalAt{u, now}
				s.flowAt[flow] = append(s.flowAt[flow], now)
				s.upAt[u] = append(s.upAt[u], now)
			}
			s.mu.Unlock()
			any = true
		}
	}
	return any
}

// deadFrom makes arrivals on uplink count as lost from now on (a neighbor that no longer works).
func (s *stream) deadFrom(uplink string) {
	s.mu.Lock()
	s.dead[uplink] = [2]time.Time{time.Now()}
	s.mu.Unlock()
}

// aliveFrom ends the uplink's dead window now.
func (s *stream) aliveFrom(uplink string) {
	s.mu.Lock()
	w := s.dead[uplink]
	w[1] = time.Now()
	s.dead[uplink] = w
	s.mu.Unlock()
}

// finish stops the stream, waits for stragglers, and returns what it saw.
func (s *stream) finish() streamResult {
	close(s.stop)
	s.wg.Wait()
	time.Sleep(100 * time.Millisecond)
	s.readAll(make([]byte, 16384))
	s.mu.Lock()
	defer s.mu.Unlock()
	return streamResult{sentAt: s.sentAt, got: s.got, flows: s.flows, err: s.sendErr}
}

// since is how many of the flows' frames each uplink carried after t.
func (s *stream) since(t time.Time) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	per := map[string]int{}
	for u, at := range s.upAt {
		per[u] = countAfter(at, t)
	}
	return per
}

// waitFlows waits (at most limit) until every flow has had n frames arrive after t; false when one
// has not by then.
func (s *stream) waitFlows(n int, t time.Time, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		s.mu.Lock()
		ok := true
		for _, fl := range s.flows {
			ok = ok && countAfter(s.flowAt[fl], t) >= n
		}
		s.mu.Unlock()
		if ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// countAfter counts the times (in order) after t.
func countAfter(at []time.Time, t time.Time) int {
	return len(at) - sort.Search(len(at), func(i int) bool { return at[i].After(t) })
}

// streamResult is a finished stream.
type streamResult struct {
	sentAt []time.Time
	got    map[int]map[int]arrivalAt
	flows  []int
	err    error
}

// lost counts the frames sent at or after from (all of them when from is zero) that never arrived.
func (r streamResult) lost(from time.Time) int {
	return r.lostBetween(from, time.Now().Add(time.Hour))
}

// lostBetween counts the frames sent in [from, to) that never arrived.
func (r streamResult) lostBetween(from, to time.Time) int {
	n := 0
	for _, fl := range r.flows {
		for seq, at := range r.sentAt {
			if at.Before(from) || !at.Before(to) {
				continue
			}
			if _, ok := r.got[fl][seq]; !ok {
				n++
			}
		}
	}
	return n
}

// sentBetween counts the frames (of every flow) sent in [from, to).
func (r streamResult) sentBetween(from, to time.Time) int {
	n := 0
	for _, at := range r.sentAt {
		if !at.Before(from) && at.Before(to) {
			n += len(r.flows)
		}
	}
	return n
}

// lastArrival is when each flow's last frame arrived (zero: never).
func (r streamResult) lastArrival() map[int]time.Time {
	last := map[int]time.Time{}
	for fl, m := range r.got {
		for _, a := range m {
			if a.at.After(last[fl]) {
				last[fl] = a.at
			}
		}
	}
	return last
}
