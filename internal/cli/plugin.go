package cli

// plugin.go: `seg6x plugin load|unload|show`: operators' functions (plugins) that SIDs of action
// plugin run, and `seg6x show plugins`.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

func pluginCmd() *cobra.Command {
	c := &cobra.Command{Use: "plugin", Short: "Operators' SRv6 functions (BPF objects built with the seg6x plugin SDK) that SIDs run"}
	load := &cobra.Command{
		Use:   "load NAME FILE",
		Short: "load a plugin object under NAME, or replace the one loaded under it",
		Long: `Load FILE, a BPF object built against the seg6x plugin SDK (seg6x_plugin.h, docs/plugins.md), under
NAME. seg6x checks it first (the SDK's ABI version, its programs, the helpers it calls, its
configuration struct) and the kernel's verifier then loads it; a refusal says why and changes nothing.
When NAME is loaded already, the new object replaces it without a lost packet: it goes into a slot of
its own, and every SID that runs NAME moves to it with its settings checked against the new
object's configuration (when they do not fit, nothing changes).
Then run it on a SID:  seg6x sid add SID action plugin NAME [tenant T] [KEY=VALUE ...]
Examples:
  seg6x plugin load ttlgate /usr/lib/seg6x/plugins/ttlgate.o
  seg6x sid add fc00:1::d action plugin ttlgate tenant blue min_ttl=5`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := os.ReadFile(args[1])
			if err != nil {
				return err
			}
			file, err := filepath.Abs(args[1])
			if err != nil {
				return err
			}
			return commit(state.Op{Kind: model.OpReplace, Plugin: &model.Plugin{Name: args[0], File: file, Object: b}})
		},
	}
	unload := &cobra.Command{
		Use:   "unload NAME",
		Short: "unload a plugin (no SID may run it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return commit(state.Op{Kind: model.OpDelete, Plugin: &model.Plugin{Name: args[0]}})
		},
	}
	showC := &cobra.Command{
		Use:   "show [NAME]",
		Short: "list the loaded plugins and their counters; with NAME, its settings too",
		Long: `List the loaded plugins: slot, digest, the SIDs that run them, and what became of their packets (by
outcome: the verdict the function returned, or empty: no function in the slot, bad_verdict: one
that does not exist or the SID does not allow, malformed: the frame's headers moved) and their own
drop reasons. With NAME, also the settings its SIDs take (KEY, type, help). --json prints the API's
PluginStats.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return showPlugins(name)
		},
	}
	c.AddCommand(load, unload, showC)
	return c
}

// showPlugins prints the plugins (name: that one, with its settings).
func showPlugins(name string) error {
	c, done, err := connect()
	if err != nil {
		return err
	}
	defer done()
	r, err := c.Stats(context.Background(), &pb.StatsRequest{})
	if err != nil {
		return apiErr(err)
	}
	ps := r.GetPlugins()
	if name != "" {
		i := slices.IndexFunc(ps, func(p *pb.PluginStats) bool { return p.GetName() == name })
		if i < 0 {
			return fmt.Errorf("no plugin %q is loaded", name)
		}
		ps = ps[i : i+1]
	}
	if g.jsonOut {
		return printJSON(orEmpty(ps))
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "PLUGIN\tSLOT\tDIGEST\tSIDS\tOUTCOMES\tDROPS\tFILE")
	for _, p := range ps {
		fmt.Fprintf(w, "%s\t%d\t%.12s\t%s\t%s\t%s\t%s\n", p.GetName(), p.GetSlot(), p.GetDigest(), orDash(strings.Join(p.GetSids(), ",")),
			orDash(counts(p.GetOutcomes())), orDash(counts(p.GetDrops())), p.GetFile())
	}
	w.Flush()
	if name != "" {
		fmt.Printf("\nSettings (seg6x sid add SID action plugin %s KEY=VALUE ...):\n%s", name, ps[0].GetConfig())
	}
	return nil
}

// counts is "name=packets" for each counter, sorted by name.
func counts(m map[string]*pb.Counter) string {
	var out []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}) {
		out = append(out, fmt.Sprintf("%s=%d", k, m[k].GetPackets()))
	}
	return strings.Join(out, " ")
}
