package cli

// attach.go: `seg6x attach` and `seg6x detach`.

import (
	"errors"
	"fmt"

	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

func attachCmd() *cobra.Command {
	var mode string
	c := &cobra.Command{
		Use:   "attach DEV...",
		Short: "Attach the seg6x XDP program to interfaces (fabric and tenant-facing alike)",
		Long: `Attach the seg6x XDP program to each DEV. Every interface the fast path should forward to must
be attached (it becomes a redirect target). On veth, the peer of an attached device needs an XDP
program or GRO enabled to receive redirected frames (a kernel rule for veth).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if mode != "native" && mode != "generic" {
				return fmt.Errorf("--mode: %q is not native or generic", mode)
			}
			ops := make([]state.Op, len(args))
			for i, dev := range args {
				ops[i] = state.Op{Kind: state.OpReplace, Interface: &state.Interface{Name: dev, Mode: mode}}
			}
			return commit(ops...)
		},
	}
	c.Flags().StringVar(&mode, "mode", "native", "XDP attach mode: native (driver) or generic (skb)")
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
	if st, err := state.OpenWith(g.dir, state.HostEnv{}, state.OpenOptions{NoWait: true}); err == nil {
		st.Close()
	} else if errors.Is(err, state.ErrLocked) {
		return fmt.Errorf("%s is in use (a daemon?): stop the daemon with --cleanup, or stop it and purge then", g.dir)
	}
	// An instance whose maps have another layout cannot even be opened; purging it is still right.
	if err := state.Purge(g.dir); err != nil {
		return err
	}
	fmt.Println("purged", g.dir)
	return nil
}
