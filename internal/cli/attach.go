package cli

// attach.go: `seg6x attach` and `seg6x detach`.

import (
	"errors"
	"fmt"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

func attachCmd() *cobra.Command {
	var mode, role string
	c := &cobra.Command{
		Use:   "attach DEV... [--role fabric|access|auto] [--mode native|generic]",
		Short: "Attach the seg6x XDP program to interfaces, on their side of the SR domain boundary",
		Long: `Attach the seg6x XDP program to each DEV. Every interface the fast path should forward to must
be attached (it becomes a redirect target). On veth, the peer of an attached device needs an XDP
program or GRO enabled to receive redirected frames (a kernel rule for veth).

--role says which side of the SR domain boundary the interface's frames come from:
  fabric   local SIDs are processed (End, End.X, End.T, End.DX*, End.DT*); tenant VLANs configured on
           it (seg6x tenant ... vlan N dev DEV) are still access, per VLAN
  access   tenant traffic only: never processed as a local SID; IPv6 addressed to a local SID or
           into the domain's locators (seg6x domain), or carrying an SRH, is dropped and counted
  auto     the default: access when a tenant has a port on the interface, fabric otherwise
Without --role, an interface already attached keeps its role. "seg6x show interfaces" shows the
side of every (interface, VLAN) and why. Examples:
  seg6x attach eth0 --role fabric
  seg6x attach eth1 eth2 --role access`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if mode != "native" && mode != "generic" {
				return fmt.Errorf("--mode: %q is not native or generic", mode)
			}
			if role != "" && role != state.RoleAuto && role != state.RoleFabric && role != state.RoleAccess {
				return fmt.Errorf("--role: %q is not fabric, access or auto", role)
			}
			roles := map[string]string{}
			if role == "" {
				cur, _, err := fetchState()
				if err != nil {
					return err
				}
				for _, it := range cur.Interfaces {
					roles[it.Name] = it.Role
				}
			}
			ops := make([]state.Op, len(args))
			for i, dev := range args {
				r := role
				if r == "" {
					r = roles[dev]
				}
				ops[i] = state.Op{Kind: state.OpReplace, Interface: &state.Interface{Name: dev, Mode: mode, Role: r}}
			}
			return commit(ops...)
		},
	}
	c.Flags().StringVar(&mode, "mode", "native", "XDP attach mode: native (driver) or generic (skb)")
	c.Flags().StringVar(&role, "role", "", "side of the SR domain boundary: fabric, access or auto (default: keep, or auto)")
	return c
}

func detachCmd() *cobra.Command {
	var all, purge bool
	c := &cobra.Command{
		Use:   "detach [DEV...] [--all [--purge]]",
		Short: "Detach the XDP program from interfaces (--all: every one; --purge: also remove all state)",
		Long: `Detach the seg6x program from each DEV; traffic on it goes back to the kernel's own stack.
--all detaches every interface. --all --purge also removes every tenant, route and SID, the pinned
maps and the saved state (only when no daemon runs: a daemon is stopped with --cleanup instead).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if purge && !all {
				return fmt.Errorf("--purge needs --all")
			}
			if len(args) == 0 && !all {
				return fmt.Errorf("name interfaces to detach, or --all")
			}
			if purge {
				return purgeAll()
			}
			if all {
				cur, _, err := fetchState()
				if err != nil {
					return err
				}
				for _, it := range cur.Interfaces {
					args = append(args, it.Name)
				}
			}
			ops := make([]state.Op, len(args))
			for i, dev := range args {
				ops[i] = state.Op{Kind: state.OpDelete, Interface: &state.Interface{Name: dev}}
			}
			return commit(ops...)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "detach every interface")
	c.Flags().BoolVar(&purge, "purge", false, "with --all: also delete all objects, pinned maps and state")
	return c
}

// purgeAll removes the instance entirely. A running daemon owns it: stop that one with --cleanup.
func purgeAll() error {
	if st, err := dataplane.OpenStore(g.dir, state.HostEnv{}, state.OpenOptions{NoWait: true}); err == nil {
		st.Close()
	} else if errors.Is(err, state.ErrLocked) {
		return fmt.Errorf("%s is in use (a daemon?): stop the daemon with --cleanup, or stop it and purge then", g.dir)
	}
	// An instance whose maps have another layout cannot even be opened; purging it is still right.
	if err := dataplane.Purge(g.dir); err != nil {
		return err
	}
	fmt.Println("purged", g.dir)
	return nil
}
