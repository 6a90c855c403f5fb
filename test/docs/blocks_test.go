package docstest

// blocks_test.go: the code blocks of one section of a doc, which the doc tests run as written.

import (
	"os"
	"strings"
	"testing"
)

// sectionBlocks is the code blocks of the section headed "## "+heading of doc (a path from this
// directory), in order; it fails t unless there are want of them (what says what they are).
func sectionBlocks(t *testing.T, doc, heading string, want int, what string) []string {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## "+heading)
	if !ok {
		t.Fatalf("%s has no %q section", doc, "## "+heading)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var blocks []string
	for {
		_, rest, ok := strings.Cut(sec, "```")
		if !ok {
			break
		}
		_, rest, _ = strings.Cut(rest, "\n") // the block's language
		body, after, ok := strings.Cut(rest, "```")
		if !ok {
			t.Fatal("an unclosed code block")
		}
		blocks = append(blocks, body)
		sec = after
	}
	if len(blocks) != want {
		t.Fatalf("%d code blocks, want %d (%s)", len(blocks), want, what)
	}
	return blocks
}
