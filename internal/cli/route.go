package cli

// route.go: `seg6x route add|replace|del|show`: a tenant prefix steered into an SR policy.

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

const routeUsage = `PREFIX tenant NAME {encap seg6 [mode encap|encap.red] segs SID[,SID...]|usids BLOCK [nf N] USID... [src ADDR] [hoplimit N] | policy NAME}`

// routeKeys are the keywords of a route; a uSID list (usids BLOCK [nf N] USID...) runs until the
// next one (none is a hexadecimal number).
var routeKeys = []string{"tenant", "encap", "mode", "segs", "usids", "src", "hoplimit", "policy"}

func routeCmd() *cobra.Command {
	c := &cobra.Command{Use: "route", Short: "Encap routes: (tenant, prefix) -> SR policy (H.Encaps / H.Encaps.Red)"}
	add := func(replace bool) *cobra.Command {
		verb := map[bool]string{false: "add", true: "replace"}[replace]
		return &cobra.Command{
			Use:   verb + " " + routeUsage,
			Short: verb + " an encap route",
			Long: `Steer tenant traffic for PREFIX (IPv4 or IPv6, longest match wins) into an SR policy.
  segs      1 to 16 SIDs, in the order the packet visits them
  usids     instead of segs, the segment list written as uSIDs (RFC 9800 NEXT-C-SID): the locator
            block, optionally nf (bits per uSID, a multiple of 8; default 16), then the uSIDs in
            hexadecimal in the order visited. They are packed into containers (block + as many uSIDs
            as fit, zero-padded; the next container takes the rest), which become the segs;
            show routes gives both. With encap.red the first container is the destination.
  mode      encap (SRH with every SID; default) or encap.red (first SID only in the destination,
            no SRH at all for a single SID)
  src       outer IPv6 source; default: the address the kernel picks towards the first SID
  hoplimit  outer hop limit (default 64)
  policy    instead of all of the above: a named policy (seg6x policy), whose weighted segment lists
            the route's flows are spread over
Examples (segs as in ip -6 route ... encap seg6):
  seg6x route ` + verb + ` 198.18.2.0/24 tenant blue encap seg6 mode encap segs fc00:2::1,fc00:3::64
  seg6x route ` + verb + ` 198.18.3.0/24 tenant blue encap seg6 mode encap.red usids fcbb:0::/32 100 200 300 e004
            (one container: fcbb:0:100:200:300:e004::)`,
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
			p, err := model.ParsePrefix(args[0])
			if err != nil {
				return fmt.Errorf("prefix: %w", err)
			}
			m, err := kv(args[1:], []string{"tenant"})
			if err != nil {
				return err
			}
			return commit(state.Op{Kind: model.OpDelete, Route: &model.Route{Tenant: one(m, "tenant"), Prefix: p}})
		},
	}
	showC := &cobra.Command{Use: "show", Short: "list encap routes", Args: cobra.NoArgs}
	var so showOptions
	so.flags(showC)
	showC.RunE = func(*cobra.Command, []string) error { return show("routes", so) }
	c.AddCommand(add(false), add(true), del, showC)
	return c
}

func parseRoute(prefix string, args []string) (model.Route, error) {
	var r model.Route
	var err error
	if r.Prefix, err = model.ParsePrefix(prefix); err != nil {
		return r, fmt.Errorf("prefix: %w", err)
	}
	args, words := cutUSIDs(args)
	if _, again := cutUSIDs(args); again != nil {
		return r, fmt.Errorf("usids given twice")
	}
	m, err := kv(args, routeKeys)
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
	if r.Policy = one(m, "policy"); r.Policy != "" {
		return r, nil // the policy's lists, mode, source and hop limit (the store refuses any given here)
	}
	switch {
	case words != nil && segs != "":
		return r, fmt.Errorf("segs and usids: give one of them")
	case words != nil:
		if r.USIDs, err = model.ParseUSIDList(words); err != nil {
			return r, fmt.Errorf("usids: %w", err)
		}
	case segs == "":
		return r, fmt.Errorf("segs: missing (segs SID[,SID...] or usids BLOCK [nf N] USID...)")
	default:
		if r.Segs, err = parseSegs("segs", segs); err != nil {
			return r, err
		}
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

// cutUSIDs takes "usids BLOCK [nf N] USID..." out of a route's arguments: the other arguments, and
// the words after usids (nil when there is none), which run until the next route keyword.
func cutUSIDs(args []string) (rest, words []string) {
	for i := 0; i < len(args); i += 2 {
		if args[i] != "usids" {
			continue
		}
		j := i + 1
		if j+1 < len(args) && args[j+1] == "nf" {
			j += 2 // block, nf, N
		}
		for j++; j < len(args) && !slices.Contains(routeKeys, args[j]); j++ {
		}
		words = append([]string{}, args[i+1:min(j, len(args))]...)
		return append(append([]string{}, args[:i]...), args[min(j, len(args)):]...), words
	}
	return args, nil
}
