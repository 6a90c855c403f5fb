package main

// observer_test.go: the product reads its data plane through state.Observer, never by reaching into
// the BPF one: no product package but internal/dataplane itself names dataplane.MapsOf (the raw maps
// of a store) or dataplane.BPF (what a downcast of st.Dataplane() would name). Tools, the suites
// under test/ and the product's own tests may (they inspect raw maps on purpose).

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rawDataplane are the names of internal/dataplane that only it, tools and tests may use.
var rawDataplane = map[string]bool{"MapsOf": true, "BPF": true}

func TestProductReadsDataplaneThroughObserver(t *testing.T) {
	out, err := exec.Command("go", "list", "-buildvcs=false", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}", module+"...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		pkg := strings.TrimPrefix(f[0], module)
		product := pkg == "cmd/seg6x"
		for _, dir := range productTree {
			product = product || strings.HasPrefix(pkg, dir)
		}
		if !product || pkg == "internal/dataplane" || len(f) < 3 {
			continue
		}
		for _, name := range strings.Fields(f[2]) {
			checked++
			for _, use := range rawUses(t, filepath.Join(f[1], name)) {
				t.Errorf("%s: product code uses %s; read the data plane through st.Observer() (state.Observer)", use.pos, use.name)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d product files checked: the package list is wrong", checked)
	}
}

type rawUse struct {
	pos  token.Position
	name string
}

// rawUses are the uses of rawDataplane names in file.
func rawUses(t *testing.T, file string) []rawUse {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	local := "" // the name internal/dataplane is imported under
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == module+"internal/dataplane" {
			local = "dataplane"
			if im.Name != nil {
				local = im.Name.Name
			}
		}
	}
	if local == "" {
		return nil
	}
	var out []rawUse
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == local && rawDataplane[sel.Sel.Name] {
			out = append(out, rawUse{fset.Position(sel.Pos()), "dataplane." + sel.Sel.Name})
		}
		return true
	})
	if local == "." { // a dot import: the names stand alone
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && rawDataplane[id.Name] {
				out = append(out, rawUse{fset.Position(id.Pos()), id.Name})
			}
			return true
		})
	}
	return out
}
