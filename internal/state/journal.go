package state

// journal.go: the saved state as commits write it: each commit's journal line (the records of what it
// changed), made while the kernel takes its map writes and appended once they are in, and the snapshot
// the journal is folded into (compaction: by a commit when the journal has grown large, or by the
// controller once commits pause, given up for a waiting commit).

import (
	"bufio"
	"errors"
	"maps"
	"os"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

// startJournalLine makes the journal line of commit c, from the state as c leaves it (read only), on
// a goroutine of its own while the caller has the maps written; line waits for it.
func (s *Store) startJournalLine(c *change) (line func() ([]byte, error)) {
	type madeLine struct {
		b   []byte
		err error
	}
	made := make(chan madeLine, 1)
	go func() {
		b, err := makeJournalLine(s.gen+1, func(emit func(record)) { s.rt.changeRecords(c, emit) }, c.nroutes)
		made <- madeLine{b, err}
	}()
	return func() ([]byte, error) {
		l := <-made
		return l.b, l.err
	}
}

// changeRecords describes what commit c changed (after it was applied in memory), one record at a
// time to emit, which must not keep it (route records share one savedRoute).
func (r *runtime) changeRecords(c *change, emit func(record)) {
	var sr savedRoute
	route := func(v savedRoute) *savedRoute {
		sr = v
		return &sr
	}
	if c.optsBefore != nil && *c.optsBefore != r.opts {
		o := r.opts
		emit(record{Opts: &o})
	}
	if c.domainBefore != nil {
		d := cloneDomain(r.domain)
		emit(record{Domain: &d})
	}
	if c.bgpTouched && !model.Same(c.bgpBefore, r.bgp) {
		if r.bgp != nil {
			emit(record{BGP: model.CloneBGP(r.bgp)})
		} else {
			emit(record{BGPDel: true})
		}
	}
	for name := range c.ifaces {
		if it, ok := r.ifaces[name]; ok {
			emit(record{Iface: &it})
		} else {
			emit(record{IfaceDel: name})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.plugins)) { // before the SIDs that run them
		if pr := r.plugins[name]; pr != nil {
			if b := c.plugins[name]; !b.had || b.p != pr {
				emit(pluginRecord(pr))
			}
		} else if c.plugins[name].had {
			emit(record{PluginDel: name})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.vxlans)) {
		v, ok := r.vxlans[name]
		switch b := c.vxlans[name]; {
		case !ok:
			emit(record{VXLANDel: name})
		case !b.had || !model.SameVXLAN(savedVXLAN(b.v), savedVXLAN(v)):
			v = savedVXLAN(v)
			emit(record{VXLAN: &v})
		}
	}
	for _, p := range c.newPols {
		if p.refs > 0 {
			emit(polRecord(p))
		}
	}
	for name := range c.named {
		if n := r.named[name]; n != nil {
			emit(namedRecord(n))
		}
	}
	for name := range c.tenants {
		if t := r.tenants[name]; t != nil {
			emit(tenantRecord(t))
		}
	}
	for name := range c.swapped {
		t := r.tenants[name]
		if t == nil {
			continue
		}
		emit(record{Table: &savedTable{T: name, ID: t.tableID}})
		for p, id := range t.routes.all {
			emit(record{Route: route(savedRoute{T: name, P: p, Pol: id, O: t.origins.of(p), U: t.usids[p]})})
		}
	}
	for _, rc := range c.routeChanges(r) {
		if rc.after != nil {
			emit(record{Route: route(savedRoute{T: rc.tenant, P: rc.prefix, Pol: rc.after.id, O: rc.t.origins.of(rc.prefix), U: rc.t.usids[rc.prefix]})})
		} else {
			emit(record{RouteDel: route(savedRoute{T: rc.tenant, P: rc.prefix})})
		}
	}
	for addr := range c.sids {
		if sd, ok := r.sids[addr]; ok {
			emit(record{SID: &sd})
		} else {
			addr := addr
			emit(record{SIDDel: &addr})
		}
	}
	for name, b := range c.tenants {
		if b.had && r.tenants[name] == nil {
			emit(record{TenantDel: name})
		}
	}
	for name, b := range c.named { // after the routes that used it
		if b.had && r.named[name] == nil {
			emit(record{NamedDel: name})
		}
	}
	for p := range c.pols {
		if p.refs == 0 && p.group == nil && !slices.Contains(c.newPols, p) {
			emit(record{PolicyDel: p.id})
		}
	}
}

// makeJournalLine is the journal line of generation gen holding recs (size: about how many).
func makeJournalLine(gen uint64, recs func(emit func(record)), size int) ([]byte, error) {
	return appendJournalLine(make([]byte, 0, 256+64*size), gen, recs)
}

// appendJournal saves one commit: line b (makeJournalLine's answer, with its error err) appended to the
// journal, synced. The journal is folded into a new snapshot once it outgrows it (compactIfLarge).
func (s *Store) appendJournal(b []byte, err error) error {
	if err != nil {
		return err
	}
	f, err := os.OpenFile(s.journalPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	s.journalBytes += int64(len(b) + 1)
	return nil
}

// compactIfLarge runs after each commit. A journal grown past the last snapshot's size is due to be
// folded into a new snapshot: CompactIfDue does it once commits pause (the controller calls it), so
// that a bulk load does not write the whole state again and again on its way. Past four times the
// snapshot the commit folds it itself: the journal stays bounded when nothing pauses.
func (s *Store) compactIfLarge() error {
	if s.journalBytes < 1<<20 || s.journalBytes < s.snapshotBytes {
		return nil
	}
	if s.journalBytes < 4*s.snapshotBytes {
		return nil // due (CompactDue)
	}
	return s.Compact()
}

// CompactDue: the journal has outgrown the snapshot (CompactIfDue would fold it).
func (s *Store) CompactDue() bool {
	return s.journalBytes >= 1<<20 && s.journalBytes >= s.snapshotBytes
}

// CompactIfDue folds the journal into a new snapshot if it is due; nothing once the store is closed.
// yield, polled while the snapshot is written, gives the fold up (ErrCompactYielded, nothing
// changed) as soon as it says true: a commit waiting for the store goes first.
func (s *Store) CompactIfDue(yield func() bool) error {
	s.maint.Lock()
	defer s.maint.Unlock()
	if s.closed || !s.CompactDue() {
		return nil
	}
	return s.compact(yield)
}

// ErrCompactYielded: CompactIfDue gave the fold up for a waiting commit.
var ErrCompactYielded = errors.New("snapshot given up for a waiting commit")

// Compact writes the whole running state as a new snapshot and empties the journal.
func (s *Store) Compact() error { return s.compact(nil) }

// compact is Compact, given up when yield (if not nil) says true (every 4096 records).
func (s *Store) compact(yield func() bool) error {
	tmp := s.snapshotPath() + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var line []byte
	n := 0
	write := func(rec record) error {
		if n++; yield != nil && n%4096 == 0 && yield() {
			return ErrCompactYielded
		}
		var err error
		if line, err = appendRecord(line[:0], &rec); err == nil {
			line = append(line, '\n')
			_, err = bw.Write(line)
		}
		return err
	}
	if s.gen > 0 {
		err = write(record{Gen: s.gen})
	}
	if err == nil {
		err = s.rt.records(write)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && yield != nil && yield() {
		err = ErrCompactYielded
	}
	if err == nil {
		err = f.Sync()
	}
	var size int64
	if st, serr := f.Stat(); serr == nil {
		size = st.Size()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, s.snapshotPath()); err != nil {
		return err
	}
	// The journal's commits are all in the snapshot now. A crash right here leaves them in both;
	// replaying them again is harmless (records set, they do not add).
	if err := os.Remove(s.journalPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	s.snapshotBytes, s.journalBytes = size, 0
	return nil
}
