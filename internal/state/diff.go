package state

// diff.go: what a commit changed (or would change), one line per object, as `apply --dry-run` and
// every change command report it.

import (
	"encoding/json"
	"fmt"
)

// Diff lists objects added, changed and removed, each as a one-line description. A commit that asked
// for at most N lines per list (CommitOptions.DiffLimit: a bulk load) counts the rest in More*.
type Diff struct {
	Added       []string `json:"added"`
	Changed     []string `json:"changed"`
	Removed     []string `json:"removed"`
	MoreAdded   int      `json:"more_added,omitempty"`
	MoreChanged int      `json:"more_changed,omitempty"`
	MoreRemoved int      `json:"more_removed,omitempty"`
}

// Counts are how many objects were added, changed and removed, listed or not.
func (d *Diff) Counts() (added, changed, removed int) {
	return len(d.Added) + d.MoreAdded, len(d.Changed) + d.MoreChanged, len(d.Removed) + d.MoreRemoved
}

// Empty reports whether applying the diff changes nothing.
func (d *Diff) Empty() bool {
	a, c, r := d.Counts()
	return a+c+r == 0
}

func (d *Diff) String() string {
	if d.Empty() {
		return "no changes\n"
	}
	out := ""
	for _, l := range []struct {
		mark  string
		lines []string
		more  int
	}{{"+ ", d.Added, d.MoreAdded}, {"~ ", d.Changed, d.MoreChanged}, {"- ", d.Removed, d.MoreRemoved}} {
		for _, s := range l.lines {
			out += l.mark + s + "\n"
		}
		if l.more > 0 {
			out += fmt.Sprintf("%s... and %d more\n", l.mark, l.more)
		}
	}
	return out
}

func same(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
