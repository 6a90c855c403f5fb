package cli

// attach.go: `seg6x attach` and `seg6x detach`.

import (
	"errors"
	"fmt"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

func attachCmd() *cobra.Command {
	var mode, role string
	c := &cobra.Command{
		Use:   "attach DEV... [--role fabric|access|auto] [--mode xdp|generic|tc]",
		Short: "Attach the seg6x program (XDP or tc) to interfaces, on their side of the SR domain boundary",
		Long: `Attach the seg6x program to each DEV. Every interface the fast path should forward to must be
attached (it becomes a redirect target).

--mode picks the hook, per interface:
  xdp      the default (also "native"): XDP in the driver, frames before the kernel's stack; the
           fastest per packet, for network nodes. On veth, the peer of an attached device needs an
           XDP program or GRO enabled to receive redirected frames (a kernel rule for veth).
  generic  XDP on skbs, for devices without native XDP (slow; for tests)
  tc       tcx ingress, skbs after GRO: for hypervisors, where VMs send and receive 64 KB TSO/GRO
           aggregates; they are encapsulated and decapsulated whole and segmented only at the wire.
           See docs/hypervisor.md.
The same behaviors, maps and state serve both hooks; an attached interface moves between them with
another attach (the new hook is attached before the old one is removed). Before attaching natively,
attach reads what the driver says it can do with XDP (xdp-features; "seg6x show interfaces" lists
them) and refuses a device without native XDP with what to do instead; an MTU beyond a page (jumbo
frames) needs --mode tc for now (docs/fabric.md).

--role says which side of the SR domain boundary the interface's frames come from:
  fabric   local SIDs are processed (End, End.X, End.T, End.DX*, End.DT*); tenant VLANs configured on
           it (seg6x tenant ... vlan N dev DEV) are still access, per VLAN
  access   tenant traffic only: never processed as a local SID; IPv6 addressed to a local SID or
           into the domain's locators (seg6x domain), or carrying an SRH, is dropped and counted
  auto     the default: access when a tenant has a port on the interface, fabric otherwise
Without --role (--mode), an interface already attached keeps its role (mode). "seg6x show interfaces" shows the
side of every (interface, VLAN) and why. Examples:
  seg6x attach eth0 --role fabric
  seg6x attach eth1 eth2 --role access
  seg6x attach vm1 vm2 --mode tc --role access     (a hypervisor's VM ports)`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if mode != "" {
				mode = model.NormalizeMode(mode)
				if mode != model.ModeNative && mode != model.ModeGeneric && mode != model.ModeTC {
					return fmt.Errorf("--mode: %q is not xdp, generic or tc", mode)
				}
			}
			if role != "" && role != model.RoleAuto && role != model.RoleFabric && role != model.RoleAccess {
				return fmt.Errorf("--role: %q is not fabric, access or auto", role)
			}
			// Without --role or --mode, an attached interface keeps its own.
			cur := map[string]model.Interface{}
			if role == "" || mode == "" {
				st, _, err := fetchState()
				if err != nil {
					return err
				}
				for _, it := range st.Interfaces {
					cur[it.Name] = it
				}
			}
			ops := make([]state.Op, len(args))
			for i, dev := range args {
				r, m := role, mode
				if r == "" {
					r = cur[dev].Role
				}
				if m == "" {
					m = cur[dev].Mode
				}
				ops[i] = state.Op{Kind: model.OpReplace, Interface: &model.Interface{Name: dev, Mode: m, Role: r}}
			}
			return commit(ops...)
		},
	}
	c.Flags().StringVar(&mode, "mode", "", "hook: xdp (native, driver), generic (XDP on skbs) or tc (tcx ingress, keeps GSO aggregates) (default: keep, or xdp)")
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
				ops[i] = state.Op{Kind: model.OpDelete, Interface: &model.Interface{Name: dev}}
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
