package config

// reference.go: the model's YAML keys in declaration order and the words this package's errors use for
// what a key takes, exported for the YAML reference (internal/config/reference writes
// docs/yaml-reference.md from them), so that the reference and the error messages say the same.

import (
	"reflect"
	"strings"
)

// Key is one YAML key of a struct of the model, as the decoder sees it.
type Key struct {
	Name  string              // the YAML key
	Owner reflect.Type        // the struct that declares the field (an inline struct's, for its keys)
	Field reflect.StructField // the Go field
	// OmitEmpty says the tag has omitempty: the model's mark of an optional key (without it the
	// object needs the key; the reference's test checks that against state.Validate).
	OmitEmpty bool
}

// Keys are t's YAML keys in declaration order, inline structs' in place: the keys yamlFields has.
func Keys(t reflect.Type) []Key {
	var out []Key
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct {
			out = append(out, Keys(f.Type)...)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		omit := false
		for _, o := range strings.Split(opts, ",") {
			omit = omit || o == "omitempty"
		}
		out = append(out, Key{Name: name, Owner: t, Field: f, OmitEmpty: omit})
	}
	return out
}

// Words names what a value of type t is in a file ("an address", "an integer from 0 to 65535", "a list
// of tenants"), as the decoding errors name it; "what this key takes" for a type they do not name.
func Words(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return wanted(t.String())
}

// Noun names a struct type of the model as a file's reader knows it ("a tenant", "bgp").
func Noun(goName string) string { return noun(goName) }
