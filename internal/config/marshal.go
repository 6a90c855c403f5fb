package config

// marshal.go: a state written as the YAML that Parse reads back: every field by its yaml tag, with
// omitempty meaning Go's zero value. (yaml.v3's own omitempty takes a struct with no exported fields
// for empty, so it dropped every netip.Addr: a route's src, a SID's nh4 and nh6.)

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
	"gopkg.in/yaml.v3"
)

// Marshal renders a state as the YAML that Load reads back (ids and resolved fields, tagged
// yaml:"-", left out).
func Marshal(s model.State) ([]byte, error) {
	n, err := encode(reflect.ValueOf(s), "")
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(n)
}

var (
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	yamlMarshaler = reflect.TypeFor[yaml.Marshaler]()
)

// ownEncoding says whether yaml.v3 encodes a t through a method of its own (netip.Addr, netip.Prefix).
func ownEncoding(t reflect.Type) bool {
	return t.Implements(textMarshaler) || t.Implements(yamlMarshaler)
}

// encode turns v into a node: a struct of the model as a mapping of its tagged fields, a slice of
// them as a sequence, anything else as yaml.v3 encodes it. path names v in errors.
func encode(v reflect.Value, path string) (*yaml.Node, error) {
	t := v.Type()
	switch {
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && !ownEncoding(t.Elem()):
		if v.IsNil() {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
		}
		return encode(v.Elem(), path)
	case t.Kind() == reflect.Struct && !ownEncoding(t):
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			if !f.IsExported() || tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == "" {
				name = strings.ToLower(f.Name) // yaml.v3's default key
			}
			fv := v.Field(i)
			n, err := encode(fv, strings.TrimPrefix(path+"."+name, "."))
			if err != nil {
				return nil, err
			}
			if opts == "omitempty" && empty(fv, n) {
				continue
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}, n)
		}
		if sd, ok := v.Interface().(model.SID); ok && sd.SID.IsValid() && len(m.Content) >= 2 && m.Content[0].Value == "sid" {
			m.Content[1].Value = sd.Name() // a SID served by prefix is written ADDR/LEN
		}
		if r, ok := v.Interface().(model.Route); ok && r.USIDs != nil {
			m.Content = dropKey(m.Content, "segs") // a route written as uSIDs: its containers follow from them
		}
		if l, ok := v.Interface().(model.SegList); ok && l.USIDs != nil {
			m.Content = dropKey(m.Content, "segs") // the same for a named policy's list
		}
		return m, nil
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct && !ownEncoding(t.Elem()):
		s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i := 0; i < v.Len(); i++ {
			n, err := encode(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			s.Content = append(s.Content, n)
		}
		return s, nil
	}
	var n yaml.Node
	if err := n.Encode(v.Interface()); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &n, nil
}

// dropKey removes key and its value from the contents of a mapping node.
func dropKey(content []*yaml.Node, key string) []*yaml.Node {
	for i := 0; i+1 < len(content); i += 2 {
		if content[i].Value == key {
			return append(content[:i:i], content[i+2:]...)
		}
	}
	return content
}

// empty is omitempty's test: the zero value (an unset netip.Addr included), or nothing to write (an
// empty list, a struct whose fields are all left out).
func empty(v reflect.Value, n *yaml.Node) bool {
	return v.IsZero() || ((n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && len(n.Content) == 0)
}
