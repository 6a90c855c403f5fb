package state

// sidyaml.go: a SID's "sid" key in YAML is an address or a prefix (ADDR/LEN: a SID served by prefix,
// SID.Bits). The rest of the mapping decodes as usual, unknown keys refused as the strict decoder
// refuses them elsewhere.

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// sidKeys are the YAML keys of a SID.
var sidKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[SID]()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "-" && name != "" {
			keys[name] = true
		}
	}
	return keys
}()

// UnmarshalYAML reads a SID mapping whose "sid" may be a prefix.
func (s *SID) UnmarshalYAML(n *yaml.Node) error {
	type plain SID // the fields without this method
	if n.Kind != yaml.MappingNode {
		var p plain
		if err := n.Decode(&p); err != nil {
			return err
		}
		*s = SID(p)
		return nil
	}
	c := *n
	c.Content = append([]*yaml.Node(nil), n.Content...)
	var bits uint8
	for i := 0; i+1 < len(c.Content); i += 2 {
		k, v := c.Content[i], c.Content[i+1]
		if !sidKeys[k.Value] && k.Tag != "!!merge" {
			return fmt.Errorf("line %d: field %s not found in type state.SID", k.Line, k.Value)
		}
		if k.Value != "sid" || v.Kind != yaml.ScalarNode || !strings.Contains(v.Value, "/") {
			continue
		}
		addr, b, err := ParseSID(v.Value)
		if err != nil {
			return fmt.Errorf("line %d: sid: %q is not an IPv6 address or prefix", v.Line, v.Value)
		}
		nv := *v
		nv.Value = addr.String()
		c.Content[i+1] = &nv
		bits = b
	}
	var p plain
	if err := c.Decode(&p); err != nil {
		return err
	}
	*s = SID(p)
	s.Bits = bits
	return nil
}
