package pcapng

// first_test.go: FirstPacket reads back what the writer wrote, and a classic pcap file.

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

func TestFirstPacket(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "test")
	if err != nil {
		t.Fatal(err)
	}
	i, _ := w.AddInterface(Interface{Name: "rx", LinkType: LinkTypeEthernet})
	want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	if err := w.WritePacket(Packet{Interface: i, Time: time.Unix(1, 0), Data: want, Comment: "x"}); err != nil {
		t.Fatal(err)
	}
	w.WritePacket(Packet{Interface: i, Time: time.Unix(2, 0), Data: []byte{9, 9}})
	w.Flush()
	got, err := FirstPacket(buf.Bytes())
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("pcapng: %x, %v; want %x", got, err, want)
	}
	// Classic pcap, big-endian, microseconds.
	p := binary.BigEndian.AppendUint32(nil, 0xa1b2c3d4)
	p = append(p, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 1)
	p = append(p, make([]byte, 8)...)
	p = binary.BigEndian.AppendUint32(p, uint32(len(want)))
	p = binary.BigEndian.AppendUint32(p, uint32(len(want)))
	p = append(p, want...)
	if got, err := FirstPacket(p); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("pcap: %x, %v", got, err)
	}
	for _, bad := range [][]byte{nil, []byte("hello, this is not a capture file"), p[:30]} {
		if _, err := FirstPacket(bad); err == nil {
			t.Errorf("FirstPacket(%q): no error", bad)
		}
	}
}
