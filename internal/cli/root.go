// Package cli is the seg6x command line: thin cobra commands, each a client of the control API.
package cli

// root.go: the root command, its global flags, and output helpers.

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/seg6x/seg6x/internal/api"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

type globals struct {
	dir      string
	jsonOut  bool
	socket   string
	server   string
	tls      api.TLSFiles
	wait     time.Duration
	readOnly bool // the running command only reads (annotated readOnly): it never creates an instance
}

// readOnly is the annotation of a command that only reads the instance.
const readOnly = "seg6x.read-only"

// markReadOnlyCommands marks the commands that only read: show, status, stats, trace, explain,
// capture, config export, and every group's show.
func markReadOnlyCommands(root *cobra.Command) {
	for _, c := range root.Commands() {
		switch c.Name() {
		case "show", "status", "stats", "trace", "explain", "capture":
			markReadOnly(c)
		}
		for _, sub := range c.Commands() {
			if sub.Name() == "show" || c.Name() == "config" && sub.Name() == "export" {
				markReadOnly(sub)
			}
		}
	}
}

// markReadOnly annotates c (and its subcommands) as only reading the instance.
func markReadOnly(cmds ...*cobra.Command) {
	for _, c := range cmds {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[readOnly] = "true"
		markReadOnly(c.Commands()...)
	}
}

var g globals

// NewRoot builds the seg6x command tree.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "seg6x",
		Short: "SRv6 data plane in XDP: H.Encaps(.Red), " + strings.Join(model.Actions, ", "),
		Long: `seg6x runs SRv6 (RFC 8754/8986) in XDP on Linux, reusing the kernel's FIB and neighbor tables
and handing the kernel whatever the fast path cannot finish.

State lives in an instance directory (--dir, default /run/seg6x): the saved state, and <dir>/bpf,
a link into the host's bpffs (/sys/fs/bpf/seg6x) holding the pinned maps and XDP links. The data plane keeps forwarding whether or not any
seg6x process runs. Every command is a client of the control API (api/seg6xv1/seg6x.proto): of the
daemon (seg6x daemon) through its socket <dir>/seg6x.sock when one runs, otherwise of the same API
served inside the command itself. Each change is one validated, all-or-nothing commit. While
the daemon restarts (or another command holds the instance) a command waits for it (--wait).
Commands that only read (show, status, stats, config export, ...) never create an instance.

Typical use:
  seg6x attach eth0 --role fabric
  seg6x attach eth1 --role access
  seg6x domain set locators fc00:1::/48,fc00:2::/48
  seg6x tenant add blue table 100 vlan 100 dev eth1
  seg6x route add 198.18.2.0/24 tenant blue encap seg6 mode encap segs fc00:2::64 src fc00:1::1
  seg6x sid add fc00:1::64 action End.DT4 tenant blue vlan 100
  seg6x apply -f seg6x.yaml
  seg6x config export > seg6x.yaml   # the running state as such a file
  seg6x show
  seg6x stats
  seg6x daemon --config seg6x.yaml --metrics 127.0.0.1:9469 [--mirror-kernel]
  seg6x status
  seg6x show kernel        # with --mirror-kernel: which kernel SRv6 routes run in the fast path`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			g.readOnly = cmd.Annotations[readOnly] == "true"
		},
	}
	root.PersistentFlags().StringVar(&g.dir, "dir", state.DefaultDir, "instance directory (saved state, API socket, and the bpffs with pinned maps and links)")
	root.PersistentFlags().BoolVarP(&g.jsonOut, "json", "j", false, "machine-readable JSON output")
	root.PersistentFlags().StringVar(&g.socket, "socket", "", "daemon API socket (default <dir>/seg6x.sock)")
	root.PersistentFlags().StringVar(&g.server, "server", "", "reach a daemon's TLS API at HOST:PORT instead of the socket")
	root.PersistentFlags().StringVar(&g.tls.CA, "server-ca", "", "with --server: CA of the daemon's certificate")
	root.PersistentFlags().StringVar(&g.tls.Cert, "client-cert", "", "with --server: client certificate")
	root.PersistentFlags().StringVar(&g.tls.Key, "client-key", "", "with --server: client key")
	root.PersistentFlags().DurationVar(&g.wait, "wait", 10*time.Second, "how long to wait while the daemon starts, stops or restarts, or another seg6x command holds the instance (0: fail at once)")
	root.AddCommand(attachCmd(), detachCmd(), domainCmd(), tenantCmd(), routeCmd(), policyCmd(), sidCmd(), pluginCmd(), applyCmd(), showCmd(),
		statsCmd(), setCmd(), statusCmd(), configCmd(), daemonCmd(), bgpCmd(), traceCmd(), captureCmd(),
		explainCmd(), versionCmd())
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath())
	})
	markReadOnlyCommands(root)
	addPackaging(root)
	root.Version = buildInfo().Version
	root.SetVersionTemplate(buildInfo().String())
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes every command group (a command with subcommands and nothing to run of
// its own) refuse an unknown subcommand with a hint, where cobra would print the group's help and
// succeed; without arguments it still prints its help.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if c == c.Root() || !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		var names []string
		for _, s := range cmd.Commands() {
			if s.IsAvailableCommand() {
				names = append(names, s.Name())
			}
		}
		return fmt.Errorf("unknown command %q for %q (want %s; see %s --help)", args[0], cmd.CommandPath(),
			strings.Join(names, ", "), cmd.CommandPath())
	}
}

// Main runs the CLI and returns the process exit code.
func Main() int {
	if err := NewRoot().Execute(); err != nil {
		printError(err)
		return 1
	}
	return 0
}

func printDiff(d *model.Diff) error {
	if g.jsonOut {
		return printJSON(d)
	}
	fmt.Print(d.String())
	return nil
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
