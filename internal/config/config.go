// Package config reads the declarative seg6x YAML file into a state.State. Applying it goes through
// the control API (ApplyState -> state.Store.Apply) like every other change; this package only parses.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/seg6x/seg6x/internal/model"
	"gopkg.in/yaml.v3"
)

// Parse reads a YAML document; unknown keys are errors (a typo must not silently drop config). Every
// error names the line, and for a bad value (an address, a prefix) the key path too (all but
// excessive aliasing, which is the whole document's).
func Parse(r io.Reader) (model.State, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return model.State{}, err
	}
	var s model.State
	if err := checkFractions(b); err != nil {
		return model.State{}, fmt.Errorf("yaml: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return model.State{}, nil // an empty file is the empty state
		}
		return s, fmt.Errorf("yaml: %s", inWords(where(b, err)))
	}
	for i := range s.Tenants {
		if s.Tenants[i].Table == 0 {
			if line := explicitZeroTable(b, i); line > 0 {
				return s, fmt.Errorf("yaml: line %d: tenants[%d].table: %s", line, i, model.ZeroTable)
			}
		}
	}
	return s, nil
}

// explicitZeroTable is the line of tenants[i]'s "table: 0" in the document b, 0 if it has none
// (a tenant without a table leaves the key out).
func explicitZeroTable(b []byte, i int) int {
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	ts := mappingValue(doc.Content[0], "tenants")
	if ts == nil || ts.Kind != yaml.SequenceNode || i >= len(ts.Content) {
		return 0
	}
	if v := mappingValue(ts.Content[i], "table"); v != nil && v.Kind == yaml.ScalarNode {
		var n uint64
		if v.Decode(&n) == nil && n == 0 {
			return v.Line
		}
	}
	return 0
}

// mappingValue is the value of key in mapping n (aliases followed), nil if absent.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			v := n.Content[i+1]
			for v != nil && v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			return v
		}
	}
	return nil
}

// Load reads the YAML file at path ("-" for standard input).
func Load(path string) (model.State, error) {
	f, err := LoadFile(path)
	if err != nil {
		return model.State{}, err
	}
	return f.State, nil
}
