// Package buildinfo is what a seg6x binary says of itself (`seg6x version`, the daemon's Status):
// the release, the commit and time it was built from and at, and the map layout it pins.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version, Commit and BuildDate are set at build time (the Makefile's -ldflags "-X
// github.com/seg6x/seg6x/internal/buildinfo.Commit=..."): the release (a tagged build's tag), the
// git commit (with -dirty when the work tree had changes) and the UTC time of the build. Without
// them the commit comes from what the Go toolchain recorded, if anything.
var (
	Version   = "0.2.0"
	Commit    = ""
	BuildDate = ""
)

// Info is what `seg6x version --json` prints.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`     // "" when the build recorded none
	Modified  bool   `json:"modified"`   // the work tree had changes the commit does not hold
	BuildDate string `json:"build_date"` // when the binary was built (UTC; "" when not recorded)
	MapLayout string `json:"map_layout"`
	Go        string `json:"go"`
}

// Get is this binary's Info; mapLayout is the data plane's (dataplane.MapLayout, passed in so that
// this package imports nothing of seg6x).
func Get(mapLayout string) Info {
	b := Info{Version: Version, Commit: Commit, BuildDate: BuildDate, MapLayout: mapLayout, Go: runtime.Version()}
	if b.Commit != "" {
		b.Commit, b.Modified = strings.CutSuffix(b.Commit, "-dirty")
		return b
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	return b
}

// String is the text `seg6x version` and `seg6x --version` print.
func (b Info) String() string {
	commit := b.Commit
	if commit == "" {
		commit = "unknown"
	}
	if b.Modified {
		commit += " (modified)"
	}
	built := b.BuildDate
	if built == "" {
		built = "-"
	}
	return fmt.Sprintf("seg6x %s\ncommit %s\nbuilt %s\nmap layout %s\n%s\n", b.Version, commit, built, b.MapLayout, b.Go)
}
