// Package reference writes the YAML reference of the seg6x config file (docs/yaml-reference.md) from
// the model itself: every key the decoder takes (internal/config's view of state.State's yaml tags),
// what it takes in the words of the decoding errors, whether the object needs it, the values the model
// has a table of, and the field's doc comment read from internal/state's source. Its test checks the
// file is what this package writes and that the keys are the decoder's, so the reference cannot drift.
// It is apart from internal/config so that the seg6x binary does not link go/parser.
package reference

//go:generate go run ./gen -o ../../../docs/yaml-reference.md

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/seg6x/seg6x/internal/config"
	"github.com/seg6x/seg6x/internal/model"
)

// Command regenerates the reference (from the repository's root).
const Command = "go run ./internal/config/reference/gen > docs/yaml-reference.md"

// Entry is one key of the file.
type Entry struct {
	Path     string // tenants[].ports[].vlan: [] after a list, . between keys
	Section  string // the top-level key it is under
	Words    string // what it takes: "an address", "a list of tenants", "a mapping"
	Required bool   // the object needs it (the tag has no omitempty)
	Values   []string
	Note     string       // more about the values ("or an MSS from 88 to 65534")
	Doc      string       // what it is, from the doc comments (not yet in the file's words)
	Type     reflect.Type // the Go type (pointers removed)
	Key      config.Key
	// DocOf is the struct type Doc is about: the key's owner, or for a type's doc, that type.
	DocOf reflect.Type
	// DocField is the Go name of the field whose doc Doc is, "" for a type's.
	DocField string
}

// modelPkg is the package of the model's types.
var modelPkg = reflect.TypeFor[model.State]().PkgPath()

// Entries are every key of the file, depth first in declaration order.
func Entries() ([]Entry, error) {
	dir, err := modelDir()
	if err != nil {
		return nil, err
	}
	c, err := readComments(dir)
	if err != nil {
		return nil, err
	}
	var out []Entry
	if err := walk(reflect.TypeFor[model.State](), "", "", c, &out, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	var undocumented []string
	for _, e := range out {
		if e.Doc == "" {
			undocumented = append(undocumented, e.Key.Owner.Name()+"."+e.Key.Field.Name)
		}
	}
	if len(undocumented) > 0 {
		return nil, fmt.Errorf("fields without a doc comment in internal/model (add one): %s", strings.Join(undocumented, ", "))
	}
	return out, nil
}

func walk(t reflect.Type, prefix, section string, c *comments, out *[]Entry, on map[reflect.Type]bool) error {
	if on[t] {
		return fmt.Errorf("%s: %s contains itself", prefix, t)
	}
	on[t] = true
	defer delete(on, t)
	for _, k := range config.Keys(t) {
		path := prefix + k.Name
		sec := section
		if sec == "" {
			sec = k.Name
		}
		ft := deref(k.Field.Type)
		e := Entry{Path: path, Section: sec, Required: !k.OmitEmpty, Type: ft, Key: k}
		words, err := wordsFor(path, ft)
		if err != nil {
			return err
		}
		e.Words = words
		if a, ok := allowed()[path]; ok {
			e.Values, e.Note = a.Values, a.Note
		}
		e.Doc, e.DocOf, e.DocField = docOf(k, ft, c)
		*out = append(*out, e)
		switch {
		case isModel(ft):
			err = walk(ft, path+".", sec, c, out, on)
		case (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) && isModel(deref(ft.Elem())):
			err = walk(deref(ft.Elem()), path+"[].", sec, c, out, on)
		case ft.Kind() == reflect.Map && isModel(deref(ft.Elem())):
			err = walk(deref(ft.Elem()), path+".<name>.", sec, c, out, on)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// isModel says whether t is a struct of the model that the file writes as a mapping of its keys.
func isModel(t reflect.Type) bool { return t.Kind() == reflect.Struct && t.PkgPath() == modelPkg }

// docOf is the description of key k of type t: the field's doc comment; for a mapping or a list of
// them without one, its type's; then the field's line comment.
func docOf(k config.Key, t reflect.Type, c *comments) (doc string, of reflect.Type, field string) {
	fc := c.fields[k.Owner.Name()][k.Field.Name]
	if fc.doc == "" {
		elem := t
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			elem = deref(t.Elem())
		}
		if isModel(elem) && c.types[elem.Name()] != "" {
			return strings.TrimSpace(c.types[elem.Name()]), elem, ""
		}
	}
	return strings.TrimSpace(fc.doc + "\n" + fc.line), k.Owner, k.Field.Name
}

// wordsFor says what the key at path, of type t, takes, in the words of the decoding errors.
func wordsFor(path string, t reflect.Type) (string, error) {
	if w, ok := valueWords[path]; ok {
		return w, nil
	}
	var w string
	switch {
	case isModel(t):
		w = "a mapping"
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		elem := deref(t.Elem())
		if isModel(elem) {
			if w = config.Words(t); w == "a list" {
				w = "a list of mappings"
			}
			break
		}
		ew, err := wordsFor(path+"[]", elem)
		if err != nil {
			return "", err
		}
		w = "a list of " + plural(ew)
	case t.Kind() == reflect.Map:
		ew, err := wordsFor(path+".<name>", deref(t.Elem()))
		if err != nil {
			return "", err
		}
		w = "a mapping of names to " + plural(ew)
	default:
		w = config.Words(t)
	}
	if w == "what this key takes" {
		return "", fmt.Errorf("%s: internal/config has no words for %s (add them to its wanted)", path, t)
	}
	return w, nil
}

// valueWords are what a key takes where its Go type does not say it: the decoding that reads it.
var valueWords = map[string]string{
	"sids[].sid":      "an address, or a prefix ADDR/LEN", // state.SID.UnmarshalYAML
	"tenants[].table": "an integer from 1 to 4294967295",  // config.Parse refuses table: 0
}

// plural turns "an address" into "addresses", "an integer from 0 to 255" into "integers from 0 to 255".
func plural(w string) string {
	for _, a := range []string{"a ", "an "} {
		w = strings.TrimPrefix(w, a)
	}
	head, rest, _ := strings.Cut(w, " ")
	switch {
	case strings.HasSuffix(head, "s"), strings.HasSuffix(head, "x"):
		head += "es"
	default:
		head += "s"
	}
	if rest != "" {
		return head + " " + rest
	}
	return head
}
