package reference

// reference_test.go: docs/yaml-reference.md is what Reference writes (byte for byte), its example is a
// valid file, and it lists exactly the keys of the model's yaml tags, walked here apart from the
// generator. keys_test.go checks each key against the decoder and the validation.

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/config"
	"github.com/seg6x/seg6x/internal/model"
)

const docPath = "../../../docs/yaml-reference.md"

func TestDocIsGenerated(t *testing.T) {
	want, err := Reference()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("%v; write it with: %s", err, Command)
	}
	if string(got) == want {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Fatalf("docs/yaml-reference.md is not what the model says; regenerate it with:\n\t%s\n"+
				"(or go generate ./internal/config/reference)\nfirst difference, line %d:\n\tfile:  %q\n\tmodel: %q",
				Command, i+1, gl, wl)
		}
	}
}

func TestExampleIsValid(t *testing.T) {
	s, err := config.Parse(strings.NewReader(Example))
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Validate(&s); err != nil {
		t.Fatal(err)
	}
	if len(s.Interfaces) == 0 || len(s.Tenants) == 0 || len(s.Routes) == 0 || len(s.SIDs) == 0 {
		t.Error("the example lost its interfaces, tenants, routes or sids")
	}
}

var docKey = regexp.MustCompile("(?m)^- \\*\\*`([^`]+)`\\*\\*")

// docKeys are the key paths docs/yaml-reference.md lists.
func docKeys(t *testing.T) []string {
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range docKey.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatal("no keys found in docs/yaml-reference.md")
	}
	return out
}

// tagPaths walks t's yaml tags (not config.Keys: apart from the generator) into key paths.
func tagPaths(t reflect.Type, prefix string, out *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if strings.Contains(opts, "inline") {
			tagPaths(ft, prefix, out)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		p := prefix + name
		*out = append(*out, p)
		sep := "."
		if ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array {
			ft, sep = ft.Elem(), "[]."
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
		}
		if ft.Kind() == reflect.Struct && ft.PkgPath() == reflect.TypeFor[model.State]().PkgPath() {
			tagPaths(ft, p+sep, out)
		}
	}
}

func TestEveryFieldListed(t *testing.T) {
	var keys []string
	tagPaths(reflect.TypeFor[model.State](), "", &keys)
	doc := docKeys(t)
	for _, p := range keys {
		if !slices.Contains(doc, p) {
			t.Errorf("the model's key %s is not in docs/yaml-reference.md", p)
		}
	}
	for _, p := range doc {
		if !slices.Contains(keys, p) {
			t.Errorf("docs/yaml-reference.md lists %s, which is not a key of the model", p)
		}
	}
}
