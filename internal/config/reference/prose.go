package reference

// prose.go: a doc comment in the file's words: Go names of the model's fields become their keys
// (Tenant.Table: `tenants[].table`; Segs in a SID's comment: `segs`), a type's name its noun ("A
// tenant is ..."), and pointers to source files ("(policies.go)") are left out.

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/seg6x/seg6x/internal/config"
)

var (
	sourceFile = regexp.MustCompile(`\s*\([a-z0-9_]+\.go\)`)
	goRef      = regexp.MustCompile(`\b([A-Z][A-Za-z0-9]*)\.([A-Z][A-Za-z0-9]*)\b`)
	goRefParen = regexp.MustCompile(`\s*\(([A-Z][A-Za-z0-9]*)\.([A-Z][A-Za-z0-9]*)\)`)
	goName     = regexp.MustCompile(`\s*\([A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\)`) // (GroupBuckets)
	word       = regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*`)
	valueWord  = regexp.MustCompile(`"?[A-Za-z0-9]+(?:[.-][A-Za-z0-9]+)*"?`) // encap.red, next-csid
)

// speaker rewrites comments, knowing the model's keys.
type speaker struct {
	paths map[string]string // "Tenant.Table": "tenants[].table" (the first path of the field)
}

func newSpeaker(es []Entry) *speaker {
	s := &speaker{paths: map[string]string{}}
	for _, e := range es {
		ref := e.Key.Owner.Name() + "." + e.Key.Field.Name
		if _, ok := s.paths[ref]; !ok {
			s.paths[ref] = e.Path
		}
	}
	return s
}

// say rewrites comment text about struct type owner (whose fields it may name bare) in the file's
// words, as one paragraph. field is the Go name of the field the text is the doc of, or "" for
// owner's type doc (which starts with the type's name).
func (s *speaker) say(text string, owner reflect.Type, field string, values []string) string {
	text = strings.Join(strings.Fields(text), " ")
	text = sourceFile.ReplaceAllString(text, "")
	text = goName.ReplaceAllString(text, "")
	// Go's "Table is the ..." after the key's own name: "The ...".
	for _, verb := range []string{" is ", " are "} {
		if rest, ok := strings.CutPrefix(text, field+verb); ok && field != "" {
			text = rest
		}
	}
	// (Behavior.Flavors): a pointer for the Go reader to something that is not a key.
	text = goRefParen.ReplaceAllStringFunc(text, func(m string) string {
		p := goRefParen.FindStringSubmatch(m)
		if path, ok := s.paths[p[1]+"."+p[2]]; ok {
			return " (`" + path + "`)"
		}
		return ""
	})
	text = goRef.ReplaceAllStringFunc(text, func(m string) string {
		p := goRef.FindStringSubmatch(m)
		if path, ok := s.paths[p[1]+"."+p[2]]; ok {
			return "`" + path + "`"
		}
		return m
	})
	keys := map[string]string{}
	for _, k := range config.Keys(owner) {
		keys[k.Field.Name] = k.Name
	}
	if field == "" {
		if rest, ok := strings.CutPrefix(text, owner.Name()+" "); ok {
			text = nounPhrase(owner.Name()) + " " + rest
		}
	}
	// The field names of owner: at the start (Go's "Segs is ..."), or written in mixed case inside a
	// sentence (Segs[0], Prefix); an all-capitals word inside one is an acronym (SID, VLAN).
	var b strings.Builder
	last := 0
	for _, loc := range word.FindAllStringIndex(text, -1) {
		w := text[loc[0]:loc[1]]
		key, ok := keys[w]
		if !ok || (loc[0] > 0 && (w == strings.ToUpper(w) || sentenceStart(text[:loc[0]]))) ||
			inCode(text[:loc[0]]) {
			continue
		}
		b.WriteString(text[last:loc[0]])
		b.WriteString("`" + key + "`")
		last = loc[1]
	}
	b.WriteString(text[last:])
	text = markValues(b.String(), values)
	if r := []rune(text); len(r) > 0 && unicode.IsLower(r[0]) {
		text = string(unicode.ToUpper(r[0])) + string(r[1:])
	}
	if text != "" && !strings.HasSuffix(text, ".") && !strings.HasSuffix(text, ".)") {
		text += "."
	}
	return text
}

// markValues puts the values a key takes in code where text names them ("encap (H.Encaps) or
// encap.red": "`encap` (H.Encaps) or `encap.red`"), quoted or not.
func markValues(text string, values []string) string {
	if len(values) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, loc := range valueWord.FindAllStringIndex(text, -1) {
		w := strings.Trim(text[loc[0]:loc[1]], `"`)
		if !slices.Contains(values, w) || inCode(text[:loc[0]]) {
			continue
		}
		b.WriteString(text[last:loc[0]] + "`" + w + "`")
		last = loc[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// nounPhrase is how a sentence about the type named goName starts: "A tenant", "`bgp`".
func nounPhrase(goName string) string {
	n := config.Noun(goName)
	for _, a := range []string{"a ", "an ", "the "} {
		if strings.HasPrefix(n, a) {
			return strings.ToUpper(n[:1]) + n[1:]
		}
	}
	return "`" + n + "`"
}

// sentenceStart says whether a word after before starts a sentence.
func sentenceStart(before string) bool {
	t := strings.TrimRight(before, " ")
	return t == "" || strings.HasSuffix(t, ".")
}

// inCode says whether a word after before is inside a code span.
func inCode(before string) bool { return strings.Count(before, "`")%2 == 1 }
