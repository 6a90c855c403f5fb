package dataplane

// batch_test.go: a batch of map writes that the kernel stops part way (a full hash map) leaves the
// map as it was: the entries it wrote are removed, the values it replaced restored.

import (
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/seg6x/seg6x/tools/testsupport/testroot"
)

func TestBatchFailingPartWayIsUndone(t *testing.T) {
	testroot.Need(t, "BPF maps")
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

// A write of many batches goes over several writers: all of it lands; when some batches fail (the
// map fills), the failed ones are undone at once and the txn's rollback undoes the ones written.
func TestManyBatchesWrittenInParallel(t *testing.T) {
	testroot.Need(t, "BPF maps")
	const n = 5*batchSize + 17
	for _, size := range []uint32{n, 3 * batchSize} {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: size, Flags: unix.BPF_F_NO_PREALLOC})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		for k := uint32(0); k < 100; k++ {
			if err := m.Put(k*7, k); err != nil {
				t.Fatal(err)
			}
		}
		es := make([]entry[uint32, uint32], n)
		for i := range es {
			k := uint32(i) * 7
			es[i] = entry[uint32, uint32]{k: k, v: k + 1, old: uint32(i), had: i < 100}
		}
		contents := func() map[uint32]uint32 {
			got := map[uint32]uint32{}
			var k, v uint32
			for it := m.Iterate(); it.Next(&k, &v); {
				got[k] = v
			}
			return got
		}
		tx := &txn{restorable: true}
		err = putBatch(tx, m, es)
		if size == n {
			if err != nil {
				t.Fatal(err)
			}
			got := contents()
			for _, e := range es {
				if got[e.k] != e.v {
					t.Fatalf("key %d holds %d after the write, want %d (%d entries)", e.k, got[e.k], e.v, len(got))
				}
			}
			if len(got) != n || len(tx.undo) != 6 {
				t.Fatalf("%d entries, %d undo steps; want %d and 6", len(got), len(tx.undo), n)
			}
		} else if err == nil {
			t.Fatalf("%d entries written into a hash map of %d", n, size)
		}
		if err := tx.rollback(); err != nil {
			t.Fatal(err)
		}
		got := contents()
		if len(got) != 100 {
			t.Fatalf("map of %d: %d entries after the rollback, want the 100 before", size, len(got))
		}
		for k := uint32(0); k < 100; k++ {
			if got[k*7] != k {
				t.Fatalf("map of %d: key %d holds %d after the rollback, want %d", size, k*7, got[k*7], k)
			}
		}
	}
}
