package reference

// render.go: the reference as Markdown: a header naming the command that writes it, how to read it,
// the worked example (example.yaml, parsed and validated before it is written out), then one section
// per top-level key listing its keys, and the table of endpoint behaviors under sids.

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/seg6x/seg6x/internal/config"
	"github.com/seg6x/seg6x/internal/model"
)

// Example is the worked example at the top of the reference: a whole valid file.
//
//go:embed example.yaml
var Example string

// width is where lines of prose are wrapped.
const width = 100

// Reference is docs/yaml-reference.md.
func Reference() (string, error) {
	es, err := Entries()
	if err != nil {
		return "", err
	}
	if err := checkExample(); err != nil {
		return "", err
	}
	sp := newSpeaker(es)
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Generated from internal/model by %s; do not edit. -->\n\n", Command)
	b.WriteString("# The seg6x configuration file\n\n")
	para(&b, "`seg6x apply -f FILE` and `seg6x daemon --config FILE` read a YAML file that is the whole "+
		"desired state of the node: what is not in it is removed. This page lists every key the file "+
		"may have, what it takes and what it means. It is generated from the program's own types and "+
		"their comments.")
	b.WriteString("## Example\n\n```yaml\n" + Example + "```\n\n")
	para(&b, "`seg6x apply -f FILE --dry-run` checks a file and prints what applying it would change; "+
		"`seg6x config export` prints the running state as such a file.")
	b.WriteString("## Reading this page\n\n")
	para(&b, "A key is written as its path from the top of the file: `tenants[].ports[].vlan` is the "+
		"`vlan` key of an item of the `ports` list of an item of the `tenants` list.")
	para(&b, "A key marked **required** must be given wherever its parent is (`tenants[].ports[].dev` in "+
		"every port of every tenant). Any other key may be left out; its description says what that "+
		"means. Some keys are needed only with others (the [endpoint behaviors](#endpoint-behaviors) "+
		"say what each SID action needs); `seg6x apply --dry-run` names what is missing.")
	para(&b, "A key not listed here is an error, and so is a value of the wrong kind: an address is "+
		"written `198.18.1.1` or `fc00:1::1`, a prefix `198.18.2.0/24` or `fc00:1::/48`, an integer as "+
		"a whole number.")
	b.WriteString("## Keys\n\n")
	var sections []string
	for _, e := range es {
		if e.Path == e.Section {
			sections = append(sections, e.Section)
		}
	}
	for _, s := range sections {
		fmt.Fprintf(&b, "- [`%s`](#%s)\n", s, s)
	}
	b.WriteString("\n")
	for _, s := range sections {
		fmt.Fprintf(&b, "## %s\n\n", s)
		for _, e := range es {
			if e.Section == s {
				item(&b, e, sp)
			}
		}
		b.WriteString("\n")
		if s == "sids" {
			behaviors(&b)
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n", nil
}

// checkExample parses and validates Example.
func checkExample() error {
	s, err := config.Parse(strings.NewReader(Example))
	if err == nil {
		err = model.Validate(&s)
	}
	if err != nil {
		return fmt.Errorf("example.yaml: %w", err)
	}
	return nil
}

// item writes one key as a list item: path, required, what it takes, its values, its description.
func item(b *strings.Builder, e Entry, sp *speaker) {
	var s strings.Builder
	fmt.Fprintf(&s, "- **`%s`**", e.Path)
	if e.Required {
		s.WriteString(" (required)")
	}
	s.WriteString(": " + e.Words)
	if len(e.Values) > 0 {
		quoted := make([]string, len(e.Values))
		for i, v := range e.Values {
			quoted[i] = "`" + v + "`"
		}
		s.WriteString(" (" + strings.Join(quoted, ", "))
		if e.Note != "" {
			s.WriteString("; " + e.Note)
		}
		s.WriteString(")")
	}
	s.WriteString(". " + sp.say(e.Doc, e.DocOf, e.DocField, e.Values))
	wrap(b, s.String(), "  ")
}

// behaviors writes the table of endpoint behaviors (state.Behaviors): what each action takes.
func behaviors(b *strings.Builder) {
	b.WriteString("### Endpoint behaviors\n\n")
	para(b, "The values of `sids[].action`, the keys each needs besides `sid` and `action`, the keys it "+
		"may have, and the flavors it takes:")
	b.WriteString("| action | needs | may have | flavors | what it does |\n|---|---|---|---|---|\n")
	for i := range model.Behaviors {
		bh := &model.Behaviors[i]
		var needs, may []string
		switch bh.Needs {
		case model.ParamTable:
			if bh.TakesTenant() {
				needs = append(needs, "`table` or `tenant`")
			} else {
				needs = append(needs, "`table`")
			}
		case model.ParamSegs:
			needs = append(needs, "`segs`")
			may = append(may, "`src`")
		case model.ParamNone:
		default:
			needs = append(needs, "`"+string(bh.Needs)+"`")
		}
		if bh.Decap {
			may = append(may, "`vlan`")
		}
		if slices.Contains(bh.Flavors, model.FlavorNextCSID) {
			may = append(may, "`lblen`", "`nflen`")
		}
		help := bh.Help
		// The help names the CLI's placeholder ("nh4 ADDR", "table ID"); the file's is the key.
		if f := strings.Fields(bh.Synopsis()); len(f) == 2 {
			help = replaceWord(help, f[1], "`"+f[0]+"`")
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s |\n", bh.Name, orDash(needs), orDash(may),
			orDash(code(bh.Flavors)), help)
	}
	b.WriteString("\n")
}

func code(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = "`" + s + "`"
	}
	return out
}

func orDash(l []string) string {
	if len(l) == 0 {
		return "-"
	}
	return strings.Join(l, ", ")
}

// replaceWord replaces the whole word w in s.
func replaceWord(s, w, with string) string {
	f := strings.Fields(s)
	for i := range f {
		if f[i] == w {
			f[i] = with
		}
	}
	return strings.Join(f, " ")
}

// para writes a paragraph wrapped at width.
func para(b *strings.Builder, s string) {
	wrap(b, s, "")
	b.WriteString("\n")
}

// wrap writes s in lines of at most width (a longer word alone), the ones after the first indented,
// never breaking a code span.
func wrap(b *strings.Builder, s, indent string) {
	var line bytes.Buffer
	for _, w := range spans(s) {
		if line.Len() > 0 && line.Len()+1+len(w) > width {
			b.WriteString(line.String() + "\n")
			line.Reset()
			line.WriteString(indent)
		} else if line.Len() > 0 && line.String() != indent {
			line.WriteByte(' ')
		}
		line.WriteString(w)
	}
	b.WriteString(line.String() + "\n")
}

// spans splits s at spaces outside code spans.
func spans(s string) []string {
	var out []string
	var cur strings.Builder
	code := false
	for _, r := range s {
		switch {
		case r == '`':
			code = !code
			cur.WriteRune(r)
		case r == ' ' && !code:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
