package dataplane

import (
	"errors"
	"os"
	"testing"

	"github.com/cilium/ebpf"
)

// TestVerifierLoadsEveryVariant loads every program of every build variant through the kernel's
// verifier (without pinning anything) and logs its size and the verifier's work.
func TestVerifierLoadsEveryVariant(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to load BPF programs")
	}
	variants := map[string]func() (*ebpf.CollectionSpec, error){
		"seg6x":            LoadSeg6x,
		"seg6x_fib_direct": LoadSeg6xFibDirect,
		"baseline":         LoadBaseline,
		"access":           LoadAccess,
		"bench":            LoadBench,
	}
	for name, load := range variants {
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
				t.Fatal("no programs in variant")
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
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return s
}
