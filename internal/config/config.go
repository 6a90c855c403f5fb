// Package config reads the declarative seg6x YAML file into a state.State. Applying it goes through
// the control API (ApplyState -> state.Store.Apply) like every other change; this package only parses.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/seg6x/seg6x/internal/state"
	"gopkg.in/yaml.v3"
)

// Parse reads a YAML document; unknown keys are errors (a typo must not silently drop config). Every
// error names the line, and for a bad value (an address, a prefix) the key path too (all but
// excessive aliasing, which is the whole document's).
func Parse(r io.Reader) (state.State, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return state.State{}, err
	}
	var s state.State
	if err := checkFractions(b); err != nil {
		return state.State{}, fmt.Errorf("yaml: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return state.State{}, nil // an empty file is the empty state
		}
		return s, fmt.Errorf("yaml: %s", inWords(where(b, err)))
	}
	return s, nil
}

// Load reads the YAML file at path ("-" for standard input).
func Load(path string) (state.State, error) {
	f, err := LoadFile(path)
	if err != nil {
		return state.State{}, err
	}
	return f.State, nil
}
