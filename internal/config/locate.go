package config

// locate.go: where in the file an object is that the state refuses. The API names objects as the
// state does ("route 198.18.2.0/24 tenant blue", `tenant "blue"`, "sid fc00:1::64"); a file's
// reader wants the line and the key path: "line 7: routes[3]".

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
	"gopkg.in/yaml.v3"
)

// File is a parsed YAML file with its text, so that errors about its objects can name their lines.
type File struct {
	Name  string // as given ("-": standard input)
	Text  []byte
	State model.State
}

// LoadFile reads and parses the YAML file at path ("-" for standard input).
func LoadFile(path string) (*File, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	s, err := Parse(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := readPlugins(&s, path); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &File{Name: path, Text: b, State: s}, nil
}

// readPlugins reads each plugin's object file (a relative path is the YAML file's directory's).
func readPlugins(s *model.State, path string) error {
	for i := range s.Plugins {
		p := &s.Plugins[i]
		if p.File == "" {
			return fmt.Errorf("plugins[%d] (%s): no file: the plugin's .o file", i, p.Name)
		}
		file := p.File
		if !filepath.IsAbs(file) && path != "-" {
			file = filepath.Join(filepath.Dir(path), file)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("plugins[%d] (%s): %w", i, p.Name, err)
		}
		p.Object = b
	}
	return nil
}

// operationPrefix is how a commit's error names the failing operation.
var operationPrefix = regexp.MustCompile(`^operation \d+ \(\w+\): `)

// Place says where in the file the object that msg (an API error) is about is written:
// "line 7: routes[3]", or "" when msg names no object of the file.
func (f *File) Place(msg string) string {
	msg = operationPrefix.ReplaceAllString(msg, "")
	obj, _, ok := strings.Cut(msg, ": ")
	if !ok {
		return ""
	}
	c := model.ParseChange("", obj)
	st := &f.State
	key, idx := "", -1
	switch c.Kind {
	case "route":
		key, idx = "routes", slices.IndexFunc(st.Routes, func(r model.Route) bool { return r.Tenant == c.Tenant && r.Prefix.String() == c.Prefix })
	case "tenant":
		key, idx = "tenants", slices.IndexFunc(st.Tenants, func(t model.Tenant) bool { return t.Name == c.Name })
	case "sid":
		key, idx = "sids", slices.IndexFunc(st.SIDs, func(sd model.SID) bool { return sd.Name() == c.SID })
	case "interface":
		key, idx = "interfaces", slices.IndexFunc(st.Interfaces, func(it model.Interface) bool { return it.Name == c.Name })
	case "policy":
		key, idx = "policies", slices.IndexFunc(st.Policies, func(p model.Policy) bool { return p.Name == c.Name })
	}
	if idx < 0 {
		return ""
	}
	var doc yaml.Node
	if yaml.Unmarshal(f.Text, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return ""
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == key && top.Content[i+1].Kind == yaml.SequenceNode && idx < len(top.Content[i+1].Content) {
			return fmt.Sprintf("line %d: %s[%d]", top.Content[i+1].Content[idx].Line, key, idx)
		}
	}
	return ""
}

// Explain puts the file's name and, when err is about one of its objects, the object's place
// before err's message (without the commit's operation number, which the file does not show).
func (f *File) Explain(err error) error {
	if err == nil {
		return nil
	}
	if p := f.Place(err.Error()); p != "" {
		return &placed{msg: fmt.Sprintf("%s: %s: %s", f.Name, p, operationPrefix.ReplaceAllString(err.Error(), "")), err: err}
	}
	return fmt.Errorf("%s: %w", f.Name, err)
}

// placed is an error with its place in the file; it unwraps to the error it places.
type placed struct {
	msg string
	err error
}

func (p *placed) Error() string { return p.msg }
func (p *placed) Unwrap() error { return p.err }
