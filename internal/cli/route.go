package cli

// route.go: `seg6x route add|replace|del|show`: a tenant prefix steered into an SR policy.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

const routeUsage = `PREFIX tenant NAME encap seg6 [mode encap|encap.red] segs SID[,SID...] [src ADDR] [hoplimit N]`

func routeCmd() *cobra.Command {
	c := &cobra.Command{Use: "route", Short: "Encap routes: (tenant, prefix) -> SR policy (H.Encaps / H.Encaps.Red)"}
	add := func(replace bool) *cobra.Command {
		verb := map[bool]string{false: "add", true: "replace"}[replace]
		return &cobra.Command{
			Use:   verb + " " + routeUsage,
			Short: verb + " an encap route",
			Long: `Steer tenant traffic for PREFIX (IPv4 or IPv6, longest match wins) into an SR policy.
  segs      1 to 16 SIDs, in the order the packet visits them
  mode      encap (SRH with every SID; default) or encap.red (first SID only in the destination,
            no SRH at all for a single SID)
  src       outer IPv6 source; default: the address the kernel picks towards the first SID
  hoplimit  outer hop limit (default 64)
Example (the grammar of ip -6 route ... encap seg6):
  seg6x route ` + verb + ` 198.18.2.0/24 tenant blue encap seg6 mode encap segs fc00:2::1,fc00:3::64`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				r, err := parseRoute(args[0], args[1:])
				if err != nil {
					return err
				}
				return commit(state.Op{Kind: addOrReplace(replace), Route: &r})
			},
		}
	}
	del := &cobra.Command{
		Use:   "del PREFIX tenant NAME",
		Short: "delete an encap route",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := state.ParsePrefix(args[0])
			if err != nil {
				return fmt.Errorf("prefix: %w", err)
			}
			m, err := kv(args[1:], []string{"tenant"})
			if err != nil {
				return err
			}
			return commit(state.Op{Kind: state.OpDelete, Route: &state.Route{Tenant: one(m, "tenant"), Prefix: p}})
		},
	}
	show := &cobra.Command{Use: "show", Short: "list encap routes", RunE: func(*cobra.Command, []string) error { return show("routes") }}
	c.AddCommand(add(false), add(true), del, show)
	return c
}

func parseRoute(prefix string, args []string) (state.Route, error) {
	var r state.Route
	var err error
	if r.Prefix, err = state.ParsePrefix(prefix); err != nil {
		return r, fmt.Errorf("prefix: %w", err)
	}
	m, err := kv(args, []string{"tenant", "encap", "mode", "segs", "src", "hoplimit"})
	if err != nil {
		return r, err
	}
	if r.Tenant = one(m, "tenant"); r.Tenant == "" {
		return r, fmt.Errorf("tenant: missing (route ... tenant NAME)")
	}
	if e := one(m, "encap"); e != "" && e != "seg6" {
		return r, fmt.Errorf("encap: %q is not seg6", e)
	}
	r.Mode = one(m, "mode")
	segs := one(m, "segs")
	if segs == "" {
		return r, fmt.Errorf("segs: missing (segs SID[,SID...])")
	}
	for i, s := range strings.Split(segs, ",") {
		a, err := parseAddr(fmt.Sprintf("segs[%d]", i), s)
		if err != nil {
			return r, err
		}
		r.Segs = append(r.Segs, a)
	}
	if v := one(m, "src"); v != "" {
		if r.Src, err = parseAddr("src", v); err != nil {
			return r, err
		}
	}
	if v := one(m, "hoplimit"); v != "" {
		h, err := strconv.ParseUint(v, 10, 8)
		if err != nil || h == 0 {
			return r, fmt.Errorf("hoplimit: %q is not 1-255", v)
		}
		r.HopLimit = uint8(h)
	}
	return r, nil
}
