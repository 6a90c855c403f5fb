package reference

// comments.go: the doc comments of the model's types and fields, read from the source of
// internal/model at generation time (go/parser): the comments are the reference's only text about a key.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
)

// fieldComments are a struct field's doc comment (above it) and line comment (after it).
type fieldComments struct{ doc, line string }

// comments are the doc comments of one package's types and their fields, by Go name.
type comments struct {
	types  map[string]string
	fields map[string]map[string]fieldComments
}

// modelDir is the directory of internal/model's source: found from this file's, which the go command
// records when it builds the generator or the test (not under -trimpath).
func modelDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", fmt.Errorf("cannot find the source of internal/model (built with -trimpath?)")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "model")
	if _, err := os.Stat(filepath.Join(dir, "model.go")); err != nil {
		return "", fmt.Errorf("cannot find the source of internal/model: %w", err)
	}
	return dir, nil
}

// readComments parses the non-test Go files of dir (the package of model.State) for their comments.
func readComments(dir string) (*comments, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	c := &comments{types: map[string]string{}, fields: map[string]map[string]fieldComments{}}
	want := reflect.TypeFor[model.State]().PkgPath()
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if f.Name.Name != want[strings.LastIndexByte(want, '/')+1:] {
			return nil, fmt.Errorf("%s: package %s, want the package of %s", name, f.Name.Name, want)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(g.Specs) == 1 {
					doc = g.Doc // type T struct: the comment is the declaration's
				}
				c.types[ts.Name.Name] = doc.Text()
				if st, ok := ts.Type.(*ast.StructType); ok {
					c.fields[ts.Name.Name] = structComments(st)
				}
			}
		}
	}
	return c, nil
}

func structComments(st *ast.StructType) map[string]fieldComments {
	out := map[string]fieldComments{}
	for _, f := range st.Fields.List {
		fc := fieldComments{doc: f.Doc.Text(), line: f.Comment.Text()}
		for _, n := range f.Names {
			out[n.Name] = fc
		}
		if len(f.Names) == 0 { // embedded: named after its type
			t := f.Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			if id, ok := t.(*ast.Ident); ok {
				out[id.Name] = fc
			}
		}
	}
	return out
}
