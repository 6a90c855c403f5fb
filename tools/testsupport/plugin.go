package testsupport

// plugin.go: building a seg6x plugin (a C file against bpf/sdk) for a test, as `make plugins` does.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BuildPlugin compiles the plugin source src (a path from the calling package's directory) with clang
// against this tree's SDK and returns the object's bytes. Needs clang (make test installs it).
func BuildPlugin(t testing.TB, src string) []byte {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c")+".o")
	args := []string{"-O2", "-g", "-Wall", "-Werror", "-target", "bpf", "-I" + filepath.Join(root, "bpf", "sdk")}
	args = append(args, strings.Fields(os.Getenv("BPF_CFLAGS"))...)
	args = append(args, "-I/usr/include/"+multiarch())
	args = append(args, "-c", src, "-o", out)
	if b, err := exec.Command("clang", args...).CombinedOutput(); err != nil {
		t.Fatalf("clang %s: %v\n%s", src, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// multiarch is this machine's Debian multiarch triplet (where its asm/ headers are), as the Makefile
// finds it.
func multiarch() string {
	for _, c := range [][]string{{"dpkg-architecture", "-qDEB_HOST_MULTIARCH"}, {"gcc", "-print-multiarch"}} {
		if out, err := exec.Command(c[0], c[1:]...).Output(); err == nil && strings.TrimSpace(string(out)) != "" {
			return strings.TrimSpace(string(out))
		}
	}
	return "x86_64-linux-gnu"
}

// moduleRoot is the directory of this tree's go.mod, found from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
