// Package config reads the declarative seg6x YAML file into a state.State. Applying it goes through
// the control API (ApplyState -> state.Store.Apply) like every other change; this package only parses.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/seg6x/seg6x/internal/state"
	"gopkg.in/yaml.v3"
)

// Parse reads a YAML document; unknown keys are errors (a typo must not silently drop config). Every
// error names the line, and for a bad value (an address, a prefix) the key path too.
func Parse(r io.Reader) (state.State, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return state.State{}, err
	}
	var s state.State
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return state.State{}, nil // an empty file is the empty state
		}
		return s, fmt.Errorf("yaml: %s", where(b, err))
	}
	return s, nil
}

var hasLine = regexp.MustCompile(`line \d+`)

// where adds the position to a decoding error that lacks one: yaml.v3 leaves the line out of syntax
// errors on the first line, and of errors a value's own parser returns (netip's), which quote the value.
func where(b []byte, err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if hasLine.MatchString(msg) {
		return msg
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil {
		return "line 1: " + msg // a syntax error without a line is on the first
	}
	if line, path, ok := findQuoted(&doc, "", msg); ok {
		return fmt.Sprintf("line %d: %s: %s", line, path, msg)
	}
	return msg
}

// findQuoted finds the scalar whose value msg quotes, and its key path (routes[2].prefix).
func findQuoted(n *yaml.Node, path, msg string) (int, string, bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if l, p, ok := findQuoted(c, path, msg); ok {
				return l, p, ok
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := n.Content[i].Value
			if path != "" {
				p = path + "." + p
			}
			if l, p, ok := findQuoted(n.Content[i+1], p, msg); ok {
				return l, p, ok
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if l, p, ok := findQuoted(c, fmt.Sprintf("%s[%d]", path, i), msg); ok {
				return l, p, ok
			}
		}
	case yaml.ScalarNode:
		if strings.Contains(msg, strconv.Quote(n.Value)) {
			return n.Line, path, true
		}
	}
	return 0, "", false
}

// Load reads the YAML file at path ("-" for standard input).
func Load(path string) (state.State, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return state.State{}, err
	}
	s, err := Parse(bytes.NewReader(b))
	if err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Marshal renders a state as the YAML that Load reads back (ids and resolved fields left out).
func Marshal(s state.State) ([]byte, error) { return yaml.Marshal(s) }
