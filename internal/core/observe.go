package core

// observe.go: what every commit leaves as it ends, whoever made it: a Record for the daemon's audit
// log (OnCommit), and counters by origin and result with a latency histogram for the metrics endpoint
// (CommitStats). A few additions per commit, whatever its size.

import (
	"slices"
	"sync"
	"time"

	"github.com/seg6x/seg6x/internal/model"
)

// Results of a commit (Record.Result, the result label of seg6x_commits_total).
const (
	ResultOK      = "ok"      // applied (its diff may be empty)
	ResultDryRun  = "dry_run" // checked, not applied
	ResultInvalid = "invalid" // refused: a bad object, a reference or an ownership conflict (KindInvalid)
	ResultStale   = "stale"   // refused: made for another generation (KindStale)
	ResultError   = "error"   // failed: the data plane or the state file could not be written, all undone (KindInternal)
)

// CommitResults are the results, in the order metrics list them.
var CommitResults = []string{ResultOK, ResultDryRun, ResultInvalid, ResultStale, ResultError}

// CommitOrigins are the front ends that commit (Record.Origin): the API and CLI, the daemon's
// --config file and interface watcher, the kernel mirror, BGP. Metrics list each from the start.
var CommitOrigins = []string{"api", "config", "links", "kernel", "bgp"}

// CommitBuckets are the upper bounds, in seconds, of the commit latency histogram: from a single
// route (well under a millisecond) to a bulk load of a million routes (seconds).
var CommitBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Record is one commit as it ended.
type Record struct {
	Origin     string        // who made it: Options.Via, else Options.Origin ("api", "kernel", "bgp")
	Result     string        // Result* above
	DryRun     bool          // asked as a dry run
	Generation uint64        // the running generation after it (the new one when it applied a change)
	Diff       *model.Diff   // what it changed or would change (nil when refused)
	Duration   time.Duration // from the request to its end, the lock held (not the wait for it)
	Err        error         // why it was refused or failed
}

// name is how metrics and the audit line call the commit's front end.
func (o Options) name() string {
	if o.Via != "" {
		return o.Via
	}
	return o.Origin.String()
}

func resultOf(err error, dryRun bool) string {
	switch {
	case err == nil && dryRun:
		return ResultDryRun
	case err == nil:
		return ResultOK
	}
	switch KindOf(err) {
	case KindInvalid:
		return ResultInvalid
	case KindStale:
		return ResultStale
	}
	return ResultError
}

// OnCommit calls f after every commit (applied, dry run, refused or failed), outside the lock, in
// commit order. f must not block.
func (c *Controller) OnCommit(f func(Record)) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	c.audits = append(c.audits, f)
}

func (c *Controller) audit(recs []Record) {
	if len(recs) == 0 {
		return
	}
	c.subMu.Lock()
	fs := c.audits
	c.subMu.Unlock()
	for _, r := range recs {
		for _, f := range fs {
			f(r)
		}
	}
}

// CommitCount is how many commits of one origin ended with one result.
type CommitCount struct {
	Origin, Result string
	N              uint64
}

// CommitLatency is the latency histogram of one origin's applied commits (ResultOK).
type CommitLatency struct {
	Origin  string
	Count   uint64
	Sum     float64            // seconds
	Buckets map[float64]uint64 // by upper bound (CommitBuckets): commits that took at most that long
}

type commitStats struct {
	mu     sync.Mutex
	counts map[[2]string]uint64 // origin, result
	lat    map[string]*latency  // by origin
}

type latency struct {
	n       uint64
	sum     float64
	buckets []uint64 // per bucket, not cumulative
}

func (s *commitStats) add(r Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts == nil {
		s.counts, s.lat = map[[2]string]uint64{}, map[string]*latency{}
	}
	s.counts[[2]string{r.Origin, r.Result}]++
	if r.Result != ResultOK {
		return
	}
	l := s.lat[r.Origin]
	if l == nil {
		l = &latency{buckets: make([]uint64, len(CommitBuckets))}
		s.lat[r.Origin] = l
	}
	sec := r.Duration.Seconds()
	l.n++
	l.sum += sec
	if i, _ := slices.BinarySearch(CommitBuckets, sec); i < len(CommitBuckets) {
		l.buckets[i]++
	}
}

// CommitStats are the commits counted since the controller started: every known origin with every
// result (zero included), then any other origin seen; and the latency of each origin's applied commits.
func (c *Controller) CommitStats() ([]CommitCount, []CommitLatency) {
	s := &c.commits
	s.mu.Lock()
	defer s.mu.Unlock()
	origins := slices.Clone(CommitOrigins)
	for k := range s.counts {
		if !slices.Contains(origins, k[0]) {
			origins = append(origins, k[0])
		}
	}
	slices.Sort(origins[len(CommitOrigins):])
	var counts []CommitCount
	var lats []CommitLatency
	for _, o := range origins {
		for _, r := range CommitResults {
			counts = append(counts, CommitCount{Origin: o, Result: r, N: s.counts[[2]string{o, r}]})
		}
		out := CommitLatency{Origin: o, Buckets: make(map[float64]uint64, len(CommitBuckets))}
		var cum uint64
		for i, b := range CommitBuckets {
			if l := s.lat[o]; l != nil {
				cum += l.buckets[i]
			}
			out.Buckets[b] = cum
		}
		if l := s.lat[o]; l != nil {
			out.Count, out.Sum = l.n, l.sum
		}
		lats = append(lats, out)
	}
	return counts, lats
}
