package config

// strict.go: what yaml.v3 lets through that a config must not: a float (a fraction or an exponent)
// for an integer field, which yaml.v3 truncates (table: 101.9 became 101). A scan of
// the bytes for an integer key followed by such a number finds candidates (milliseconds on a file of
// 100,000 routes); only then is the document walked along State's fields to say where.

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
	"gopkg.in/yaml.v3"
)

// intKeys are the YAML keys of State's integer fields, at any depth.
var intKeys = func() []string {
	seen, keys := map[reflect.Type]bool{}, map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for name, ft := range yamlFields(t) {
			if isInt(ft) {
				keys[name] = true
			}
			walk(ft)
		}
	}
	walk(reflect.TypeOf(model.State{}))
	out := make([]string, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}()

// mayHaveFraction says whether b has an integer key followed by a number with a fraction or an
// exponent (a candidate: the key may be part of another, the walk decides).
func mayHaveFraction(b []byte) bool {
	for _, k := range intKeys {
		pat := []byte(k + ":")
		for i := 0; ; {
			j := bytes.Index(b[i:], pat)
			if j < 0 {
				break
			}
			p := i + j + len(pat)
			for p < len(b) && (b[p] == ' ' || b[p] == '\t') {
				p++
			}
			if p < len(b) && (b[p] == '-' || b[p] == '+') {
				p++
			}
			for p < len(b) && (b[p] >= '0' && b[p] <= '9' || b[p] == '_') {
				p++
			}
			if p < len(b) && (b[p] == '.' || b[p] == 'e' || b[p] == 'E') {
				return true
			}
			i += j + len(pat)
		}
	}
	return false
}

func isInt(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// checkFractions returns, for a document b that may give an integer field a float, the first such
// field as "line N: path: VALUE is not an integer"; else nil.
func checkFractions(b []byte) error {
	if !mayHaveFraction(b) {
		return nil
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil {
		return nil // the decoder says what is wrong
	}
	return checkStrict(&doc)
}

// checkStrict returns the first integer field of doc given a float, as "line N: path: VALUE is not an
// integer", or nil.
func checkStrict(doc *yaml.Node) error {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	return strictWalk(doc.Content[0], reflect.TypeOf(model.State{}), "", 0)
}

func strictWalk(n *yaml.Node, t reflect.Type, path string, depth int) error {
	if depth > 64 {
		return nil // aliases deeper than any config: left to the decoder
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return strictWalk(n.Alias, t, path, depth+1)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case isInt(t):
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
			return fmt.Errorf("line %d: %s: %s is not an integer", n.Line, path, n.Value)
		}
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			if err := strictWalk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" { // a merge: its keys are this mapping's
				if err := strictWalk(v, t, path, depth+1); err != nil {
					return err
				}
				continue
			}
			ft, ok := fields[k.Value]
			if !ok {
				continue // an unknown key: the decoder says so
			}
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if err := strictWalk(v, ft, p, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// yamlFields are t's fields by their YAML key (inline structs' included).
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}
