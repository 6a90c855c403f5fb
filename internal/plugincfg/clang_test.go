package plugincfg

// clang_test.go: the layouts the tests build by hand are clang's: testdata/*.c compiled for BPF
// with the SDK give the same keys (names, types, help, offsets) from their BTF. Skipped without
// clang or the libbpf headers.

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

func TestClangLayout(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		t.Skip("no clang on the PATH")
	}
	root := repoRoot(t)
	for _, tc := range []struct {
		file string
		want *btf.Struct
	}{
		{"firewall.c", firewallStruct()},
		{"kinds.c", kindsStruct()},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := mustSchema(t, compiledConfig(t, clang, root, filepath.Join("testdata", tc.file)))
			want := mustSchema(t, tc.want)
			if got.Size() != want.Size() {
				t.Errorf("clang's struct is %d bytes; the hand-built one %d", got.Size(), want.Size())
			}
			if !reflect.DeepEqual(got.Keys(), want.Keys()) {
				t.Errorf("keys from clang's BTF:\n%+v\nhand-built:\n%+v", got.Keys(), want.Keys())
			}
			if got.Describe() != want.Describe() {
				t.Errorf("Describe from clang's BTF:\n%s\nhand-built:\n%s", got.Describe(), want.Describe())
			}
		})
	}
}

// compiledConfig compiles a plugin source and reads its struct seg6x_plugin_config from the BTF.
func compiledConfig(t *testing.T, clang, root, src string) *btf.Struct {
	t.Helper()
	obj := filepath.Join(t.TempDir(), "plugin.o")
	args := []string{"-O2", "-g", "-Wall", "-target", "bpf", "-I" + filepath.Join(root, "bpf", "sdk")}
	if dir := multiarchInclude(); dir != "" {
		args = append(args, "-I"+dir)
	}
	args = append(args, "-c", src, "-o", obj)
	out, err := exec.Command(clang, args...).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "bpf_helpers.h' file not found") || strings.Contains(string(out), "asm/types.h' file not found") {
			t.Skipf("the kernel or libbpf headers are missing: %s", out)
		}
		t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	spec, err := btf.LoadSpec(obj)
	if err != nil {
		t.Fatalf("reading the object's BTF: %v", err)
	}
	var s *btf.Struct
	if err := spec.TypeByName("seg6x_plugin_config", &s); err != nil {
		t.Fatalf("struct seg6x_plugin_config: %v", err)
	}
	return s
}

// multiarchInclude is this architecture's kernel header directory (asm/...), if it is there.
func multiarchInclude() string {
	triple := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu",
		"386": "i386-linux-gnu", "riscv64": "riscv64-linux-gnu", "ppc64le": "powerpc64le-linux-gnu", "s390x": "s390x-linux-gnu"}[runtime.GOARCH]
	if triple == "" {
		return ""
	}
	dir := filepath.Join("/usr/include", triple)
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// repoRoot walks up from the package's directory to the module's go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = parent
	}
}
