// Command gen writes the YAML reference of the config file (docs/yaml-reference.md) from the model:
//
//	go run ./internal/config/reference/gen > docs/yaml-reference.md
//
// or, with -o, to a file (go generate ./internal/config/reference does that).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/seg6x/seg6x/internal/config/reference"
)

func main() {
	out := flag.String("o", "", "write to this file instead of standard output")
	flag.Parse()
	doc, err := reference.Reference()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if *out == "" {
		_, err = os.Stdout.WriteString(doc)
	} else {
		err = os.WriteFile(*out, []byte(doc), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
