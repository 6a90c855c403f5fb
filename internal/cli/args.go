package cli

// args.go: the iproute2-style "keyword value" argument parser shared by the object commands.

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
)

// kv parses "key value key value ..." where each key must be in allowed. Keys listed in multi may
// repeat; the others may appear once.
func kv(args []string, allowed []string, multi ...string) (map[string][]string, error) {
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	rep := map[string]bool{}
	for _, m := range multi {
		rep[m] = true
	}
	out := map[string][]string{}
	for i := 0; i < len(args); i += 2 {
		k := args[i]
		if !ok[k] {
			sorted := append([]string(nil), allowed...)
			sort.Strings(sorted)
			return nil, fmt.Errorf("unknown keyword %q; expected one of: %s", k, strings.Join(sorted, ", "))
		}
		if i+1 >= len(args) {
			return nil, fmt.Errorf("%s: missing value", k)
		}
		if len(out[k]) > 0 && !rep[k] {
			return nil, fmt.Errorf("%s given twice", k)
		}
		out[k] = append(out[k], args[i+1])
	}
	return out, nil
}

func one(m map[string][]string, k string) string {
	if v := m[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func parseU32(field, s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", field, s)
	}
	return uint32(v), nil
}

func parseVLAN(s string) (uint16, error) {
	if why := model.VLANProblem(s); why != "" {
		return 0, fmt.Errorf("vlan: %s", why)
	}
	v, _ := strconv.ParseUint(s, 10, 16)
	return uint16(v), nil
}

// parseSegs reads a comma-separated segment list, its addresses reported as field[i].
func parseSegs(field, v string) ([]netip.Addr, error) {
	var out []netip.Addr
	for i, x := range strings.Split(v, ",") {
		a, err := parseAddr(fmt.Sprintf("%s[%d]", field, i), x)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func parseAddr(field, s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return a, fmt.Errorf("%s: %q is not an IP address", field, s)
	}
	return a, nil
}
