// Command seg6x-bench runs seg6x's benchmarks: the throughput rig, per-packet micro-benchmarks and
// the control-plane, mirror, TCP, slow-path and BGP measurements (see tools/benchcli). It is a tool
// of the project, not part of what a router runs.
package main

import (
	"os"

	"github.com/seg6x/seg6x/tools/benchcli"
)

func main() { os.Exit(benchcli.Main()) }
