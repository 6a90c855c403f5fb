package cli

// complete.go: shell completion past the command names and flags cobra completes itself: the
// keywords the object commands take after their names (tenant, route, sid: read from their own
// parsers, so completion and parsing cannot disagree; policy and domain: their small grammars) and
// the values that follow some of them: behaviors and flavors from state.Behaviors, interface names
// from the host, and tenant, policy, route and SID names from a running daemon. The daemon is asked
// over its socket (or --server) only: a completion never opens an instance, creates its directory or
// takes its lock, and offers nothing when no daemon answers. Cobra's hidden __complete command serves
// the bash, zsh and fish scripts of `seg6x completion`.

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/spf13/cobra"
)

// values offers candidates for the word being completed, given the command's words before it.
// A candidate may carry a description after a tab ("End.DT4\tdecapsulate, ...").
type values func(args []string) []string

// keywordArgs is the grammar of a command that takes positional words, then "keyword value" pairs.
type keywordArgs struct {
	lead     []values                   // the positional words (a nil entry: nothing to offer)
	keywords func(kw []string) []string // the keywords that may come next, given the pairs so far
	repeat   []string                   // keywords that may be given more than once
	after    map[string]values          // what may follow a keyword
}

// addCompletions attaches the completions to the commands of root's tree that take them.
func addCompletions(root *cobra.Command) {
	completionState.done = false // a new tree, a new question (tests build many)
	byPath := map[string]cobra.CompletionFunc{
		"tenant add":     tenantArgs(nil).complete,
		"tenant replace": tenantArgs(tenantNames).complete,
		"tenant del":     positional(tenantNames),
		"route add":      completeRoute(routeArgs(nil)),
		"route replace":  completeRoute(routeArgs(routePrefixes)),
		"route del":      routeDelArgs().complete,
		"sid add":        sidArgs(nil).complete,
		"sid replace":    sidArgs(sidNames).complete,
		"sid del":        positional(sidNames),
		"policy add":     completePolicy(nil),
		"policy replace": completePolicy(policyNames),
		"policy del":     positional(policyNames),
		"policy down":    positional(policyNames, policyLists),
		"policy up":      positional(policyNames, policyLists),
		"domain set":     domainArgs().complete,
		"attach":         eachArg(hostInterfaces),
		"detach":         eachArg(attachedInterfaces),
	}
	flags := map[string]map[string]values{
		"attach": {
			"role": fixed(model.RoleFabric, model.RoleAccess, model.RoleAuto),
			"mode": fixed("xdp", model.ModeGeneric, model.ModeTC),
		},
		"apply":   {"dev": hostInterfaces},
		"explain": {"dev": hostInterfaces},
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), root.Name()), " ")
		if f := byPath[path]; f != nil && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = f
		}
		for name, v := range flags[path] {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, flagValues(v))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

const noFiles = cobra.ShellCompDirectiveNoFileComp

// complete offers what may come at the word being completed.
func (k keywordArgs) complete(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) < len(k.lead) {
		return offer(k.lead[len(args)], args, toComplete), noFiles
	}
	kw := args[len(k.lead):]
	if len(kw)%2 == 1 {
		return offer(k.after[kw[len(kw)-1]], args, toComplete), noFiles
	}
	return offer(func([]string) []string { return k.next(kw) }, args, toComplete), noFiles
}

// next is the keywords that may follow the pairs kw: those allowed, less the ones given that may
// not repeat.
func (k keywordArgs) next(kw []string) []string {
	var out []string
	for _, w := range k.keywords(kw) {
		if slices.Contains(k.repeat, w) || !slices.Contains(pairKeys(kw), w) {
			out = append(out, w)
		}
	}
	return out
}

// pairKeys is the keywords of "keyword value" pairs.
func pairKeys(kw []string) []string {
	var out []string
	for i := 0; i < len(kw); i += 2 {
		out = append(out, kw[i])
	}
	return out
}

// pairValue is the value given to keyword key in the pairs kw, or "".
func pairValue(kw []string, key string) string {
	for i := 0; i+1 < len(kw); i += 2 {
		if kw[i] == key {
			return kw[i+1]
		}
	}
	return ""
}

// parserKeywords returns the keywords a parser built on kv accepts and those it lets repeat, read from
// the parser itself: kv lists the keywords in its error for an unknown one ("expected one of: a, b"),
// and refuses a second use of one that may not repeat ("k given twice").
func parserKeywords(parse func(words []string) error) (keys, repeat []string) {
	err := parse([]string{"?", ""})
	if err == nil {
		return nil, nil
	}
	_, list, ok := strings.Cut(err.Error(), "expected one of: ")
	if !ok {
		return nil, nil
	}
	keys = strings.Split(list, ", ")
	for _, k := range keys {
		if err := parse([]string{k, "", k, ""}); err == nil || !strings.Contains(err.Error(), "given twice") {
			repeat = append(repeat, k)
		}
	}
	return keys, repeat
}

func tenantArgs(name values) keywordArgs {
	keys, repeat := parserKeywords(func(w []string) error { _, err := parseTenant("t", w); return err })
	return keywordArgs{
		lead:     []values{name},
		keywords: func([]string) []string { return keys },
		repeat:   repeat,
		after: map[string]values{
			"dev":       hostInterfaces,
			"mss-clamp": fixed(model.MSSClampAuto, model.MSSClampOff),
		},
	}
}

func routeArgs(prefix values) keywordArgs {
	_, repeat := parserKeywords(func(w []string) error { _, err := parseRoute("::/0", w); return err })
	return keywordArgs{
		lead:     []values{prefix},
		keywords: func([]string) []string { return routeKeys },
		repeat:   repeat,
		after: map[string]values{
			"tenant": tenantNames,
			"encap":  fixed("seg6"),
			"mode":   fixed(model.ModeEncap, model.ModeEncapRed),
			"policy": policyNames,
		},
	}
}

// completeRoute is keywordArgs.complete with a route's uSID list: "usids BLOCK [nf N] USID..." runs
// until the next keyword, so within it the next word is a uSID (nothing to offer) or a keyword.
func completeRoute(k keywordArgs) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) <= len(k.lead) {
			return k.complete(cmd, args, toComplete)
		}
		kw := args[len(k.lead):]
		rest, run := cutUSIDs(kw)
		at := -1 // where the uSID list starts (cutUSIDs looks at keyword positions only)
		for i := 0; i < len(kw) && at < 0; i += 2 {
			if kw[i] == "usids" {
				at = i
			}
		}
		if run == nil {
			return k.complete(cmd, args, toComplete)
		}
		if len(rest) > at {
			// A keyword ended the list: pairs again, with the list standing as one ("usids" "").
			pairs := append(slices.Clone(args[:len(k.lead)+at]), "usids", "")
			return k.complete(cmd, append(pairs, rest[at:]...), toComplete)
		}
		switch {
		case len(run) == 0, len(run) == 2 && run[1] == "nf":
			return nil, noFiles // BLOCK, or nf's N
		}
		next := k.next(append(rest, "usids", ""))
		if len(run) == 1 {
			next = append([]string{"nf"}, next...)
		}
		return offer(fixed(next...), args, toComplete), noFiles
	}
}

func routeDelArgs() keywordArgs {
	return keywordArgs{
		lead:     []values{routePrefixes},
		keywords: func([]string) []string { return []string{"tenant"} },
		after:    map[string]values{"tenant": routeTenants},
	}
}

func sidArgs(sid values) keywordArgs {
	keys, repeat := parserKeywords(func(w []string) error { _, err := parseSID("::1", w); return err })
	return keywordArgs{
		lead: []values{sid},
		keywords: func(kw []string) []string {
			b := model.BehaviorNamed(pairValue(kw, "action"))
			if b == nil {
				return []string{"action"} // the behavior says which of the others apply
			}
			var out []string
			for _, k := range keys {
				if sidTakes(b, k) {
					out = append(out, k)
				}
			}
			return out
		},
		repeat: repeat,
		after: map[string]values{
			"action":  behaviors,
			"tenant":  tenantNames,
			"flavors": flavorList,
		},
	}
}

// sidTakes says whether a SID of behavior b takes keyword k (a keyword not known here: yes).
func sidTakes(b *model.Behavior, k string) bool {
	switch k {
	case string(model.ParamNH4), string(model.ParamNH6), string(model.ParamTable), string(model.ParamSegs):
		return k == string(b.Needs)
	case "tenant":
		return b.TakesTenant()
	case "src":
		return b.Needs == model.ParamSegs
	case "vlan":
		return b.Decap
	case "flavors":
		return len(b.Flavors) > 0
	case "lblen", "nflen":
		return slices.Contains(b.Flavors, model.FlavorNextCSID)
	}
	return true
}

// behaviors is every endpoint behavior, each with its help line.
func behaviors([]string) []string {
	var out []string
	for _, b := range model.Behaviors {
		out = append(out, b.Name+"\t"+b.Help)
	}
	return out
}

// flavorList completes a comma-separated list of the flavors the SID's behavior allows (any
// behavior's when it has none yet), after the flavors already written.
func flavorList(args []string) []string {
	var allowed []string
	if b := model.BehaviorNamed(pairValue(args[min(1, len(args)):], "action")); b != nil {
		allowed = b.Flavors
	} else {
		for _, b := range model.Behaviors {
			for _, f := range b.Flavors {
				if !slices.Contains(allowed, f) {
					allowed = append(allowed, f)
				}
			}
		}
	}
	return allowed
}

// completePolicy follows parsePolicy, which has no keyword table: mode, src and hoplimit before
// the first list; then "list SEGS", each followed by "weight W" and "down" (a word alone).
func completePolicy(name values) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return offer(name, args, toComplete), noFiles
		}
		inList, used := false, []string{}
		for i := 1; i < len(args); i++ {
			k := args[i]
			if k == "down" && inList {
				used = append(used, k)
				continue
			}
			if i+1 == len(args) { // completing k's value
				if k == "mode" {
					return offer(fixed(model.ModeEncap, model.ModeEncapRed), args, toComplete), noFiles
				}
				return nil, noFiles
			}
			if k == "list" {
				inList, used = true, nil
			}
			used = append(used, k)
			i++
		}
		next := []string{"mode", "src", "hoplimit", "list"}
		if inList {
			next = []string{"list", "weight", "down"}
		}
		var out []string
		for _, k := range next {
			if k == "list" || !slices.Contains(used, k) {
				out = append(out, k)
			}
		}
		return offer(fixed(out...), args, toComplete), noFiles
	}
}

// domainArgs: `domain set` reads its two lists with kv in the command itself.
func domainArgs() keywordArgs {
	return keywordArgs{
		keywords: func([]string) []string { return []string{"locators", "sources"} },
		after:    map[string]values{"locators": fixed("none"), "sources": fixed("none")},
	}
}

// positional completes each positional word in turn.
func positional(each ...values) cobra.CompletionFunc {
	return keywordArgs{lead: each, keywords: func([]string) []string { return nil }}.complete
}

// eachArg completes any number of words from v, less those already given.
func eachArg(v values) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, c := range v(args) {
			if !slices.Contains(args, c) {
				out = append(out, c)
			}
		}
		return offer(fixed(out...), args, toComplete), noFiles
	}
}

func flagValues(v values) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return offer(v, args, toComplete), noFiles
	}
}

func fixed(words ...string) values { return func([]string) []string { return words } }

// offer is v's candidates that start with toComplete (for a comma-separated list, its last element;
// the elements before it are kept).
func offer(v values, args []string, toComplete string) []string {
	if v == nil {
		return nil
	}
	head, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		head, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []string
	for _, c := range v(args) {
		if name, _, _ := strings.Cut(c, "\t"); strings.HasPrefix(name, last) {
			out = append(out, head+c)
		}
	}
	return out
}

// hostInterfaces is the host's network interfaces.
func hostInterfaces([]string) []string {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var out []string
	for _, it := range ifs {
		out = append(out, it.Name)
	}
	return out
}

// attachedInterfaces is the interfaces the daemon has attached, or the host's when none answers.
func attachedInterfaces(args []string) []string {
	st, ok := daemonState()
	if !ok {
		return hostInterfaces(args)
	}
	var out []string
	for _, it := range st.Interfaces {
		out = append(out, it.Name)
	}
	return out
}

func tenantNames([]string) []string {
	st, _ := daemonState()
	var out []string
	for _, t := range st.Tenants {
		out = append(out, t.Name)
	}
	return out
}

func policyNames([]string) []string {
	st, _ := daemonState()
	var out []string
	for _, p := range st.Policies {
		out = append(out, p.Name)
	}
	return out
}

// policyLists is the list numbers of the policy named by args[0].
func policyLists(args []string) []string {
	st, _ := daemonState()
	var out []string
	for _, p := range st.Policies {
		if len(args) > 0 && p.Name == args[0] {
			for i, l := range p.Lists {
				out = append(out, strconv.Itoa(i)+"\t"+map[bool]string{false: "up", true: "down"}[l.Down])
			}
		}
	}
	return out
}

func sidNames([]string) []string {
	st, _ := daemonState()
	var out []string
	for _, s := range st.SIDs {
		out = append(out, s.Name()+"\t"+s.Action)
	}
	return out
}

// routePrefixes is the prefixes of the routes, each once.
func routePrefixes([]string) []string {
	st, _ := daemonState()
	var out []string
	for _, r := range st.Routes {
		if p := r.Prefix.String(); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// routeTenants is the tenants with a route to the prefix args[0].
func routeTenants(args []string) []string {
	st, _ := daemonState()
	var out []string
	for _, r := range st.Routes {
		if len(args) > 0 && r.Prefix.String() == args[0] {
			out = append(out, r.Tenant)
		}
	}
	return out
}

// completionState caches daemonState for the one completion a process serves.
var completionState struct {
	done bool
	st   model.State
	ok   bool
}

// daemonState is the running state as a daemon serves it; false when none answers. Unlike connect()
// it never falls back to opening the instance in-process: it only dials the socket (or --server).
func daemonState() (model.State, bool) {
	if !completionState.done {
		completionState.st, completionState.ok = askDaemon()
		completionState.done = true
	}
	return completionState.st, completionState.ok
}

func askDaemon() (model.State, bool) {
	var c pb.ControlClient
	var done func()
	var err error
	if g.server != "" {
		c, done, err = api.Connect(api.Target{Addr: g.server, TLS: g.tls}) // TCP only: no instance directory
	} else {
		sock := g.socket
		if sock == "" {
			sock = api.SocketPath(g.dir)
		}
		if _, err := os.Stat(sock); err != nil {
			return model.State{}, false
		}
		c, done, err = api.DialSocket(sock)
	}
	if err != nil {
		return model.State{}, false
	}
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	stream, err := c.Show(ctx, &pb.ShowRequest{})
	if err != nil {
		return model.State{}, false
	}
	var chunks []*pb.StateChunk
	for {
		ch, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return model.State{}, false
		}
		chunks = append(chunks, ch)
	}
	st, _, err := api.StateFromChunks(chunks)
	return st, err == nil
}
