package cli

// apply.go: `seg6x apply -f FILE`: the file is the whole desired state.

import (
	"fmt"

	"github.com/seg6x/seg6x/internal/config"
	"github.com/seg6x/seg6x/internal/state"
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
written unless the whole file is valid. --dry-run validates and prints the diff only.

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
			st, err := state.Open(g.dir, state.HostEnv{})
			if err != nil {
				return err
			}
			defer st.Close()
			d, err := st.Apply(desired, dryRun)
			if err != nil {
				return err
			}
			return printDiff(d)
		},
	}
	c.Flags().StringVarP(&file, "file", "f", "", "YAML file with the desired state (- for stdin)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "validate and print the changes without applying them")
	return c
}
