// Package toolcli is what the project's two tool commands share: seg6x-lab (tools/labcli) and
// seg6x-bench (tools/benchcli). Their root command and its global flags (--json, --seg6x), JSON
// output, and finding the binaries they drive (the seg6x under test, and each other). The product's
// command line (internal/cli) does not use it.
package toolcli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/seg6x/seg6x/internal/buildinfo"
	"github.com/spf13/cobra"
)

// JSON is the root's --json: machine-readable output.
var JSON bool

// seg6xFlag is the root's --seg6x: the seg6x binary the tool runs.
var seg6xFlag string

// NewRoot is a tool's root command named use, with the global flags and cmds under it.
func NewRoot(use, short, long string, cmds ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{Use: use, Short: short, Long: long, SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().BoolVarP(&JSON, "json", "j", false, "machine-readable JSON output")
	root.PersistentFlags().StringVar(&seg6xFlag, "seg6x", "", "the seg6x binary to run (default: the one beside this binary, else seg6x on $PATH)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath())
	})
	root.Version = buildinfo.Get("").Version
	root.SetVersionTemplate(use + " {{.Version}}\n")
	root.AddCommand(cmds...)
	return root
}

// Main runs root and returns the process exit code.
func Main(root *cobra.Command) int {
	if err := root.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", root.Name(), err)
		return 1
	}
	return 0
}

// PrintJSON writes v to stdout as indented JSON.
func PrintJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Seg6x is the seg6x binary the tool runs: --seg6x, else Sibling("seg6x").
func Seg6x() (string, error) {
	if seg6xFlag != "" {
		return filepath.Abs(seg6xFlag)
	}
	p, err := Sibling("seg6x")
	if err != nil {
		return "", fmt.Errorf("%w; --seg6x names another", err)
	}
	return p, nil
}

// Sibling finds the project's binary name beside this one (bin/ after make build), else on $PATH;
// the path is absolute, as the namespaces it runs in have other working directories.
func Sibling(name string) (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("no %s beside this binary nor on $PATH (make build writes bin/%s)", name, name)
	}
	return filepath.Abs(p)
}
