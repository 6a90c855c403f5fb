package cli

// apply.go: `seg6x apply -f FILE`: the file is the whole desired state; with --explain, what given
// frames would do under it, applying nothing.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"
	"github.com/seg6x/seg6x/internal/config"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func applyCmd() *cobra.Command {
	var file, dev string
	var dryRun, prune, force, full bool
	var frames []string
	c := &cobra.Command{
		Use:   "apply -f FILE [--dry-run] [--diff] [--prune] [--dev IFACE --explain FRAME ...]",
		Short: "Make the data plane exactly what a YAML file describes (idempotent, all or nothing)",
		Long: `Read FILE ("-" for stdin) and make it the whole running state: objects in the file are added or
updated, objects not in it are removed. Applying the same file twice changes nothing. Nothing is
written unless the whole file is valid. --dry-run validates and prints the changes only.

It prints a summary: per kind of object, how many are added, changed and removed. --diff lists
every change, one line each ("+ route 198.18.2.0/24 tenant blue"). --json writes the totals, the
counts per kind and every change as an object ({"op":"add","kind":"route","tenant":"blue",
"prefix":"198.18.2.0/24"}). On a terminal a long apply shows its phase on stderr as it goes.

A file that would remove an interface or a tenant (with its routes), or every object (an empty
file), is refused unless --prune (or --force) says that is meant: a truncated or wrong file does not wipe the
node. The check and the apply see the same state (another change in between makes it check
again). A tenant whose
routes differ gets its whole route table swapped in one step: traffic sees the old table or the new.
With a daemon running this is the same API call the daemon makes for --config at start and SIGHUP.
"seg6x config export" prints the running state as such a file (applying it changes nothing).

--explain FRAME (with --dev IFACE, repeatable) applies nothing: it prints the diff, then for each
frame what it does now and what it would do under FILE, as "seg6x explain" prints it. The frame runs
through the traced build of the program on private maps filled with FILE's state, after the same
checks and planning as the apply itself (the FIB and neighbors are the kernel's, as live). FRAME is
hex, a pcap/pcapng file or a spec (see "seg6x explain --help"), e.g.
  seg6x apply -f new.yaml --dev ta0 --explain "vlan 100 ipv4 198.18.1.2>198.18.2.2 udp 1000>2000"

File format (every key, with what it takes: docs/yaml-reference.md):
  interfaces: [{name: eth0}, {name: eth1, mode: generic}]
  tenants:
    - {name: blue, table: 100, ports: [{dev: eth1, vlan: 100}]}
  routes:
    - {tenant: blue, prefix: 198.18.2.0/24, mode: encap, segs: [fc00:2::64], src: "fc00:1::1", hoplimit: 64}
    - {tenant: blue, prefix: 198.18.3.0/24, usids: {block: "fcbb:0::/32", ids: [100, 200, e004]}}  # segs [fcbb:0:100:200:e004::]
  sids:
    - {sid: "fc00:1::64", action: End.DT4, tenant: blue, vlan: 100}
    - {sid: "fc00:1::65", action: End.DX4, nh4: 198.18.9.2}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" {
				return fmt.Errorf("-f FILE is required")
			}
			prune = prune || force
			prog := newProgress()
			defer prog.end()
			prog.step("reading " + file)
			f, err := config.LoadFile(file)
			if err != nil {
				return err
			}
			desired := f.State
			nobj := fmt.Sprintf("%d objects", len(desired.Interfaces)+len(desired.Tenants)+len(desired.Routes)+len(desired.SIDs)+len(desired.Policies))
			if len(frames) > 0 && dev == "" {
				return errors.New("--explain needs --dev: the interface the frames arrive on")
			}
			if dev != "" && len(frames) == 0 {
				return errors.New("--dev is for --explain: give the frames to explain")
			}
			var raw [][]byte
			for _, f := range frames {
				b, err := readFrame(dev, []string{f})
				if err != nil {
					return fmt.Errorf("--explain %q: %w", f, err)
				}
				raw = append(raw, b)
			}
			c, done, err := connect()
			if err != nil {
				return err
			}
			defer done()
			prog.step("sending " + nobj)
			st := api.StateToPB(&desired)
			var rep *pb.CommitReply
			// Without --prune: the daemon's diff first (a dry run), then the apply, conditional on the
			// generation the dry run saw. Another origin's commit in between (BGP, the kernel mirror)
			// makes it stale: checked again, a few times.
			for attempt := 1; ; attempt++ {
				var gen uint64
				if !prune && !dryRun && len(frames) == 0 {
					prog.step("checking " + nobj + " against the running state")
					pre, err := c.ApplyState(context.Background(), &pb.ApplyStateRequest{State: st, DryRun: true})
					if err != nil {
						return f.Explain(apiErr(err))
					}
					if why := needsPrune(api.DiffFromPB(pre.GetDiff()), &desired); why != "" {
						return fmt.Errorf("%s %s; nothing applied (apply it with --prune to mean it; --dry-run lists every change)", file, why)
					}
					gen = pre.GetGeneration()
				}
				if dryRun || len(frames) > 0 {
					prog.step("checking " + nobj)
				} else {
					prog.step("applying " + nobj)
				}
				rep, err = c.ApplyState(context.Background(), &pb.ApplyStateRequest{State: st, DryRun: dryRun || len(frames) > 0, IfGeneration: gen})
				if gen != 0 && status.Code(err) == codes.FailedPrecondition && attempt < 5 {
					continue
				}
				if err != nil {
					return f.Explain(apiErr(err))
				}
				break
			}
			prog.end()
			diff := api.DiffFromPB(rep.GetDiff())
			if len(frames) == 0 {
				if dryRun && !prune && !g.jsonOut {
					if why := needsPrune(diff, &desired); why != "" {
						defer fmt.Printf("(applying it needs --prune: it %s)\n", why)
					}
				}
				if g.jsonOut || full {
					return printDiff(diff)
				}
				fmt.Print(diff.Summary())
				return nil
			}
			var out []explained
			for i, b := range raw {
				now, err := c.Explain(context.Background(), &pb.ExplainRequest{Dev: dev, Frame: b})
				if err != nil {
					return apiErr(err)
				}
				next, err := c.Explain(context.Background(), &pb.ExplainRequest{Dev: dev, Frame: b, State: st})
				if err != nil {
					return apiErr(err)
				}
				out = append(out, explained{Frame: frames[i], Dev: dev, Now: now.GetRecord(), After: next.GetRecord()})
			}
			if g.jsonOut {
				return printJSON(applyExplained{Diff: diff, Explain: out})
			}
			fmt.Print("applied nothing (--explain); applying the file would change:\n" + indent(diff.String()))
			for i := range out {
				out[i].print(os.Stdout, i+1)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&file, "file", "f", "", "YAML file with the desired state (- for stdin)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "validate and print the changes without applying them")
	c.Flags().BoolVar(&prune, "prune", false, "allow the file to remove interfaces, tenants, or everything")
	c.Flags().BoolVar(&force, "force", false, "the same as --prune")
	c.Flags().BoolVar(&full, "diff", false, "list every change, one line each (the default is a summary per kind)")
	c.Flags().StringArrayVar(&frames, "explain", nil, "apply nothing; show what FRAME does now and would do under FILE (repeatable)")
	c.Flags().StringVar(&dev, "dev", "", "with --explain: the interface the frames arrive on")
	return c
}

// explained is one --explain frame: its record under the running state and under the file's.
type explained struct {
	Frame string          `json:"frame"`
	Dev   string          `json:"dev"`
	Now   *pb.TraceRecord `json:"-"`
	After *pb.TraceRecord `json:"-"`
}

// MarshalJSON writes the records as the API's JSON (jsonout.go), like seg6x explain --json.
func (e explained) MarshalJSON() ([]byte, error) {
	now, err := protoJSON(e.Now)
	if err != nil {
		return nil, err
	}
	after, err := protoJSON(e.After)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Frame string `json:"frame"`
		Dev   string `json:"dev"`
		Now   any    `json:"now"`
		After any    `json:"after"`
	}{e.Frame, e.Dev, now, after})
}

type applyExplained struct {
	Diff    any         `json:"diff"`
	Explain []explained `json:"explain"`
}

func (e *explained) print(w io.Writer, n int) {
	fmt.Fprintf(w, "\nframe %d on %s: %s\n", n, e.Dev, e.Frame)
	fmt.Fprintf(w, "now:          %s\n", verdictLine(e.Now))
	if verdictLine(e.After) == verdictLine(e.Now) && string(e.After.GetTx()) == string(e.Now.GetTx()) {
		fmt.Fprintln(w, "after apply:  the same (same action, same frame out)")
		return
	}
	fmt.Fprintln(w, "after apply:")
	printRecord(w, e.After, true)
}

// verdictLine is a record's outcome in one line.
func verdictLine(r *pb.TraceRecord) string {
	s := r.GetClass() + " -> " + r.GetAction()
	if r.GetReason() != "" {
		s += " " + r.GetReason()
	}
	if r.GetRoute() != "" {
		s += fmt.Sprintf(" (route %s, policy %d)", r.GetRoute(), r.GetPolicy())
	}
	if r.GetSid() != "" {
		s += fmt.Sprintf(" (SID %s %s)", r.GetSid(), r.GetBehavior())
	}
	return s
}

// indent puts two spaces before each line of s ("  nothing\n" for none).
func indent(s string) string {
	if s == "" {
		return "  nothing\n"
	}
	var out string
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			out += "  " + l
		}
	}
	return out
}

// needsPrune says what in diff (applying desired) needs --prune: removing an interface or a tenant, or
// every object (desired is empty); "" if nothing does.
func needsPrune(d *model.Diff, desired *model.State) string {
	_, _, removed := d.Counts()
	if removed == 0 {
		return ""
	}
	var gone []string
	for _, r := range d.Removed {
		if strings.HasPrefix(r, "interface ") || strings.HasPrefix(r, "tenant ") {
			gone = append(gone, r)
		}
	}
	empty := len(desired.Interfaces)+len(desired.Tenants)+len(desired.Routes)+len(desired.SIDs)+len(desired.Policies) == 0 &&
		len(desired.Domain.Locators)+len(desired.Domain.Sources) == 0 && desired.BGP == nil
	switch {
	case len(gone) > 3:
		return fmt.Sprintf("would remove %s and %d more interfaces and tenants (of %d objects removed)", strings.Join(gone[:3], ", "), len(gone)-3, removed)
	case len(gone) > 0:
		return fmt.Sprintf("would remove %s (of %d objects removed)", strings.Join(gone, ", "), removed)
	case empty:
		return fmt.Sprintf("is empty: it would remove all %d objects", removed)
	}
	return ""
}
