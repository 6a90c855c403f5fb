package rigbpf

// fibdirect.go: loading the FIB_MAIN_DIRECT variant of the seg6x program on an instance's maps.

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
)

// LoadFibDirect loads the FIB_MAIN_DIRECT build variant bound to instance dir's pinned maps
// (main-table FIB lookups skip the policy rules).
func LoadFibDirect(dir string) (*Seg6xFibDirectObjects, error) {
	spec, err := LoadSeg6xFibDirect()
	if err != nil {
		return nil, err
	}
	var o Seg6xFibDirectObjects
	if err := spec.LoadAndAssign(&o, &ebpf.CollectionOptions{Maps: ebpf.MapOptions{PinPath: dataplane.MapPinDir(dir)}}); err != nil {
		return nil, fmt.Errorf("loading FIB_MAIN_DIRECT variant: %w", err)
	}
	return &o, nil
}
