package cli

// capture_plugin.go: `seg6x capture --plugin NAME -w FILE.pcapng`: the frames a dump plugin (SEG6X_DUMP,
// plugins/dump.c) copied at its SIDs, read from its ring in the instance's bpffs and written as pcapng,
// one interface per SID, each packet's comment saying where it arrived.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"time"

	"github.com/cilium/ebpf/ringbuf"
	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/pcapng"
	"github.com/seg6x/seg6x/internal/pluginobj"
)

// dumpRecord is one record of a dump ring (struct seg6x_dump_rec).
type dumpRecord struct {
	timeNs                       uint64
	sidID, bind, ifindex, pktLen uint32
	capLen, vlan                 uint16
	hook                         uint8
	data                         []byte
}

func parseDumpRecord(b []byte) (dumpRecord, error) {
	if len(b) < pluginobj.DumpHeaderBytes {
		return dumpRecord{}, fmt.Errorf("a dump record of %d bytes", len(b))
	}
	le := binary.LittleEndian
	r := dumpRecord{timeNs: le.Uint64(b), sidID: le.Uint32(b[8:]), bind: le.Uint32(b[12:]), ifindex: le.Uint32(b[16:]),
		pktLen: le.Uint32(b[20:]), capLen: le.Uint16(b[24:]), vlan: le.Uint16(b[26:]), hook: b[28]}
	if int(r.capLen) > len(b)-pluginobj.DumpHeaderBytes || uint32(r.capLen) > r.pktLen {
		return dumpRecord{}, fmt.Errorf("a dump record of %d captured bytes (frame %d)", r.capLen, r.pktLen)
	}
	r.data = b[pluginobj.DumpHeaderBytes : pluginobj.DumpHeaderBytes+int(r.capLen)]
	return r, nil
}

// capturePlugin writes what plugin name dumps (only at sid, when valid) to out, until count packets,
// duration, or Ctrl-C.
func capturePlugin(name string, sid netip.Addr, out string, tf traceFlags) error {
	c, done, err := connect()
	if err != nil {
		return err
	}
	st, err := c.Stats(context.Background(), &pb.StatsRequest{})
	done()
	if err != nil {
		return apiErr(err)
	}
	var plugin *pb.PluginStats
	for _, p := range st.GetPlugins() {
		if p.GetName() == name {
			plugin = p
		}
	}
	if plugin == nil {
		return fmt.Errorf("no plugin %q is loaded (seg6x plugin show)", name)
	}
	cur, _, err := fetchState()
	if err != nil {
		return err
	}
	sidOf := map[uint32]string{}
	var want uint32
	for _, sd := range cur.SIDs {
		sidOf[sd.ID] = sd.Name()
		if sid.IsValid() && sd.SID == sid {
			want = sd.ID
		}
	}
	if sid.IsValid() && want == 0 {
		return fmt.Errorf("no SID %s", sid)
	}
	ring, err := dataplane.PluginDumpRing(g.dir, plugin.GetDigest())
	if err != nil {
		return err
	}
	defer ring.Close()
	rd, err := ringbuf.NewReader(ring)
	if err != nil {
		return err
	}
	defer rd.Close()

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := pcapng.NewWriter(f, "seg6x capture --plugin "+name)
	if err != nil {
		return err
	}
	ifaces := map[uint32]int{} // SID counter id -> pcapng interface
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	defer signal.Stop(stop)
	var end time.Time
	if tf.duration > 0 {
		end = time.Now().Add(tf.duration)
	}
	n := 0
	for tf.count == 0 || uint32(n) < tf.count {
		select {
		case <-stop:
			end = time.Now()
		default:
		}
		deadline := time.Now().Add(200 * time.Millisecond)
		if !end.IsZero() {
			if time.Now().After(end) {
				break
			}
			if end.Before(deadline) {
				deadline = end
			}
		}
		rd.SetDeadline(deadline)
		rec, err := rd.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if err != nil {
			return err
		}
		r, err := parseDumpRecord(rec.RawSample)
		if err != nil {
			return err
		}
		if want != 0 && r.sidID != want {
			continue
		}
		idx, ok := ifaces[r.sidID]
		if !ok {
			idx, err = w.AddInterface(pcapng.Interface{Name: "sid " + sidOf[r.sidID], LinkType: pcapng.LinkTypeEthernet,
				SnapLen:     pluginobj.DumpRecordBytes - pluginobj.DumpHeaderBytes,
				Description: fmt.Sprintf("seg6x: frames plugin %s copied at SID %s", name, sidOf[r.sidID])})
			if err != nil {
				return err
			}
			ifaces[r.sidID] = idx
		}
		hook := map[uint8]string{0: "xdp", 1: "tc"}[r.hook]
		if err := w.WritePacket(pcapng.Packet{Interface: idx, Time: dataplane.MonoTime(r.timeNs), Data: r.data, OrigLen: int(r.pktLen),
			Comment: fmt.Sprintf("seg6x: plugin %s at sid %s (%s, ifindex %d, vlan %d)", name, sidOf[r.sidID], hook, r.ifindex, r.vlan)}); err != nil {
			return err
		}
		n++
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d packets written to %s\n", n, out)
	return nil
}
