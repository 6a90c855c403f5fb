package cli

// version.go: `seg6x version` (and --version): the release, the commit and build time the binary was
// built from, and the layout of the BPF maps it pins (an upgrade across layouts moves the maps).

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/spf13/cobra"
)

// Version, Commit and BuildDate are set at build time (the Makefile's -ldflags "-X
// github.com/seg6x/seg6x/internal/cli.Version=..."): the release ("dev" when not set), the git commit
// and the UTC time of the build. Without them the commit comes from what the Go toolchain recorded.
var (
	Version   = "dev"
	Commit    = ""
	BuildDate = ""
)

// BuildInfo is what `seg6x version --json` prints.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`     // the git commit built ("" when the build had no VCS information)
	Modified  bool   `json:"modified"`   // the work tree had changes the commit does not hold
	BuildDate string `json:"build_date"` // when the binary was built (UTC; "" when not recorded)
	MapLayout string `json:"map_layout"`
	Go        string `json:"go"`
}

// buildInfo reads what the Go toolchain recorded in the binary.
func buildInfo() BuildInfo {
	b := BuildInfo{Version: Version, Commit: Commit, BuildDate: BuildDate, MapLayout: dataplane.MapLayout, Go: runtime.Version()}
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

func (b BuildInfo) String() string {
	commit := b.Commit
	if commit == "" {
		commit = "unknown"
	}
	if b.Modified {
		commit += " (modified)"
	}
	return fmt.Sprintf("seg6x %s\ncommit %s\nbuilt %s\nmap layout %s\n%s\n", b.Version, commit,
		orDash(b.BuildDate), b.MapLayout, b.Go)
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "The release, commit and map layout of this binary",
		Long: `Prints the release, the git commit the binary was built from (and whether the work tree had
changes), when it was built, the layout of the BPF maps it pins (an upgrade to another layout moves
the maps: docs/operations.md) and the Go version. --json for scripts. Also: seg6x --version.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if g.jsonOut {
				return printJSON(buildInfo())
			}
			fmt.Print(buildInfo().String())
			return nil
		},
	}
}
