package cli

// config.go: `seg6x config export`: the running state as the YAML file that `seg6x apply -f` takes.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seg6x/seg6x/internal/config"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/spf13/cobra"
)

func configCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "The running state as a config file (for seg6x apply -f and seg6x daemon --config)",
		Args:  cobra.NoArgs,
	}
	c.AddCommand(configExportCmd())
	return c
}

func configExportCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "export [-o FILE]",
		Short: "Print the running state as YAML that seg6x apply -f takes back unchanged",
		Long: `Print the running state in the format of "seg6x apply -f" (see "seg6x apply --help"): options,
domain, interfaces, tenants, routes and SIDs. Applying it changes nothing:

  seg6x config export > seg6x.yaml
  seg6x apply -f seg6x.yaml --dry-run      # prints "no changes"

Use it to start a config file from what was set with the CLI or the API (then run the daemon with
--config seg6x.yaml), to copy a node's state to another, or to keep and review it in version control.

Left out: what seg6x assigns or finds when it applies a file (policy, table and SID ids, ifindexes,
the source address the kernel chose, a route's egress and tunnel MTU: "seg6x show" has them), and
objects another front end owns, such as the kernel mirror's (seg6x daemon --mirror-kernel; origin
"kernel" in "seg6x show"), which follow the kernel's routes: a file neither sets nor removes them. Defaults are written out
(mode: native, role: auto, route mode: encap, hoplimit: 64).

-o FILE writes the file instead of standard output (mode 0600, replaced whole: a reader never sees
half a file).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if g.jsonOut {
				return errors.New(`config export writes YAML (the format of seg6x apply -f); "seg6x show --json" gives the state as JSON`)
			}
			cur, gen, err := fetchState()
			if err != nil {
				return err
			}
			b, err := exportYAML(cur, gen)
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err = os.Stdout.Write(b)
				return err
			}
			return writeFileAtomic(out, b)
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "write to FILE instead of standard output")
	return c
}

// exportYAML is the file that makes a running state (generation gen) again: the state without the
// kernel mirror's objects, under a comment that says what it is.
func exportYAML(cur model.State, gen uint64) ([]byte, error) {
	file, left := configOwned(cur)
	b, err := config.Marshal(file)
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("# seg6x config export: the running state at generation %d (seg6x apply -f this file changes nothing)\n", gen)
	if left > 0 {
		head += fmt.Sprintf("# left out: %d objects of the kernel mirror (they follow the kernel's routes)\n", left)
	}
	return append([]byte(head), b...), nil
}

// configOwned is s with only the objects a config file owns: other origins' tenants (the kernel
// mirror's, BGP's), their routes and SIDs are left out; it also says how many were.
func configOwned(s model.State) (model.State, int) {
	out := s
	out.Tenants, out.Routes, out.SIDs = nil, nil, nil
	kernel := map[string]bool{}
	for _, t := range s.Tenants {
		if t.Origin != model.OriginConfig {
			kernel[t.Name] = true
			continue
		}
		out.Tenants = append(out.Tenants, t)
	}
	for _, r := range s.Routes {
		if !kernel[r.Tenant] && r.Origin == model.OriginConfig {
			out.Routes = append(out.Routes, r)
		}
	}
	for _, sd := range s.SIDs {
		if sd.Origin == model.OriginConfig {
			out.SIDs = append(out.SIDs, sd)
		}
	}
	return out, len(s.Tenants) + len(s.Routes) + len(s.SIDs) - len(out.Tenants) - len(out.Routes) - len(out.SIDs)
}

// writeFileAtomic replaces path with b (through a temporary file in the same directory, mode 0600).
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a successful rename there is nothing left to remove
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}
