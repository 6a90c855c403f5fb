package cli

// policy.go: `seg6x policy add|replace|del|down|up|show`: named SR policies with weighted segment
// lists, which routes name (route add ... policy NAME).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

func policyCmd() *cobra.Command {
	c := &cobra.Command{Use: "policy", Short: "Named SR policies: weighted segment lists for ECMP and fast reroute"}
	add := func(replace bool) *cobra.Command {
		verb := map[bool]string{false: "add", true: "replace"}[replace]
		return &cobra.Command{
			Use:   verb + " NAME [mode encap|encap.red] [src ADDR] [hoplimit N] list SID[,SID...] [weight W] [down] [list ...]",
			Short: verb + " a named policy",
			Long: `A named policy holds 1 to 16 segment lists, each with a weight (default 1). Routes that name it
(seg6x route add PREFIX tenant T policy NAME) spread their flows over the lists that are up, in
proportion to the weights (kept to 1/64 of the flows; every list up gets some), one flow always on one
list: the list is picked by the flow hash the outer flow label carries. A list marked down (here, with
"seg6x policy down", or in the API) hands its flows to the others at once; the flows of the other
lists stay where they are, and no route is rewritten. Every list down: the routes' traffic is dropped
and counted (DROP_POLICY_DOWN). mode, src, hoplimit as for a route.
Examples:
  seg6x policy ` + verb + ` east list fc00:2::1 weight 2 list fc00:3::1 list fc00:4::1,fc00:5::64
  seg6x route add 198.18.2.0/24 tenant blue policy east`,
			Args: cobra.MinimumNArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				p, err := parsePolicy(args[0], args[1:])
				if err != nil {
					return err
				}
				return commit(state.Op{Kind: addOrReplace(replace), Policy: &p})
			},
		}
	}
	del := &cobra.Command{Use: "del NAME", Short: "delete a named policy (no route may name it)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return commit(state.Op{Kind: model.OpDelete, Policy: &model.Policy{Name: args[0]}})
		}}
	mark := func(down bool) *cobra.Command {
		verb := map[bool]string{false: "up", true: "down"}[down]
		return &cobra.Command{Use: verb + " NAME LIST", Short: "mark list LIST (0 = the first) of a policy " + verb,
			Long: "Mark one segment list of a named policy " + verb + ": only the policy's slot tables are rewritten\n" +
				"(one commit; the routes that name it are not touched).",
			Args: cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				return markList(args[0], args[1], down)
			}}
	}
	show := &cobra.Command{Use: "show", Short: "list named policies (their lists' policy ids: seg6x stats)",
		RunE: func(*cobra.Command, []string) error { return showPolicies() }}
	c.AddCommand(add(false), add(true), del, mark(true), mark(false), show)
	return c
}

// parsePolicy reads NAME [mode M] [src ADDR] [hoplimit N] list SEGS [weight W] [down] ...
func parsePolicy(name string, args []string) (model.Policy, error) {
	p := model.Policy{Name: name}
	var cur *model.SegList
	for i := 0; i < len(args); i++ {
		key := args[i]
		if key == "down" && cur != nil {
			cur.Down = true
			continue
		}
		if i+1 >= len(args) {
			return p, fmt.Errorf("%s: missing its value", key)
		}
		v := args[i+1]
		i++
		var err error
		switch {
		case key == "list":
			p.Lists = append(p.Lists, model.SegList{})
			cur = &p.Lists[len(p.Lists)-1]
			if cur.Segs, err = parseSegs(fmt.Sprintf("lists[%d].segs", len(p.Lists)-1), v); err != nil {
				return p, err
			}
		case key == "weight" && cur != nil:
			w, err := strconv.ParseUint(v, 10, 32)
			if err != nil || w == 0 {
				return p, fmt.Errorf("weight: %q is not a positive number", v)
			}
			cur.Weight = uint32(w)
		case key == "mode" && cur == nil:
			p.Mode = v
		case key == "src" && cur == nil:
			if p.Src, err = parseAddr("src", v); err != nil {
				return p, err
			}
		case key == "hoplimit" && cur == nil:
			h, err := strconv.ParseUint(v, 10, 8)
			if err != nil || h == 0 {
				return p, fmt.Errorf("hoplimit: %q is not 1-255", v)
			}
			p.HopLimit = uint8(h)
		default:
			return p, fmt.Errorf("%q: want mode, src, hoplimit (before the lists), list, or after a list weight or down", key)
		}
	}
	if len(p.Lists) == 0 {
		return p, fmt.Errorf("list: missing (list SID[,SID...] [weight W], once per segment list)")
	}
	return p, nil
}

// markList replaces policy name as it runs with list idx marked down (or up).
func markList(name, idx string, down bool) error {
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 {
		return fmt.Errorf("list: %q is not a list number (0 = the first)", idx)
	}
	cur, _, err := fetchState()
	if err != nil {
		return err
	}
	for _, p := range cur.Policies {
		if p.Name != name {
			continue
		}
		if i >= len(p.Lists) {
			return fmt.Errorf("list %d: policy %q has %d lists (0 to %d)", i, name, len(p.Lists), len(p.Lists)-1)
		}
		p.Lists[i].Down = down
		for j := range p.Lists {
			if p.Lists[j].USIDs != nil {
				p.Lists[j].Segs = nil // given as uSIDs: kept as given
			}
		}
		return commit(state.Op{Kind: model.OpReplace, Policy: &p})
	}
	return fmt.Errorf("policy %q does not exist", name)
}

func showPolicies() error {
	cur, _, err := fetchState()
	if err != nil {
		return err
	}
	if g.jsonOut {
		return printJSON(struct {
			Policies []model.Policy `json:"policies"`
		}{orEmpty(cur.Policies)})
	}
	for _, p := range cur.Policies {
		fmt.Printf("policy %s mode %s hoplimit %d", p.Name, p.Mode, p.HopLimit)
		if p.Src.IsValid() {
			fmt.Printf(" src %s", p.Src)
		}
		fmt.Println()
		for i, l := range p.Lists {
			segs := make([]string, len(l.Segs))
			for j, s := range l.Segs {
				segs[j] = s.String()
			}
			state := "up"
			if l.Down {
				state = "DOWN"
			}
			fmt.Printf("  list %d %s weight %d %s (policy %d / %d)\n", i, strings.Join(segs, ","), l.Weight, state, l.PolicyID[0], l.PolicyID[1])
		}
	}
	return nil
}
