// Command seg6x-lab builds seg6x's namespace labs on this machine and drives traffic through them
// (see tools/labcli). It is a tool of the project, not part of what a router runs.
package main

import (
	"os"

	"github.com/seg6x/seg6x/tools/labcli"
)

func main() { os.Exit(labcli.Main()) }
