package dataplane

// batch_test.go: a batch of map writes that the kernel stops part way (a full hash map) leaves the
// map as it was: the entries it wrote are removed, the values it replaced restored.

import (
	"os"
	"testing"

	"github.com/cilium/ebpf"
)

func TestBatchFailingPartWayIsUndone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (BPF maps)")
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for k := uint32(0); k < 2; k++ {
		if err := m.Put(k, 100+k); err != nil {
			t.Fatal(err)
		}
	}
	// Keys 0 and 1 replaced, 2..7 new: the map holds 4, so the kernel writes the first 4 and fails.
	var es []entry[uint32, uint32]
	for k := uint32(0); k < 8; k++ {
		es = append(es, entry[uint32, uint32]{k: k, v: 200 + k, old: 100 + k, had: k < 2})
	}
	tx := &txn{restorable: true}
	if err := putBatch(tx, m, es); err == nil {
		t.Fatal("8 entries written into a hash map of 4")
	}
	got := map[uint32]uint32{}
	var k, v uint32
	for it := m.Iterate(); it.Next(&k, &v); {
		got[k] = v
	}
	if len(got) != 2 || got[0] != 100 || got[1] != 101 {
		t.Fatalf("after the failed batch the map holds %v, want map[0:100 1:101]", got)
	}
	if len(tx.undo) != 0 {
		t.Fatalf("the failed batch left %d undo steps", len(tx.undo))
	}
}
