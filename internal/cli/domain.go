package cli

// domain.go: `seg6x domain set|show`: the SR domain's locators (refused as destinations on access
// ports) and the sources allowed to address local SIDs from the fabric.

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

func domainCmd() *cobra.Command {
	c := &cobra.Command{Use: "domain", Short: "The SR domain: its SID space (locators) and, optionally, its sources"}
	set := &cobra.Command{
		Use:   "set [locators P[,P...]|none] [sources P[,P...]|none]",
		Short: "Set the domain's locators and/or sources (a list not named is kept)",
		Long: `Declare the SR domain this node belongs to (RFC 8402 8.2, RFC 8754 5.1).

  locators  IPv6 prefixes of the domain's SID space: every node's locators, or a block covering them.
            On access ports (tenant traffic), an IPv6 packet addressed inside one is dropped and
            counted (DROP_BOUNDARY_LOCATOR) before any tenant route is consulted, so no tenant can
            reach a SID of this or any other node through seg6x. Local SIDs are refused on access
            ports whether or not they lie inside a locator (DROP_BOUNDARY_SID).
  sources   optional: the only outer sources from which a fabric packet may address a local SID;
            others are dropped (DROP_SID_SOURCE). Leave unset to accept any source.
"none" empties a list. The same as "domain: {locators: [...], sources: [...]}" in a YAML file.
Examples:
  seg6x domain set locators fc00:1::/48,fc00:2::/48,fc00:3::/48
  seg6x domain set sources fc00::/16
  seg6x domain set sources none`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := kv(args, []string{"locators", "sources"})
			if err != nil {
				return err
			}
			cur, _, err := fetchState()
			if err != nil {
				return err
			}
			d := cur.Domain
			if v := one(m, "locators"); v != "" {
				if d.Locators, err = prefixList("locators", v); err != nil {
					return err
				}
			}
			if v := one(m, "sources"); v != "" {
				if d.Sources, err = prefixList("sources", v); err != nil {
					return err
				}
			}
			return commit(state.Op{Kind: model.OpReplace, Domain: &d})
		},
	}
	show := &cobra.Command{Use: "show", Short: "show the domain's locators and sources", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return show("domain", showOptions{}) }}
	c.AddCommand(set, show)
	return c
}

// prefixList parses "P,P,..." (or "none": an empty list).
func prefixList(field, v string) ([]netip.Prefix, error) {
	if v == "none" {
		return nil, nil
	}
	var out []netip.Prefix
	for _, s := range strings.Split(v, ",") {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a prefix (ADDR/LEN)", field, s)
		}
		out = append(out, p)
	}
	return out, nil
}
