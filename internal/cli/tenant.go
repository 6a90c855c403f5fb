package cli

// tenant.go: `seg6x tenant add|replace|del|show`.

import (
	"fmt"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

func tenantCmd() *cobra.Command {
	c := &cobra.Command{Use: "tenant", Short: "Tenants (VRFs): a routing table and the (interface, VLAN) ports of their traffic"}
	add := func(replace bool) *cobra.Command {
		verb := "add"
		if replace {
			verb = "replace"
		}
		return &cobra.Command{
			Use:   verb + " NAME [table ID] [dev DEV [vlan VID]]... [gateway ADDR]... [mss-clamp auto|N|off]",
			Short: verb + " a tenant",
			Long: `Define tenant NAME. "table" is the kernel routing table holding its routes (used by End.DT4/6/46
SIDs that name the tenant): its own, never another tenant's nor the kernel's default, main or local
(253-255); leave it out for a tenant without one. Each "dev" adds a port where its traffic arrives;
a "vlan" pairs with the dev in the same position (no vlan = untagged).

"gateway" (up to one IPv4 and one IPv6 address, the one the tenant's hosts route through) is the
source of the ICMP errors the fast path sends them: a packet too big for its tunnel (IPv4 with DF,
or IPv6) is answered with "fragmentation needed" / "packet too big" carrying the tunnel MTU, so the
host learns the path MTU. Without a gateway of its family such a packet is dropped unanswered
(counted as DROP_TOO_BIG).

"mss-clamp" lowers the MSS option of the tenant's TCP SYNs at the headend: auto fits the tunnel
each SYN takes (its MTU minus the IP and TCP headers), N caps it at N bytes, off (the default)
leaves it. See docs/mtu.md. Example:
  seg6x tenant ` + verb + ` blue table 100 vlan 100 dev eth1 gateway 198.18.1.1 mss-clamp auto
  seg6x tenant ` + verb + ` red table 200 dev eth1 vlan 200 dev eth2 vlan 200 gateway 2001:db8:200::1`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				t, err := parseTenant(args[0], args[1:])
				if err != nil {
					return err
				}
				return commit(state.Op{Kind: addOrReplace(replace), Tenant: &t})
			},
		}
	}
	del := &cobra.Command{
		Use:   "del NAME",
		Short: "delete a tenant (its routes must be deleted first)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return commit(state.Op{Kind: model.OpDelete, Tenant: &model.Tenant{Name: args[0]}})
		},
	}
	showC := &cobra.Command{Use: "show", Short: "list tenants", Args: cobra.NoArgs}
	var so showOptions
	so.flags(showC)
	showC.RunE = func(*cobra.Command, []string) error { return show("tenants", so) }
	c.AddCommand(add(false), add(true), del, showC)
	return c
}

func parseTenant(name string, args []string) (model.Tenant, error) {
	t := model.Tenant{Name: name}
	m, err := kv(args, []string{"table", "dev", "vlan", "gateway", "mss-clamp"}, "dev", "vlan", "gateway")
	if err != nil {
		return t, err
	}
	for _, g := range m["gateway"] {
		a, err := parseAddr("gateway", g)
		if err != nil {
			return t, err
		}
		t.Gateway = append(t.Gateway, a)
	}
	t.MSSClamp = one(m, "mss-clamp")
	if v := one(m, "table"); v != "" {
		if t.Table, err = parseU32("table", v); err != nil {
			return t, err
		}
		if t.Table == 0 {
			return t, fmt.Errorf("table: %s", model.ZeroTable)
		}
	}
	if len(m["vlan"]) > len(m["dev"]) {
		return t, fmt.Errorf("vlan: %d vlans for %d devs; each vlan pairs with a dev", len(m["vlan"]), len(m["dev"]))
	}
	for i, dev := range m["dev"] {
		p := model.Port{Dev: dev}
		if i < len(m["vlan"]) {
			if p.VLAN, err = parseVLAN(m["vlan"][i]); err != nil {
				return t, err
			}
		}
		t.Ports = append(t.Ports, p)
	}
	return t, nil
}
