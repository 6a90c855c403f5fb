package cli

// apply.go: `seg6x apply -f FILE`: the file is the whole desired state.

import (
	"context"
	"fmt"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"
	"github.com/seg6x/seg6x/internal/config"
	"github.com/spf13/cobra"
)

func applyCmd() *cobra.Command {
	var file string
	var dryRun bool
	c := &cobra.Command{
		Use:   "apply -f FILE [--dry-run]",
		Short: "Make the data plane exactly what a YAML file describes (idempotent, all or nothing)",
		Long: `Read FILE ("-" for stdin) and make it the whole running state: objects in the file are added or
updated, objects not in it are removed. Applying the same file twice changes nothing. Nothing is
written unless the whole file is valid. --dry-run validates and prints the diff only. A tenant whose
routes differ gets its whole route table swapped in one step: traffic sees the old table or the new.
With a daemon running this is the same API call the daemon makes for --config at start and SIGHUP.
"seg6x config export" prints the running state as such a file (applying it changes nothing).

File format (every key optional except where an object needs it):
  interfaces: [{name: eth0}, {name: eth1, mode: generic}]
  tenants:
    - {name: blue, table: 100, ports: [{dev: eth1, vlan: 100}]}
  routes:
    - {tenant: blue, prefix: 198.18.2.0/24, mode: encap, segs: [fc00:2::64], src: "fc00:1::1", hoplimit: 64}
  sids:
    - {sid: "fc00:1::64", action: End.DT4, tenant: blue, vlan: 100}
    - {sid: "fc00:1::65", action: End.DX4, nh4: 198.18.9.2}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" {
				return fmt.Errorf("-f FILE is required")
			}
			desired, err := config.Load(file)
			if err != nil {
				return err
			}
			c, done, err := connect()
			if err != nil {
				return err
			}
			defer done()
			rep, err := c.ApplyState(context.Background(), &pb.ApplyStateRequest{State: api.StateToPB(&desired), DryRun: dryRun})
			if err != nil {
				return apiErr(err)
			}
			return printDiff(api.DiffFromPB(rep.GetDiff()))
		},
	}
	c.Flags().StringVarP(&file, "file", "f", "", "YAML file with the desired state (- for stdin)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "validate and print the changes without applying them")
	return c
}
