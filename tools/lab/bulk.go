package lab

// bulk.go: a checked bulk TCP transfer, as a user's first iperf: the client sends N bytes of a seeded
// pseudo-random stream, the server checks every byte and sends N bytes of another stream back, which
// the client checks. Full-sized segments cross the tunnel both ways, so an MTU problem (a tunnel
// smaller than the hosts think) shows as a stall, and corruption as a mismatch.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

// BulkPort is where every lab host's bulk server listens.
const BulkPort = 7002

// BulkResult is one checked transfer each way.
type BulkResult struct {
	Tenant   string  `json:"tenant"`
	From     string  `json:"from"`
	To       string  `json:"to"`
	Bytes    int64   `json:"bytes"` // each way
	SentOK   bool    `json:"sent_ok"`
	RecvOK   bool    `json:"received_ok"`
	UpMbps   float64 `json:"up_mbps"`
	DownMbps float64 `json:"down_mbps"`
	// RouterCPU is the run time of the seg6x programs of every router during the transfer (both ways,
	// kernel.bpf_stats_enabled) per second of it: 0.05 is 5% of one CPU. What the lab's figure costs
	// seg6x, beside what the hosts' TCP stacks and the veths cost the same machine.
	RouterCPU float64 `json:"router_cpu"`
	Error     string  `json:"error,omitempty"`
}

// stream is a seeded pseudo-random byte stream (xorshift64*), the same on both ends.
type stream struct{ s uint64 }

func newStream(seed uint64) *stream { return &stream{s: seed*0x9E3779B97F4A7C15 | 1} }

func (r *stream) fill(b []byte) {
	for i := 0; i < len(b); i += 8 {
		r.s ^= r.s >> 12
		r.s ^= r.s << 25
		r.s ^= r.s >> 27
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.s*0x2545F4914F6CDD1D)
		copy(b[i:], w[:])
	}
}

// send writes n bytes of the stream.
func (r *stream) send(w io.Writer, n int64) error {
	buf := make([]byte, 64<<10)
	for n > 0 {
		k := min(int64(len(buf)), n)
		r.fill(buf[:k])
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// check reads n bytes and compares them with the stream.
func (r *stream) check(rd io.Reader, n int64) error {
	got, want := make([]byte, 64<<10), make([]byte, 64<<10)
	var at int64
	for at < n {
		k := min(int64(len(got)), n-at)
		if _, err := io.ReadFull(rd, got[:k]); err != nil {
			return fmt.Errorf("after %d of %d bytes: %w", at, n, err)
		}
		r.fill(want[:k])
		for i := int64(0); i < k; i++ {
			if got[i] != want[i] {
				return fmt.Errorf("byte %d differs (%#02x, want %#02x)", at+i, got[i], want[i])
			}
		}
		at += k
	}
	return nil
}

// BulkServer serves transfers on port until duration ends: each connection sends a 16-byte header
// (size, seed), then the stream, which is checked; the answer is one status byte (1: all bytes
// right) and the stream of seed+1.
func BulkServer(port int, duration time.Duration) error {
	ln, err := net.Listen("tcp4", fmt.Sprintf(":%d", port))
	if err != nil {
		return err
	}
	deadline := time.Now().Add(duration)
	go func() { time.Sleep(time.Until(deadline)); ln.Close() }()
	for {
		c, err := ln.Accept()
		if err != nil {
			return nil
		}
		go func(c net.Conn) {
			defer c.Close()
			_ = c.SetDeadline(deadline)
			rd := bufio.NewReaderSize(c, 256<<10)
			var hdr [16]byte
			if _, err := io.ReadFull(rd, hdr[:]); err != nil {
				return
			}
			n, seed := int64(binary.BigEndian.Uint64(hdr[:8])), binary.BigEndian.Uint64(hdr[8:])
			ok := byte(1)
			if newStream(seed).check(rd, n) != nil {
				ok = 0
			}
			if _, err := c.Write([]byte{ok}); err != nil {
				return
			}
			_ = newStream(seed+1).send(c, n)
		}(c)
	}
}

// Bulk runs one transfer of n bytes each way to a BulkServer at dst (address:port) within timeout.
func Bulk(dst string, n int64, seed uint64, timeout time.Duration) BulkResult {
	res := BulkResult{To: dst, Bytes: n}
	c, err := net.DialTimeout("tcp4", dst, 5*time.Second)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	var hdr [16]byte
	binary.BigEndian.PutUint64(hdr[:8], uint64(n))
	binary.BigEndian.PutUint64(hdr[8:], seed)
	start := time.Now()
	if _, err := c.Write(hdr[:]); err != nil {
		res.Error = err.Error()
		return res
	}
	if err := newStream(seed).send(c, n); err != nil {
		res.Error = "sending: " + err.Error()
		return res
	}
	rd := bufio.NewReaderSize(c, 256<<10)
	status, err := rd.ReadByte() // arrives once the server has checked every byte
	if err != nil {
		res.Error = "waiting for the server's check: " + err.Error()
		return res
	}
	up := time.Since(start)
	res.SentOK = status == 1
	start = time.Now()
	if err := newStream(seed+1).check(rd, n); err != nil {
		res.Error = "receiving: " + err.Error()
		return res
	}
	res.RecvOK = true
	res.UpMbps = float64(n*8) / up.Seconds() / 1e6
	res.DownMbps = float64(n*8) / time.Since(start).Seconds() / 1e6
	return res
}
