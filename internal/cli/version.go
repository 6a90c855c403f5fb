package cli

// version.go: `seg6x version` (and --version): the release, the commit and time the binary was built
// from and at, and the layout of the BPF maps it pins (an upgrade across layouts moves the maps).

import (
	"fmt"

	"github.com/seg6x/seg6x/internal/buildinfo"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/spf13/cobra"
)

// buildInfo is this binary's build information.
func buildInfo() buildinfo.Info { return buildinfo.Get(dataplane.MapLayout) }

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "The release, commit and map layout of this binary",
		Long: `Prints the release, the git commit the binary was built from (and whether the work tree had
changes), when it was built, the layout of the BPF maps it pins (an upgrade to another layout moves
the maps: docs/operations.md) and the Go version. --json for scripts. Also: seg6x --version. The
daemon's "seg6x status" reports its own release and commit.`,
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
