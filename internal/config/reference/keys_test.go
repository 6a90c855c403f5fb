package reference

// keys_test.go: what the reference says of each key, checked against the program: config.Parse takes
// the key with a value of the kind it names and refuses one of another kind; a key marked required is
// one state.Validate asks for; the values listed are ones Validate takes (and it refuses others).

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/config"
	"github.com/seg6x/seg6x/internal/model"
	"gopkg.in/yaml.v3"
)

// samples are values of the kind words name, and values of another kind.
func samples(t *testing.T, words string) (good, bad []any) {
	switch {
	case words == "an address, or a prefix ADDR/LEN":
		return []any{"2001:db8::1", "2001:db8::/64"}, []any{"x"}
	case words == "an address":
		return []any{"2001:db8::1", "192.0.2.1"}, []any{"x", "2001:db8::/64"}
	case words == "a prefix":
		return []any{"2001:db8::/64", "192.0.2.0/24"}, []any{"x", "2001:db8::1"}
	case words == "true or false":
		return []any{true}, []any{"x"}
	case words == "a string":
		return []any{"x"}, []any{map[string]any{}}
	case words == "an integer":
		return []any{-1, 1}, []any{"x", 1.5}
	case words == "a mapping":
		return []any{map[string]any{}}, []any{"x"}
	case words == "a mapping of names to strings":
		return []any{map[string]any{"k": "v"}}, []any{"x", []any{"x"}}
	case strings.HasPrefix(words, "an integer from "):
		var lo, hi int64
		if _, err := fmt.Sscanf(words, "an integer from %d to %d", &lo, &hi); err != nil {
			t.Fatalf("%q: %v", words, err)
		}
		return []any{lo, hi}, []any{lo - 1, hi + 1, "x"}
	case strings.HasPrefix(words, "a list of "):
		elem := map[string]string{"addresses": "an address", "prefixes": "a prefix", "strings": "a string"}[strings.TrimPrefix(words, "a list of ")]
		if elem == "" { // a list of the model's mappings
			return []any{[]any{map[string]any{}}}, []any{"x", []any{"x"}}
		}
		g, b := samples(t, elem)
		return []any{[]any{g[0]}}, []any{"x", []any{b[0]}}
	}
	t.Fatalf("the test does not know what %q is: teach samples", words)
	return nil, nil
}

// document is a file with only the key at path, set to v.
func document(t *testing.T, path string, v any) string {
	segs := strings.Split(path, ".")
	for i := len(segs) - 1; i >= 0; i-- {
		name, list := strings.CutSuffix(segs[i], "[]")
		if i < len(segs)-1 && list {
			v = []any{v}
		}
		v = map[string]any{name: v}
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func entries(t *testing.T) map[string]Entry {
	es, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Entry{}
	for _, e := range es {
		out[e.Path] = e
	}
	return out
}

func TestKeysParse(t *testing.T) {
	es := entries(t)
	for _, path := range docKeys(t) {
		e, ok := es[path]
		if !ok {
			t.Errorf("docs/yaml-reference.md lists %s, which the generator does not (regenerate it)", path)
			continue
		}
		good, bad := samples(t, e.Words)
		for _, v := range good {
			doc := document(t, path, v)
			if _, err := config.Parse(strings.NewReader(doc)); err != nil {
				t.Errorf("%s is %s, but the decoder refuses\n%s: %v", path, e.Words, doc, err)
			}
		}
		for _, v := range bad {
			doc := document(t, path, v)
			if _, err := config.Parse(strings.NewReader(doc)); err == nil {
				t.Errorf("%s is %s, but the decoder takes\n%s", path, e.Words, doc)
			}
		}
		doc := document(t, path+"_x", good[0]) // the decoder is strict: a key not listed is refused
		if _, err := config.Parse(strings.NewReader(doc)); err == nil {
			t.Errorf("the decoder takes an unknown key:\n%s", doc)
		}
	}
}

// full parses testdata/full.yaml, a valid file.
func full(t *testing.T) model.State {
	b, err := os.ReadFile("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := config.Parse(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// field is the key at path in s, in the first item of each list on the way.
func field(s *model.State, path string) (reflect.Value, error) {
	v := reflect.ValueOf(s).Elem()
	for seg := range strings.SplitSeq(path, ".") {
		name, list := strings.CutSuffix(seg, "[]")
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return v, errors.New("testdata/full.yaml has no " + path)
			}
			v = v.Elem()
		}
		var f reflect.Value
		for _, k := range config.Keys(v.Type()) {
			if k.Name == name && k.Owner == v.Type() {
				f = v.FieldByIndex(k.Field.Index)
			}
		}
		if !f.IsValid() {
			return f, errors.New("no key " + seg + " in " + path)
		}
		v = f
		if list {
			if v.Len() == 0 {
				return v, errors.New("testdata/full.yaml has no " + path)
			}
			v = v.Index(0)
		}
	}
	return v, nil
}

// names says whether err has a field error about key.
func names(err error, key string) bool {
	var es model.Errors
	if !errors.As(err, &es) {
		return false
	}
	for _, e := range es {
		var fe *model.FieldError
		if !errors.As(e, &fe) {
			continue
		}
		for _, w := range strings.FieldsFunc(fe.Field, func(r rune) bool { return strings.ContainsRune(".[]/", r) }) {
			if w == key {
				return true
			}
		}
	}
	return false
}

func lastKey(path string) string {
	return strings.TrimSuffix(path[strings.LastIndexByte(path, '.')+1:], "[]")
}

func TestRequired(t *testing.T) {
	s := full(t)
	if err := model.Validate(&s); err != nil {
		t.Fatalf("testdata/full.yaml: %v", err)
	}
	for path, e := range entries(t) {
		if !e.Required {
			continue
		}
		s := full(t)
		f, err := field(&s, path)
		if err != nil {
			t.Errorf("%s is marked required: %v (add it)", path, err)
			continue
		}
		f.SetZero()
		if err := model.Validate(&s); !names(err, lastKey(path)) {
			t.Errorf("%s is marked required (its yaml tag has no omitempty), but without it Validate says: %v", path, err)
		}
	}
}

func TestValues(t *testing.T) {
	for path, e := range entries(t) {
		if len(e.Values) == 0 {
			continue
		}
		try := func(v string) error {
			s := full(t)
			f, err := field(&s, path)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			switch f.Kind() {
			case reflect.String:
				f.SetString(v)
			case reflect.Slice:
				f.Set(reflect.ValueOf([]string{v}))
			default:
				t.Fatalf("%s: values of a %s", path, f.Type())
			}
			return model.Validate(&s)
		}
		for _, v := range e.Values {
			if err := try(v); names(err, lastKey(path)) {
				t.Errorf("%s lists %q, which Validate refuses: %v", path, v, err)
			}
		}
		if err := try("bogus"); !names(err, lastKey(path)) {
			t.Errorf("%s: Validate takes %q, which the reference does not list (%v)", path, "bogus", err)
		}
	}
}
