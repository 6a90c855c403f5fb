package config

// where.go: the position of a YAML decoding error that yaml.v3 gives without one (the line, and for a
// bad value the key path, found by decoding the document along State's fields).

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
	"gopkg.in/yaml.v3"
)

// excessiveAliasing is about the whole document, not one place in it; searching for one would
// decode alias after alias.
const excessiveAliasing = "document contains excessive aliasing"

// hasLine matches the position yaml.v3 puts first (not a "line 5" that a bad value quotes).
var hasLine = regexp.MustCompile(`^(line \d+: |unmarshal errors:\n)`)

// where adds the position to a decoding error that lacks one: yaml.v3 leaves the line out of syntax
// errors on the first line, of errors a value's own parser returns (netip's), and of its own errors
// about a value (bad !!binary, a bad merge, an alias that contains itself).
func where(b []byte, err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if hasLine.MatchString(msg) || msg == excessiveAliasing {
		return msg
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
			return fmt.Sprintf("line %d: %s", aliasLine(b, m[1]), msg)
		}
		return "line 1: " + msg // a syntax error without a line is on the first
	}
	l := &locator{msg: msg, budget: 1 << 20, expanding: map[*yaml.Node]bool{}}
	t := reflect.TypeOf(model.State{})
	if !l.fails(doc.Content[0], t) {
		return msg
	}
	line, path := l.deepest(doc.Content[0], t, "")
	if path == "" {
		return fmt.Sprintf("line %d: %s", line, msg)
	}
	return fmt.Sprintf("line %d: %s: %s", line, path, msg)
}

var unknownAnchor = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

// aliasLine is the line of the first *name in b (1 if there is none).
func aliasLine(b []byte, name string) int {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte("*"+name))
		if j < 0 {
			return 1
		}
		i += j + 1 + len(name)
		if i == len(b) || bytes.IndexByte([]byte(" \t\r\n,[]{}"), b[i]) >= 0 {
			return 1 + bytes.Count(b[:i], []byte("\n"))
		}
	}
}

// locator finds the node a decoding error is about: following the fields of State, the deepest node
// that on its own fails to decode with the same error (the first in document order, as yaml.v3
// stops at the first). Matching the type keeps a tenant name that looks like a bad address from
// being blamed for a SID's.
type locator struct {
	msg       string
	budget    int                 // decodes left (bounds the search on a huge document)
	expanding map[*yaml.Node]bool // aliases being followed (a cycle is one of the errors)
}

// fails says whether n alone, decoded into a t, gives the error being located.
func (l *locator) fails(n *yaml.Node, t reflect.Type) bool {
	if l.budget <= 0 {
		return false
	}
	l.budget--
	err := n.Decode(reflect.New(t).Interface())
	return err != nil && strings.TrimPrefix(err.Error(), "yaml: ") == l.msg
}

// deepest returns the line and key path (routes[2].prefix) of the deepest failing node under n
// (which fails as a t).
func (l *locator) deepest(n *yaml.Node, t reflect.Type, path string) (int, string) {
	if t.Kind() == reflect.Pointer { // an optional part (a route's usids, bgp): decoded as what it points to
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.AliasNode && n.Alias != nil && !l.expanding[n]:
		l.expanding[n] = true
		defer delete(l.expanding, n)
		if l.fails(n.Alias, t) {
			return l.deepest(n.Alias, t, path)
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		if line, p, ok := l.field(n, t, path); ok {
			return line, p
		}
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for i, c := range n.Content {
			if l.fails(c, t.Elem()) {
				return l.deepest(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	return n.Line, path
}

// field finds the key of mapping n (decoded into struct t) whose value fails, and returns the line
// and key path of the deepest failing node under it. A merged mapping is decoded into the same
// struct: tried whole, then key by key, as a type with its own UnmarshalYAML (state.SID) decodes
// merged keys as plain fields, so the mapping alone may not fail the way it does merged.
func (l *locator) field(n *yaml.Node, t reflect.Type, path string) (int, string, bool) {
	if n.Kind == yaml.AliasNode && n.Alias != nil && !l.expanding[n] {
		l.expanding[n] = true
		defer delete(l.expanding, n)
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return 0, "", false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			vs := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				vs = v.Content
			}
			for _, m := range vs {
				if l.fails(m, t) {
					line, p := l.deepest(m, t, path)
					return line, p, true
				}
				if line, p, ok := l.field(m, t, path); ok {
					return line, p, true
				}
			}
			continue
		}
		if k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if f, ok := fieldByKey(t, k.Value); ok && l.fails(v, f.Type) {
			if path != "" {
				path += "."
			}
			line, p := l.deepest(v, f.Type, path+k.Value)
			return line, p, true
		}
	}
	return 0, "", false
}

// fieldByKey finds the field of struct type t that the YAML key decodes into (as yaml.v3 names them).
func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if f.IsExported() && tag != "-" && name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
