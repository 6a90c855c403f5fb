package cli

// sid.go: `seg6x sid add|replace|del|show`: local SIDs and their endpoint behaviors.

import (
	"fmt"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/plugincfg"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

func sidCmd() *cobra.Command {
	c := &cobra.Command{Use: "sid", Short: "Local SIDs: " + strings.Join(model.Actions, ", ")}
	add := func(replace bool) *cobra.Command {
		verb := map[bool]string{false: "add", true: "replace"}[replace]
		return &cobra.Command{
			Use: verb + " SID action ACTION [nh4 ADDR | nh6 ADDR | table ID | tenant NAME | segs SID[,SID...] [src ADDR]]" +
				" [vlan VID] [flavors FLAVOR[,FLAVOR] [lblen N] [nflen N]] | action plugin NAME [tenant NAME] [vlan VID] [KEY=VALUE ...]",
			Short: verb + " a local SID",
			Long: `Bind an endpoint behavior to SID: an IPv6 address (matched exactly), or a prefix ADDR/LEN served by
longest match (a uSID locator's uN, a service SID with argument bits; an exact SID is found first).
` + model.BehaviorHelp() + `
Flavors (comma-separated):
  next-csid  RFC 9800 NEXT-C-SID, on End (uN) and End.X (uA): while the destination's argument is not
             zero, the next uSID is shifted into place; lblen / nflen: the locator block and node
             function lengths in bits, multiples of 8, default 32 and 16
  psp        RFC 8986 penultimate segment pop, on End, End.X, End.T: the SRH goes where segments left
             becomes 0 (the kernel has it on End only, and ignores it there with next-csid)
  usp        ultimate segment pop (End, End.X, End.T): segments left 0 on arrival: the SRH goes, the
             packet is this node's
  usd        ultimate segment decapsulation (End, End.T): segments left 0 or no SRH and an inner IPv4 /
             IPv6 packet: decapsulated, looked up in the main table (End) or the SID's (End.T)
Examples:
  seg6x sid ` + verb + ` fc00:1::64 action End.DT4 tenant blue vlan 100
  seg6x sid ` + verb + ` fcbb:0:100::/48 action End flavors next-csid             # uN
  seg6x sid ` + verb + ` fcbb:0:100:e001::/64 action End.X nh6 fc00:12::2 flavors next-csid nflen 32   # uA
  seg6x sid ` + verb + ` fcbb:0:100:e004::/64 action End.DT4 tenant blue          # uDT4
  seg6x sid ` + verb + ` fc00:1::4 action End flavors psp,usd
  seg6x sid ` + verb + ` fc00:1::7 action End.B6.Encaps segs fc00:5::1,fc00:6::64   # binding SID
  seg6x sid ` + verb + ` fc00:1::d action plugin ttlgate tenant blue min_ttl=5       # seg6x plugin load first
A plugin SID runs the loaded plugin NAME (seg6x plugin load) with the settings KEY=VALUE that its
configuration names (seg6x plugin show NAME); its tenant (or table) is where DT verdicts decapsulate.`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				sd, err := parseSID(args[0], args[1:])
				if err != nil {
					return err
				}
				return commit(state.Op{Kind: addOrReplace(replace), SID: &sd})
			},
		}
	}
	del := &cobra.Command{
		Use:   "del SID",
		Short: "delete a local SID",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, _, err := model.ParseSID(args[0])
			if err != nil {
				return fmt.Errorf("sid: %q is not an IPv6 address or prefix", args[0])
			}
			return commit(state.Op{Kind: model.OpDelete, SID: &model.SID{SID: a}})
		},
	}
	showC := &cobra.Command{Use: "show", Short: "list local SIDs", Args: cobra.NoArgs}
	var so showOptions
	so.flags(showC)
	showC.RunE = func(*cobra.Command, []string) error { return show("sids", so) }
	c.AddCommand(add(false), add(true), del, showC)
	return c
}

// pluginArgs takes a plugin SID's words out of args: the plugin's name after "action plugin", and
// every KEY=VALUE (its settings).
func pluginArgs(sd *model.SID, args []string) ([]string, error) {
	var rest, words []string
	for _, a := range args {
		if strings.Contains(a, "=") {
			words = append(words, a)
		} else {
			rest = append(rest, a)
		}
	}
	for i := 0; i+1 < len(rest); i++ {
		if rest[i] == "action" && rest[i+1] == "plugin" {
			if i+2 >= len(rest) {
				return nil, fmt.Errorf("action plugin NAME: the name of a loaded plugin is missing (seg6x plugin show)")
			}
			sd.Plugin = rest[i+2]
			rest = append(rest[:i+2:i+2], rest[i+3:]...)
			break
		}
	}
	if len(words) == 0 {
		return rest, nil
	}
	if sd.Plugin == "" {
		return nil, fmt.Errorf("%s: KEY=VALUE settings are a plugin's (action plugin NAME)", words[0])
	}
	settings, err := plugincfg.ParseSettings(words)
	if err != nil {
		return nil, err
	}
	sd.Config = map[string]string{}
	for _, s := range settings {
		if _, dup := sd.Config[s.Key]; dup {
			return nil, fmt.Errorf("%s: given twice", s.Key)
		}
		sd.Config[s.Key] = s.Value
	}
	return rest, nil
}

func parseSID(sid string, args []string) (model.SID, error) {
	var sd model.SID
	var err error
	if sd.SID, sd.Bits, err = model.ParseSID(sid); err != nil {
		return sd, fmt.Errorf("sid: %q is not an IPv6 address or prefix", sid)
	}
	args, err = pluginArgs(&sd, args)
	if err != nil {
		return sd, err
	}
	m, err := kv(args, []string{"action", "nh4", "nh6", "table", "tenant", "vlan", "flavors", "lblen", "nflen", "segs", "src"})
	if err != nil {
		return sd, err
	}
	if sd.Action = one(m, "action"); sd.Action == "" {
		return sd, fmt.Errorf("action: missing (one of %v)", model.Actions)
	}
	if v := one(m, "nh4"); v != "" {
		if sd.NH4, err = parseAddr("nh4", v); err != nil {
			return sd, err
		}
	}
	if v := one(m, "nh6"); v != "" {
		if sd.NH6, err = parseAddr("nh6", v); err != nil {
			return sd, err
		}
	}
	if v := one(m, "table"); v != "" {
		if sd.Table, err = parseU32("table", v); err != nil {
			return sd, err
		}
	}
	sd.Tenant = one(m, "tenant")
	if v := one(m, "segs"); v != "" {
		if sd.Segs, err = parseSegs("segs", v); err != nil {
			return sd, err
		}
	}
	if v := one(m, "src"); v != "" {
		if sd.Src, err = parseAddr("src", v); err != nil {
			return sd, err
		}
	}
	if v := one(m, "flavors"); v != "" {
		sd.Flavors = strings.Split(v, ",")
	}
	for _, x := range []struct {
		key string
		to  *uint8
	}{{"lblen", &sd.LBLen}, {"nflen", &sd.NFLen}} {
		if v := one(m, x.key); v != "" {
			n, err := parseU32(x.key, v)
			if err != nil || n > 128 {
				return sd, fmt.Errorf("%s: %q is not a length in bits (8 to 120)", x.key, v)
			}
			*x.to = uint8(n)
		}
	}
	if v := one(m, "vlan"); v != "" {
		if sd.VLAN, err = parseVLAN(v); err != nil {
			return sd, err
		}
	}
	return sd, nil
}
