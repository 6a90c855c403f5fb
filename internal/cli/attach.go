package cli

// attach.go: `seg6x attach` and `seg6x detach`.

import (
	"fmt"
	"os"
	"slices"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
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
			return change(func(s *state.State) error {
				for _, dev := range args {
					i := slices.IndexFunc(s.Interfaces, func(it state.Interface) bool { return it.Name == dev })
					if i >= 0 {
						s.Interfaces[i].Mode = mode
						continue
					}
					s.Interfaces = append(s.Interfaces, state.Interface{Name: dev, Mode: mode})
				}
				return nil
			})
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
maps and the state file: use it before installing a seg6x whose map layout changed.`,
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
			return change(func(s *state.State) error {
				if all {
					s.Interfaces = nil
					return nil
				}
				for _, dev := range args {
					i := slices.IndexFunc(s.Interfaces, func(it state.Interface) bool { return it.Name == dev })
					if i < 0 {
						return fmt.Errorf("interface %q: not attached", dev)
					}
					s.Interfaces = slices.Delete(s.Interfaces, i, i+1)
				}
				return nil
			})
		},
	}
	c.Flags().BoolVar(&all, "all", false, "detach every interface")
	c.Flags().BoolVar(&purge, "purge", false, "with --all: also delete all objects, pinned maps and state")
	return c
}

// purgeAll empties the state (which detaches everything), then removes the pins and the state file.
func purgeAll() error {
	if err := change(func(s *state.State) error { *s = state.State{}; return nil }); err != nil {
		// Maps from an incompatible version cannot be opened; removing the pins is still right.
		fmt.Fprintln(os.Stderr, "seg6x: emptying state:", err, "(removing pins anyway)")
	}
	pins := dataplane.PinDir(g.dir)
	_ = os.RemoveAll(pins + "/links")
	entries, _ := os.ReadDir(pins)
	for _, e := range entries {
		_ = os.RemoveAll(pins + "/" + e.Name())
	}
	_ = unix.Unmount(pins, unix.MNT_DETACH)
	_ = os.Remove(g.dir + "/state.json")
	fmt.Println("purged", g.dir)
	return nil
}
