package model

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
	var err error
	if c.Content, err = flattenMerges(n, 0); err != nil {
		return err
	}
	var bits uint8
	for i := 0; i+1 < len(c.Content); i += 2 {
		k, v := c.Content[i], c.Content[i+1]
		if !sidKeys[k.Value] {
			return fmt.Errorf("line %d: field %s not found in type model.SID", k.Line, k.Value)
		}
		if k.Value != "sid" || v.Kind != yaml.ScalarNode || !strings.Contains(v.Value, "/") {
			continue
		}
		addr, b, err := ParseSID(v.Value)
		if err != nil {
			continue // decoded as an address below: its error, which config.Load places at the key
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

// flattenMerges returns the key/value nodes of mapping n with its merge keys (<<) resolved as YAML
// defines them: n's own keys first, then each merged mapping's keys that are not there yet (an
// earlier merged mapping wins over a later one), so that a prefix SID given by a merged mapping is
// read like one given directly.
func flattenMerges(n *yaml.Node, depth int) ([]*yaml.Node, error) {
	if depth > 8 {
		return nil, fmt.Errorf("merge keys nested too deep")
	}
	var own, merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag != "!!merge" {
			own = append(own, k, v)
			continue
		}
		var maps []*yaml.Node
		switch v = deref(v); v.Kind {
		case yaml.MappingNode:
			maps = []*yaml.Node{v}
		case yaml.SequenceNode:
			for _, m := range v.Content {
				maps = append(maps, deref(m))
			}
		}
		for _, m := range maps {
			if m.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("map merge requires map or sequence of maps as the value")
			}
			kv, err := flattenMerges(m, depth+1)
			if err != nil {
				return nil, err
			}
			merged = append(merged, kv...)
		}
		if len(maps) == 0 {
			return nil, fmt.Errorf("map merge requires map or sequence of maps as the value")
		}
	}
	seen := map[string]bool{}
	for i := 0; i < len(own); i += 2 {
		seen[own[i].Value] = true
	}
	out := own
	for i := 0; i+1 < len(merged); i += 2 {
		if !seen[merged[i].Value] {
			seen[merged[i].Value] = true
			out = append(out, merged[i], merged[i+1])
		}
	}
	return out, nil
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}
