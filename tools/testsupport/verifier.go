package testsupport

// verifier.go: every program of a BPF object through the kernel's verifier, for the packages that
// hold bpf2go bindings (internal/dataplane, tools/benchrig/rigbpf, tools/lab/accessbpf,
// tools/lab/gsoprobe).

import (
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
)

// VerifierLoads loads every program of every object (by name: its spec) through the kernel's
// verifier, without pinning anything, each in a subtest, and logs its size and the verifier's work.
// It skips t without root.
func VerifierLoads(t *testing.T, objects map[string]func() (*ebpf.CollectionSpec, error)) {
	NeedRoot(t, "loading BPF programs")
	for name, load := range objects {
		t.Run(name, func(t *testing.T) {
			spec, err := load()
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range spec.Maps {
				m.Pinning = ebpf.PinNone
			}
			coll, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{
				Programs: ebpf.ProgramOptions{LogLevel: ebpf.LogLevelStats},
			})
			if err != nil {
				var ve *ebpf.VerifierError
				if errors.As(err, &ve) && len(ve.Log) > 0 {
					t.Logf("log tail: %v", ve.Log)
				}
				t.Fatalf("verifier: %+v", err)
			}
			defer coll.Close()
			if len(coll.Programs) == 0 {
				t.Fatal("no programs in object")
			}
			for pname, p := range coll.Programs {
				info, err := p.Info()
				if err != nil {
					t.Fatal(err)
				}
				insns, _ := info.Instructions()
				t.Logf("%s/%s: %d instructions; verifier: %s", name, pname, len(insns), lastLine(p.VerifierLog))
			}
		})
	}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
