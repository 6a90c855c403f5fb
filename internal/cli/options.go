package cli

// options.go: `seg6x set`: instance-wide data plane options.

import (
	"fmt"
	"regexp"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

// negativeArg finds a negative number in pflag's "unknown shorthand flag: '1' in -1".
var negativeArg = regexp.MustCompile(`unknown shorthand flag: '\d' in (-\d+)$`)

func setCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "set nexthop-cache-ms N",
		Short: "Set an instance-wide option (reloads the program on every attached interface)",
		Long: `Options:
  nexthop-cache-ms N   reuse a FIB result for the same lookup (destination, source, table, ingress
                       interface) for up to N ms, per CPU, skipping most per-packet FIB lookups.
                       A running daemon invalidates every cached result on any route, rule, link or
                       neighbor change; without a daemon a change reaches the fast path up to N ms
                       late. 0: the default of whoever loads the program (the daemon's
                       --nexthop-cache-ms, 1000 unless set; off for commands run without a daemon).
                       At most 10000. The same as "options: {nexthop_cache_ms: N}" in a YAML file.
                       "seg6x status" shows the time in effect.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "nexthop-cache-ms" {
				return fmt.Errorf("unknown option %q; options: nexthop-cache-ms", args[0])
			}
			n, err := parseU32("nexthop-cache-ms", args[1])
			if err != nil {
				return err
			}
			return commit(state.Op{Kind: model.OpReplace, Options: &model.Options{NextHopCacheMs: n}})
		},
	}
	// A negative value reaches the flag parser as a flag ("-1"): say what is wrong with it instead.
	c.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if m := negativeArg.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("nexthop-cache-ms: %s is negative; want 0 to 10000 (ms)", m[1])
		}
		return err
	})
	return c
}
