// Package benchcli is the seg6x-bench command (cmd/seg6x-bench): the benchmarks' flags, help and
// tables. The rig and the measurements are tools/benchrig's.
package benchcli

// bench.go: the root command and micro, run, control, apply, tcp and mirror (slowpath in
// bench_slowpath.go, bgp and its injector in bench_bgp.go).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/testsupport"
	"github.com/seg6x/seg6x/tools/toolcli"
	"github.com/spf13/cobra"
)

// Main runs seg6x-bench and returns the process exit code.
func Main() int { return toolcli.Main(NewRoot()) }

// NewRoot builds the seg6x-bench command tree.
func NewRoot() *cobra.Command {
	return toolcli.NewRoot("seg6x-bench",
		"seg6x benchmarks: run (throughput rig), micro (ns/packet), control (route/SID load), apply, tcp, mirror (kernel mirror), slowpath (fragmenting), bgp (VPN route convergence)",
		`seg6x-bench measures seg6x on this machine: each command builds what it needs in network namespaces
of its own (most need root), prints a table (--json: the records with the run's metadata) and
removes what it built. Commands that run seg6x use the seg6x binary beside this one (bin/ after make
build) unless --seg6x names another. The method of each and its limits: docs/benchmarks.md.

Typical use:
  seg6x-bench micro                      # ns per packet of each behavior, next to a bare redirect
  seg6x-bench run --quick                # throughput of seg6x, the kernel and bare XDP (make bench)
  seg6x-bench control --json             # control-plane load rates
  seg6x-bench bgp --routes 1000000       # BGP VPN route convergence and memory`,
		microCmd(), benchRunCmd(), benchControlCmd(), benchApplyCmd(), benchTCPCmd(), benchMirrorCmd(), benchSlowPathCmd(),
		benchBGPCmd(), benchBGPInjectorCmd())
}

// baselineNs is a baseline's figure, or "-" when there is no baseline.
func baselineNs(ns float64) string {
	if ns == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", ns)
}

func microCmd() *cobra.Command {
	var runs int
	var baseline string
	var fabricMTU int
	micro := &cobra.Command{
		Use:   "micro [--runs N] [--baseline OBJ]",
		Short: "ns per packet of each behavior through BPF_PROG_TEST_RUN, next to a bare redirect",
		Long: `Runs each behavior's fixture (tools/fixtures) through the real program N times, every run on a
fresh copy of the input frame (one BPF_PROG_TEST_RUN with repeat 1 each: a repeated run on an
already encapsulated frame would measure the wrong thing), and reports the mean of the kernel-
measured run times; also for the FIB_MAIN_DIRECT build variant and with the headend's next-hop
cache on, and with a trace armed (seg6x trace: the program tail-calls its traced build) whose filter
takes no packet (TRACE-NONE) or every packet (TRACE-ALL, 128-byte frames to the ring, drained) (outputs
must be identical). "bare" is a program that only swaps MACs and redirects: the floor any XDP
forwarder pays. The kernel's timer is read around each run, so every figure includes the same
~tens of ns of timer overhead; compare ratios, not absolute values. The SID LOOKUP table times
frames the program returns unchanged (ARP, an exact SID hit, a fabric non-SID) 200,000 times in one
test run each, with SID prefixes on and off in the same program: what an exact hit and a miss cost,
and what the prefix trie adds. With --baseline OBJ, every case also runs another build's XDP object
(its maps declared as this build's) in 10 paired rounds, the order alternating, and reports the
median of the rounds' ratios: an A/B of two builds in one process, on the same frames and state.
The fabric cases (End, decapsulation, ...) arrive on the rig's fabric link, MTU 3500 unless
--fabric-mtu says otherwise: above 1500 the program reads every frame's whole length there (frames
may span buffers: one helper call), at 1500 it does not, as on the tenant ports. The PLUGINS table
sends a fixture to its built-in SID and to a plugin SID copied from it (tools/bpf/plugin_nop.c, which
returns the verdict its SID configures, the tutorial's ttlgate, and the shipped firewall with 1 and
12 rules), in 10 paired rounds: the extra ns per packet are the tail call into the plugin, what the
plugin does, and the pipeline's checks around it.
Needs root; builds its own network namespace and removes it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if fabricMTU != 0 && (fabricMTU < 1280 || fabricMTU > 65535) {
				return fmt.Errorf("--fabric-mtu %d: want an IPv6 link's MTU, 1280 to 65535 (or 0: the fixtures' 3500)", fabricMTU)
			}
			if done, err := reexecInOwnNetns("seg6x-bench"); done || err != nil {
				return err
			}
			meta := benchrig.NewMeta()
			m, err := benchrig.RunMicro(runs, baseline, fabricMTU)
			if err != nil {
				return err
			}
			if toolcli.JSON {
				return toolcli.PrintJSON(benchrig.Results{Meta: meta, Results: m})
			}
			res, scale := m.Cases, m.Scale
			w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintf(w, "CASE\tACTION\tNS/PKT\tVS BARE\tFIB-DIRECT\tNH-CACHE\tTRACE-NONE\tTRACE-ALL\tWHAT\n")
			for _, r := range res {
				fmt.Fprintf(w, "%s\t%s\t%.1f\t%.2fx\t%.1f\t%.1f\t%.1f\t%.1f\t%s\n", r.Case, r.Action, r.NsPerPkt, r.VsBare, r.DirectNsPerPkt,
					r.CachedNsPerPkt, r.TraceArmedNsPerPkt, r.TraceAllNsPerPkt, r.Description)
			}
			w.Flush()
			if baseline != "" {
				fmt.Printf("\nBASELINE %s: paired rounds (%d per case, alternating order)\n", baseline, benchrig.BaselineRounds)
				fmt.Fprintf(w, "CASE\tTHIS NS/PKT\tBASELINE NS/PKT\tMEDIAN RATIO\tROUND RATIOS\n")
				for _, r := range res[1:] {
					var rs []string
					for _, x := range r.BaselineRatios {
						rs = append(rs, fmt.Sprintf("%.2f", x))
					}
					fmt.Fprintf(w, "%s\t%.1f\t%.1f\t%.3f\t%s\n", r.Case, r.NsPerPkt, r.BaselineNsPerPkt, r.VsBaseline, strings.Join(rs, " "))
				}
				w.Flush()
			}
			fmt.Printf("\n%d runs per case, each on a fresh frame; kernel-measured run time per packet. Fabric link MTU %d.\n", runs, m.FabricMTU)
			if len(m.Plugins) > 0 {
				fmt.Printf("\nPLUGINS: the same frame to a built-in SID and to a plugin SID copied from it, %d paired rounds\n", benchrig.BaselineRounds)
				fmt.Fprintf(w, "CASE\tBUILT-IN NS/PKT\tPLUGIN NS/PKT\tEXTRA NS (MEDIAN)\tRATIO\tWHAT\n")
				for _, r := range m.Plugins {
					fmt.Fprintf(w, "%s\t%.1f\t%.1f\t%.1f\t%.2fx\t%s\n", r.Case, r.BuiltinNs, r.PluginNs, r.ExtraNs, r.Ratio, r.Description)
				}
				w.Flush()
			}
			if len(m.Lookups) > 0 {
				l := m.Lookups[0]
				fmt.Printf("\nSID LOOKUP: frames returned unchanged, %d runs of the same frame per test run, median of %d rounds;\n", l.Repeat, l.Rounds)
				fmt.Printf("the same program with SID prefixes on (sid_conf: the fixtures' uSID locators) and off\n")
				fmt.Fprintf(w, "CASE\tACTION\tPREFIXES ON NS/PKT\tOFF NS/PKT\tBASELINE NS/PKT\tWHAT\n")
				for _, r := range m.Lookups {
					fmt.Fprintf(w, "%s\t%s\t%.1f\t%.1f\t%s\t%s\n", r.Case, r.Action, r.PrefixesNs, r.NoPrefixNs, baselineNs(r.BaselineNs), r.Description)
				}
				w.Flush()
			}
			fmt.Printf("\nROUTE SCALE: H.Encaps over %d destinations (each a /32 miss, then a /16 hit)\n", 4096)
			fmt.Fprintf(w, "ROUTES\tNS/PKT\tCOST VS 10 ROUTES\tTHROUGHPUT VS 10 ROUTES\n")
			for _, r := range scale {
				fmt.Fprintf(w, "%d\t%.1f\t%.2fx\t%.2f\n", r.Routes, r.NsPerPkt, r.VsTen, 1/r.VsTen)
			}
			return w.Flush()
		},
	}
	micro.Flags().IntVar(&runs, "runs", 20000, "test runs per case")
	micro.Flags().IntVar(&fabricMTU, "fabric-mtu", 0, "MTU of the rig's fabric link (0: the fixtures' 3500); 1500 measures a fabric whose frames fit one buffer")
	micro.Flags().StringVar(&baseline, "baseline", "", "also run another build's XDP object (e.g. `git show REV:internal/dataplane/seg6x_bpfel.o > old.o`) on every case, in paired rounds against this one")
	return micro
}

func benchRunCmd() *cobra.Command {
	var o benchrig.Options
	var sizes, flows, scenarios, out string
	var quick bool
	c := &cobra.Command{
		Use:   "run [--quick] [--scenarios a,b] [--sizes 64,1518] [--flows single,many] [--trial 1s] [--repeat 3]",
		Short: "RFC 2544-style throughput of seg6x, the kernel and bare XDP redirect on a namespace rig",
		Long: `Builds generator -> DUT -> sink namespaces for each scenario, offers frames from an XDP live-frames
generator, and counts at the sink only frames that are exactly what the scenario must produce.
For every scenario x frame size x flow mode: NDR (highest zero-loss rate, binary search), PDR
(loss <= 0.5%) and the delivered rate at overload, each repeated (--repeat) and reported as the
median and spread. Ratios to bare redirect and to the kernel come from the same run.
Each repetition also runs two profile trials (--profile-only runs just those). The first is a
closed loop: the generator seeds 128 frames (224 both ways), then the sink sends every correct
frame back into the DUT (as a template of the frame's own length: IMIX keeps its mix), so the
rig's CPU does per frame no more than a bare redirect and the DUT is the slowest stage: its rate
is the DUT's capacity, and the DUT's receive thread's CPU time per frame and busy share come from
it. The second repeats it with BPF run-time statistics on, for the XDP program's share. Scenarios
whose frames cannot loop (fragments) use the generator at full rate instead.
With --rounds N the whole selection runs N times over; each point pools every round's repetitions,
and each round's capacity ratio to the kernel is listed too, with their median (PAIRED): on a
shared machine the kernel's figure moves between runs, and a round's kernel and seg6x points are
minutes apart, so the paired median is the comparison the host's phases shift least.
See docs/benchmarks.md for the method and its limits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if quick {
				sizes, flows, o.Repeat, o.Steps, o.Trial = "64,imix", "single", 1, 6, 500*time.Millisecond
			}
			for _, s := range strings.Split(sizes, ",") {
				if s == "imix" {
					o.Sizes = append(o.Sizes, benchrig.IMIX)
					continue
				}
				n, err := strconv.Atoi(s)
				if err != nil || n < 64 || n > 1518 {
					return fmt.Errorf("--sizes: %q is not a frame size 64-1518 or imix", s)
				}
				o.Sizes = append(o.Sizes, n)
			}
			for _, f := range strings.Split(flows, ",") {
				if f != "single" && f != "many" {
					return fmt.Errorf("--flows: %q is not single or many", f)
				}
				o.Flows = append(o.Flows, f)
			}
			if scenarios != "" {
				o.Scenarios = strings.Split(scenarios, ",")
			}
			if o.Rounds < 1 || o.Repeat < 1 {
				return fmt.Errorf("--rounds and --repeat: at least 1")
			}
			bin, err := toolcli.Seg6x()
			if err != nil {
				return err
			}
			o.Bin, o.Prefix, o.Log = bin, "s6b", os.Stderr
			meta := benchrig.NewMeta()
			res, err := benchrig.Run(o)
			if err != nil {
				return err
			}
			if err := writeResults(out, benchrig.Results{Meta: meta, Results: res}); err != nil {
				return err
			}
			if toolcli.JSON {
				return toolcli.PrintJSON(benchrig.Results{Meta: meta, Results: res})
			}
			printBench(res)
			printRounds(res)
			fmt.Printf("\nresults: %s\n", out)
			return nil
		},
	}
	c.Flags().BoolVar(&o.ProfileOnly, "profile-only", false, "skip the rate searches: only the profile trials (closed-loop capacity, DUT CPU and XDP program ns per frame), --repeat times per point; for A/B runs of two builds")
	c.Flags().BoolVar(&quick, "quick", false, "quick subset: 64 bytes and IMIX, single flow, 0.5 s trials, 1 repetition")
	c.Flags().StringVar(&scenarios, "scenarios", "", "comma-separated scenario names (default: all)")
	c.Flags().StringVar(&sizes, "sizes", "64,128,256,512,1024,1280,1518,imix", "frame sizes (bytes incl. FCS); imix = 7:4:1 of 64/594/1518")
	c.Flags().StringVar(&flows, "flows", "single,many", "flow modes: single, many (256 destinations in a /24, varied ports)")
	c.Flags().DurationVar(&o.Trial, "trial", time.Second, "length of one trial")
	c.Flags().IntVar(&o.Steps, "steps", 8, "binary search steps for NDR and PDR")
	c.Flags().IntVar(&o.Repeat, "repeat", 3, "repetitions of each point")
	c.Flags().IntVar(&o.Rounds, "rounds", 1, "run the whole selection this many times over, each round every scenario once; points pool all rounds' repetitions, and capacity ratios to the kernel are also given per round (kernel and seg6x of one round minutes apart) with their median")
	c.Flags().StringVar(&out, "out", "bench/results/latest.json", "where to write the JSON results")
	return c
}

func writeResults(path string, res benchrig.Results) error { return writeJSON(path, res) }

// writeJSON writes v as indented JSON to path (creating its directory).
func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ratio prints a ratio of the table, or "-" where it does not apply (0 in the JSON: no reference
// point of the same size and flow mode in the run, or a scenario compared with nothing).
func ratio(x float64, unit string) string {
	if x <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f%s", x, unit)
}

// printProfiles is the table of a --profile-only run.
func printProfiles(res []benchrig.Point) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SCENARIO\tSIZE\tFLOWS\tDUT ns/frame\tXDP ns/frame\tBUSY\tRUNS (DUT ns)\tCPU vs KERNEL\tCPU COST vs BARE\tCAPACITY Mpps\tvs BARE\tvs KERNEL")
	for _, p := range res {
		size := strconv.Itoa(p.FrameSize)
		if p.FrameSize == benchrig.IMIX {
			size = "imix"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%.0f\t%.0f\t%.0f%%\t%.0f\t%s\t%s\t%s\t%s\t%s\n", p.Scenario, size, p.Flows, p.DUTNsPerFrame,
			p.ProgNsPerFrame, 100*p.DUTBusy, p.DUTNsRuns, ratio(p.CPUSpeedupVsKernel, "x"), ratio(p.CPUCostVsBare, "x"),
			ratio(p.CapacityMpps, ""), ratio(p.CapacityVsBare, "x"), ratio(p.CapacityVsKernel, "x"))
	}
	w.Flush()
	fmt.Println(capacityNote)
}

// capacityNote explains the profile columns under both tables.
const capacityNote = `Medians of the repetitions. DUT ns/frame and BUSY: a closed-loop trial (the rig sends every correct
frame back in, keeping the DUT busy; the generator where frames cannot loop); XDP ns/frame: a second
trial with BPF run-time statistics on. BUSY below ~90%: the DUT was not saturated and its figure
includes wake-ups. CAPACITY: the closed loop's rate of correct frames (docs/benchmarks.md).`

// printRounds lists, for a run of several rounds, each round's capacity ratio to the kernel.
func printRounds(res []benchrig.Point) {
	header := false
	for _, p := range res {
		if len(p.CapacityVsKernelRounds) == 0 {
			continue
		}
		if !header {
			fmt.Println("\nCapacity vs the kernel, round by round (each round's own medians; PAIRED: their median):")
			header = true
		}
		size := strconv.Itoa(p.FrameSize)
		if p.FrameSize == benchrig.IMIX {
			size = "imix"
		}
		fmt.Printf("  %-24s %-5s %-7s PAIRED %.2fx  rounds %.2f\n", p.Scenario, size, p.Flows, p.CapacityVsKernelPaired, p.CapacityVsKernelRounds)
	}
}

func printBench(res []benchrig.Point) {
	if len(res) > 0 && len(res[0].NDRRuns) == 0 {
		printProfiles(res)
		return
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SCENARIO\tSIZE\tFLOWS\tNDR Mpps\t±\tPDR Mpps\t±\tOVERLOAD Mpps\tGbps@NDR\tPDR vs BARE\tPDR vs KERNEL (ref)\tDUT ns/frame (XDP)\tCPU vs KERNEL\tCAPACITY Mpps (vs BARE, vs KERNEL)")
	for _, p := range res {
		lim := ""
		if p.GeneratorLimited {
			lim = ">=" // the DUT kept up with the generator: a lower bound
		}
		size := strconv.Itoa(p.FrameSize)
		if p.FrameSize == benchrig.IMIX {
			size = "imix"
		}
		busy := ""
		if p.DUTBusy < 0.9 {
			busy = "*" // the DUT was not saturated: the figure includes its wake-ups
		}
		vsKernel := "-" // no kernel reference at this size and flow mode in the run
		if p.VsKernel > 0 {
			vsKernel = fmt.Sprintf("%.2f (%s)", p.VsKernel, p.KernelRef)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s%.3f\t%.3f\t%s%.3f\t%.3f\t%s%.3f\t%.2f\t%s\t%s\t%.0f%s (%.0f)\t%s\t%s (%s, %s)\n", p.Scenario, size, p.Flows,
			lim, p.NDRMpps, p.NDRSpread, lim, p.PDRMpps, p.PDRSpread, lim, p.OverloadMpps, p.NDRGbps, ratio(p.VsBare, ""), vsKernel,
			p.DUTNsPerFrame, busy, p.ProgNsPerFrame, ratio(p.CPUSpeedupVsKernel, "x"),
			ratio(p.CapacityMpps, ""), ratio(p.CapacityVsBare, "x"), ratio(p.CapacityVsKernel, "x"))
	}
	w.Flush()
	fmt.Println(">= : the DUT lost nothing at the generator's full rate: the figure is the generator's limit, a lower bound.")
	fmt.Println("DUT ns/frame: CPU time of the DUT's receive thread per frame at full rate, with the XDP program's share;")
	fmt.Println("  * : the thread was busy < 90% of the trial (not saturated: includes wake-ups). CPU vs KERNEL: the kernel")
	fmt.Println("  reference's DUT ns/frame over this one's (a speed-up by CPU cost).")
	fmt.Println(capacityNote)
	for _, p := range res {
		if p.VsTenRoutes > 0 {
			size := strconv.Itoa(p.FrameSize)
			if p.FrameSize == benchrig.IMIX {
				size = "imix"
			}
			fmt.Printf("route scale: seg6x H.Encaps with 1M routes vs 10 routes (PDR), %s %s: %.2f (target >= 0.8)\n",
				size, p.Flows, p.VsTenRoutes)
		}
	}
}

// parseCounts reads a comma-separated list of counts; 0 (or nothing) asks for none.
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a count", f)
		}
		if n > 0 {
			out = append(out, n)
		}
	}
	return out, nil
}

func benchControlCmd() *cobra.Command {
	var routes, sids, cpuProfile, routeForm string
	var inFlight, diffLimit int
	c := &cobra.Command{
		Use:   "control [--routes 10000,100000,1000000] [--route-form both] [--in-flight 1] [--diff-limit 0] [--sids 100000] [--cpu-profile FILE]",
		Short: "Control-plane rates: load N encap routes / local SIDs, one more update, a table swap, memory",
		Long: `Loads N encap routes or N End SIDs through the control API (the same gRPC server the daemon runs,
in-process) into a scratch instance inside a namespace of its own, in commits of 50000 routes or
SIDs, and times it. Routes are IPv4 /32s inside 198.18.0.0/15, 131072 per tenant (so 1M routes use 8
tenants), over 1000 distinct segment lists (shared SR policies); sent as one Route operation
each (OBJECTS "routes"), as RouteSet operations (the bulk form: every route of a tenant and segment
list in a commit as one operation, "route-sets"), as route sets whose prefixes are packed bytes
instead of text ("route-sets-packed", RouteSet.prefixes4), or several (--route-form ops, sets,
packed, both = ops and sets, all); by default one commit at
a time, --in-flight N keeps N outstanding (the server commits them one after the other, but
receives and decodes the next while it commits one). --diff-limit N asks each loading commit's
reply to list at most N objects per list and count the rest (CommitRequest.diff_limit, as a bulk
loader would; 0: every object listed, as by default). Then: the median latency of one
more object (one commit each), the time to swap one tenant's whole table, the kernel memory of the
maps (memlock) and the Go heap of the control plane. --cpu-profile writes a Go CPU profile of the
whole run (read it with 'go tool pprof -top bin/seg6x-bench FILE').`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if done, err := reexecInOwnNetns("seg6x-cp"); done || err != nil {
				return err
			}
			rc, err := parseCounts(routes)
			if err != nil {
				return fmt.Errorf("--routes: %w", err)
			}
			sc, err := parseCounts(sids)
			if err != nil {
				return fmt.Errorf("--sids: %w", err)
			}
			meta := benchrig.NewMeta()
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			if inFlight < 1 {
				return fmt.Errorf("--in-flight %d: want 1 or more", inFlight)
			}
			kinds := map[string][]string{"ops": {"routes"}, "sets": {"route-sets"}, "packed": {"route-sets-packed"},
				"both": {"routes", "route-sets"}, "all": {"routes", "route-sets", "route-sets-packed"}}[routeForm]
			if kinds == nil {
				return fmt.Errorf("--route-form %q: want ops, sets, packed, both or all", routeForm)
			}
			if diffLimit < 0 {
				return fmt.Errorf("--diff-limit %d: want 0 (list every object) or more", diffLimit)
			}
			res, err := benchrig.RunControl(rc, sc, benchrig.ControlOptions{RouteKinds: kinds, InFlight: inFlight, DiffLimit: diffLimit})
			if err != nil {
				return err
			}
			if toolcli.JSON {
				return toolcli.PrintJSON(benchrig.Results{Meta: meta, Results: res})
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "OBJECTS\tCOUNT\tLOAD s\tCPU s\tPER s\tONE MORE (ms)\tTABLE SWAP (ms, routes)\tMAPS MiB\tGO HEAP MiB")
			for _, r := range res {
				if r.NotSupported != "" {
					fmt.Fprintf(w, "%s\t%d\t-\t-\t-\t-\t-\t-\t-\tnot supported: %s\n", r.Object, r.Count, r.NotSupported)
					continue
				}
				swap := "-"
				if r.SwapRoutes > 0 {
					swap = fmt.Sprintf("%.0f (%d)", r.SwapMillis, r.SwapRoutes)
				}
				obj := r.Object
				if r.InFlight > 1 {
					obj = fmt.Sprintf("%s (%d in flight)", obj, r.InFlight)
				}
				if r.DiffLimit > 0 {
					obj = fmt.Sprintf("%s (diffs of %d)", obj, r.DiffLimit)
				}
				fmt.Fprintf(w, "%s\t%d\t%.2f\t%.2f\t%.0f\t%.2f\t%s\t%.0f\t%.0f\n", obj, r.Count, r.LoadSeconds, r.LoadCPU, r.PerSecond,
					r.UpdateMillis, swap, r.MapMiB, r.HeapMiB)
			}
			return w.Flush()
		},
	}
	c.Flags().StringVar(&routes, "routes", "10000,100000,1000000", "route counts to load")
	c.Flags().StringVar(&sids, "sids", "100000", "SID counts to load (0: none)")
	c.Flags().StringVar(&routeForm, "route-form", "both", "how routes are sent: ops (one Route operation each), sets (RouteSet operations, one per tenant and segment list per commit), packed (route sets with their prefixes packed), both (ops and sets), all")
	c.Flags().IntVar(&inFlight, "in-flight", 1, "commits the loading client keeps outstanding (1: each waits for the previous reply; 2: the next batch is made and sent while the server commits one)")
	c.Flags().IntVar(&diffLimit, "diff-limit", 0, "the loading commits' diff_limit: list at most N objects per list of each reply, count the rest (0: list all)")
	c.Flags().StringVar(&cpuProfile, "cpu-profile", "", "write a Go CPU profile of the run to this file")
	return c
}

func benchApplyCmd() *cobra.Command {
	var tenants, perTenant int
	c := &cobra.Command{
		Use:   "apply [--tenants 1000] [--routes-per-tenant 100]",
		Short: "A big YAML file applied end to end with seg6x apply -f: apply, apply again, remove",
		Long: `Writes a YAML file of --tenants tenants with --routes-per-tenant IPv4 /32 encap routes each
(1000 x 100 = 101000 objects, about 7 MB), starts a daemon in a namespace of its own, and runs this
binary beside this one as an operator would: "seg6x apply -f FILE" (the daemon's dry run, then the apply), the same
again (no changes), and an empty file with --prune (everything removed). Each step is timed from the
command's start to its exit; CLI CPU is the command's own CPU time (the daemon's is not in it).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if tenants < 1 || perTenant < 1 || perTenant > 131072 {
				return fmt.Errorf("want --tenants 1 or more and --routes-per-tenant 1..131072")
			}
			bin, err := toolcli.Seg6x()
			if err != nil {
				return err
			}
			meta := benchrig.NewMeta()
			res, err := benchrig.RunApplyFile(bin, tenants, perTenant)
			if err != nil {
				return err
			}
			if toolcli.JSON {
				return toolcli.PrintJSON(benchrig.Results{Meta: meta, Results: res})
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "STEP	OBJECTS	SECONDS	CLI CPU s	OUTPUT")
			for _, r := range res {
				fmt.Fprintf(w, "%s\t%d\t%.2f\t%.2f\t%s\n", r.Step, r.Objects, r.Seconds, r.CLICPU, strings.ReplaceAll(r.Output, "\n", "; "))
			}
			return w.Flush()
		},
	}
	c.Flags().IntVar(&tenants, "tenants", 1000, "tenants in the file")
	c.Flags().IntVar(&perTenant, "routes-per-tenant", 100, "routes per tenant")
	return c
}

func benchTCPCmd() *cobra.Command {
	var d time.Duration
	var rounds int
	var outPath string
	c := &cobra.Command{
		Use:   "tcp [--time 5s] [--rounds 3] [--out bench/results/tcp.json]",
		Short: "TCP between two VMs across two hypervisors and a transit node: no overlay vs kernel seg6 vs seg6x XDP vs seg6x tc",
		Long: `Builds the hypervisor lab (vm1 - hv1 - p - hv2 - vm2 in namespaces; every veth with TSO, GSO and
GRO on, as a hypervisor's VM ports; a fabric MTU of 1600) once per mode: plain IPv4 routing (no
overlay), the kernel's seg6 (H.Encaps, End at p, End.DX4), seg6x with every port on XDP, and seg6x
with every port on tc (seg6x under its daemon on each node, as deployed). Then --rounds rounds: in
each, iperf3 runs vm1 -> vm2 for --time with one flow and with four in every mode, the modes' order
rotating from round to round. Reported per (mode, flows), as medians over the rounds: Gbps received,
retransmits, CPU ns per byte (the machine's busy CPU time during the run, all nodes sharing this
kernel, over the bytes delivered) and its softirq part (where the three nodes' forwarding and the
VMs' receive run), the ratio to plain routing's Gbps taken within each round, the lowest and highest
Gbps, and every run; for the seg6x modes also each node's seg6x program time per byte, from one more
one-flow run with kernel.bpf_stats_enabled=1 (kept out of the rounds: statistics cost two clock
reads per program run). Written to --out as a list of records with at least
{"mode","flows","gbps","retransmits","cpu_ns_per_byte"} (the run's date, command, commit and machine
beside it in <out>.meta.json). Method and what limits it: docs/benchmarks.md.`,
		Example: `  seg6x-bench tcp                              # 3 rounds of 5 s: about 3 minutes
  seg6x-bench tcp --rounds 7 --time 10s --out bench/results/tcp.json
  python3 bench/plot_tcp.py bench/results/tcp.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if d < time.Second {
				return fmt.Errorf("--time %s: want at least 1s (iperf3 counts whole seconds)", d)
			}
			bin, err := toolcli.Seg6x()
			if err != nil {
				return err
			}
			meta := benchrig.NewMeta()
			// Interrupted, it stops the running test and removes its labs before exiting.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			labTool, err := toolcli.Sibling("seg6x-lab")
			if err != nil {
				return err
			}
			res, err := benchrig.RunTCP(ctx, bin, labTool, d, rounds, os.Stderr)
			if err != nil {
				return err
			}
			if outPath != "" {
				if err := writeJSON(outPath, res); err != nil {
					return err
				}
				if err := writeJSON(strings.TrimSuffix(outPath, ".json")+".meta.json", meta); err != nil {
					return err
				}
			}
			if toolcli.JSON {
				return toolcli.PrintJSON(res)
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintf(w, "MEDIANS OF %d ROUNDS\n", rounds)
			fmt.Fprintln(w, "MODE\tFLOWS\tGbps\tMIN-MAX\tRETRANSMITS\tCPU ns/BYTE\tSOFTIRQ ns/BYTE\tVS NO OVERLAY")
			for _, r := range res {
				fmt.Fprintf(w, "%s\t%d\t%.2f\t%.1f-%.1f\t%d\t%.3f\t%.3f\t%.2f\n", r.Mode, r.Flows, r.Gbps, r.GbpsMin, r.GbpsMax,
					r.Retransmits, r.CPUNsPerByte, r.SoftirqNsPerByte, r.VsPlain)
			}
			fmt.Fprintln(w, "\nSEG6X PROGRAM TIME PER NODE (one flow, one more run with bpf stats on)\nMODE\tns/BYTE hv1\tp\thv2")
			for _, r := range res {
				if r.ProgNsPerByte != nil {
					fmt.Fprintf(w, "%s\t%.4f\t%.4f\t%.4f\n", r.Mode, r.ProgNsPerByte["hv1"], r.ProgNsPerByte["p"], r.ProgNsPerByte["hv2"])
				}
			}
			return w.Flush()
		},
	}
	c.Flags().DurationVar(&d, "time", 5*time.Second, "iperf3 run time per mode, flow count and round (whole seconds)")
	c.Flags().IntVar(&rounds, "rounds", 3, "rounds: every mode once per round, the order rotating")
	c.Flags().StringVar(&outPath, "out", "", "write the records as JSON to this file (bench/results/tcp.json)")
	return c
}

// reexecInOwnNetns runs this command again inside a network namespace of its own (removed
// afterwards). done is true in the parent, which exits with the child's status.
func reexecInOwnNetns(prefix string) (done bool, err error) {
	code, done, err := testsupport.ReexecInNetns(prefix)
	if err != nil || !done {
		return done, err
	}
	if code != 0 {
		os.Exit(code)
	}
	return true, nil
}

func benchMirrorCmd() *cobra.Command {
	var n, flood int
	var noSwitch bool
	c := &cobra.Command{
		Use:   "mirror [--changes 50] [--flood 5000]",
		Short: "Kernel mirror: how fast kernel route changes reach the fast path, and what switching back to the kernel loses",
		Long: `Runs seg6x daemon --mirror-kernel in a namespace of its own and, through one long-lived
"ip -batch", adds, replaces and deletes seg6 routes one at a time (--changes of each), timing each
from the write of the ip command until the daemon reports the route accelerated (or gone); then
adds --flood routes as fast as ip writes them and deletes them again, timing until the data plane
holds all of them / none (netlink overruns on the way cause full resyncs, counted), and checks no
mirrored route is left stale. Last, on the throughput rig: a kernel seg6 route that seg6x mirrors,
a 40 kpps stream, and seg6x detached mid-stream: the sink counts seg6x's output, the kernel's
output, and what was lost in the switch.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			bin, err := toolcli.Seg6x()
			if err != nil {
				return err
			}
			meta := benchrig.NewMeta()
			res, err := benchrig.RunMirror(bin, n, flood, !noSwitch)
			if err != nil {
				return err
			}
			if toolcli.JSON {
				return toolcli.PrintJSON(benchrig.Results{Meta: meta, Results: res})
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "CHANGE\tCOUNT\tMEDIAN ms\tMAX ms")
			for _, x := range []struct {
				name string
				l    benchrig.Latency
			}{{"add", res.Add}, {"replace", res.Replace}, {"delete", res.Delete}} {
				fmt.Fprintf(w, "%s\t%d\t%.2f\t%.2f\n", x.name, x.l.Count, x.l.Median, x.l.Max)
			}
			w.Flush()
			fmt.Printf("flood: %d routes in the fast path %.2f s after the first was written, all gone %.2f s after the first delete; %d resyncs, %d stale\n",
				res.FloodRoutes, res.FloodAddSeconds, res.FloodDeleteSeconds, res.Resyncs, res.Stale)
			if s := res.Switchover; s != nil {
				fmt.Printf("switchover: sent %d, delivered %d (seg6x %d, kernel %d), lost %d, wrong %d\n",
					s.Sent, s.Good, s.Matched[0], s.Matched[1], s.Sent-min(s.Sent, s.Good), s.Bad)
			}
			return nil
		},
	}
	c.Flags().IntVar(&n, "changes", 50, "single changes of each kind")
	c.Flags().IntVar(&flood, "flood", 5000, "routes added and deleted in one burst")
	c.Flags().BoolVar(&noSwitch, "no-switchover", false, "skip the switchover measurement")
	return c
}
