// Command seg6x is the SRv6 XDP data plane's command line (see internal/cli).
package main

import (
	"os"

	"github.com/seg6x/seg6x/internal/cli"
)

func main() { os.Exit(cli.Main()) }
