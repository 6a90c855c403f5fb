package cli

// sid.go: `seg6x sid add|replace|del|show`: local SIDs and their endpoint behaviors.

import (
	"fmt"
	"strings"

	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

func sidCmd() *cobra.Command {
	c := &cobra.Command{Use: "sid", Short: "Local SIDs: " + strings.Join(state.Actions, ", ")}
	add := func(replace bool) *cobra.Command {
		verb := map[bool]string{false: "add", true: "replace"}[replace]
		return &cobra.Command{
			Use:   verb + " SID action ACTION [nh4 ADDR | nh6 ADDR | table ID | tenant NAME] [vlan VID]",
			Short: verb + " a local SID",
			Long: "Bind an endpoint behavior to SID (an IPv6 address, matched exactly).\n" + state.BehaviorHelp() + `
Example:
  seg6x sid ` + verb + ` fc00:1::64 action End.DT4 tenant blue vlan 100`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				sd, err := parseSID(args[0], args[1:])
				if err != nil {
					return err
				}
				return commit(state.Op{Kind: addOrReplace(replace), SID: &sd})
			},
		}
	}
	del := &cobra.Command{
		Use:   "del SID",
		Short: "delete a local SID",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := parseAddr("sid", args[0])
			if err != nil {
				return err
			}
			return commit(state.Op{Kind: state.OpDelete, SID: &state.SID{SID: a}})
		},
	}
	show := &cobra.Command{Use: "show", Short: "list local SIDs", RunE: func(*cobra.Command, []string) error { return show("sids") }}
	c.AddCommand(add(false), add(true), del, show)
	return c
}

func parseSID(sid string, args []string) (state.SID, error) {
	var sd state.SID
	var err error
	if sd.SID, err = parseAddr("sid", sid); err != nil {
		return sd, err
	}
	m, err := kv(args, []string{"action", "nh4", "nh6", "table", "tenant", "vlan"})
	if err != nil {
		return sd, err
	}
	if sd.Action = one(m, "action"); sd.Action == "" {
		return sd, fmt.Errorf("action: missing (one of %v)", state.Actions)
	}
	if v := one(m, "nh4"); v != "" {
		if sd.NH4, err = parseAddr("nh4", v); err != nil {
			return sd, err
		}
	}
	if v := one(m, "nh6"); v != "" {
		if sd.NH6, err = parseAddr("nh6", v); err != nil {
			return sd, err
		}
	}
	if v := one(m, "table"); v != "" {
		if sd.Table, err = parseU32("table", v); err != nil {
			return sd, err
		}
	}
	sd.Tenant = one(m, "tenant")
	if v := one(m, "vlan"); v != "" {
		if sd.VLAN, err = parseVLAN(v); err != nil {
			return sd, err
		}
	}
	return sd, nil
}
