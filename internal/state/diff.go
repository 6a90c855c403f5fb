package state

// diff.go: what a commit changed (or would change), one line per object, as `apply --dry-run` and
// every change command report it.

import "encoding/json"

// Diff lists objects added, changed and removed, each as a one-line description.
type Diff struct {
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
}

// Empty reports whether applying the diff changes nothing.
func (d *Diff) Empty() bool { return len(d.Added)+len(d.Changed)+len(d.Removed) == 0 }

func (d *Diff) String() string {
	if d.Empty() {
		return "no changes\n"
	}
	out := ""
	for _, s := range d.Added {
		out += "+ " + s + "\n"
	}
	for _, s := range d.Changed {
		out += "~ " + s + "\n"
	}
	for _, s := range d.Removed {
		out += "- " + s + "\n"
	}
	return out
}

func same(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
