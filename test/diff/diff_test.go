// Package difftest proves byte-for-byte agreement with the kernel: the same frames go through two
// identical namespace topologies holding the same kernel SRv6 configuration, one forwarded by the
// kernel alone and one by seg6x mirroring that configuration (seg6x daemon --mirror-kernel), and
// what comes out is compared byte for byte, except the fields docs/kernel-mirror.md lists as
// different on purpose. It also checks that seg6x forwarded in XDP what it should, so agreement
// cannot come from seg6x handing everything to the kernel. The tests share nothing (each has its
// own namespaces, named after it, and its own daemon) and run in parallel.
package difftest

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestSameBytesAsTheKernel(t *testing.T) {
	t.Parallel()
	sameBytes(t, "s6d", topo{}, corpus())
}

// A jumbo fabric (9000-byte MTU on both sides): frames beyond a page reach XDP as multi-buffer frames,
// and come out as the kernel's.
func TestSameBytesAsTheKernelJumbo(t *testing.T) {
	t.Parallel()
	sameBytes(t, "s6j", topo{mtu: 9000}, jumboCorpus())
}

// Without `ip sr tunsrc`, End.B6.Encaps and a seg6 encap route take the outer source the kernel
// selects for the first segment on the route's own device (d0: fc00:a0::1), not the source of the
// route to that segment (out of d1: fc00:e1::1).
func TestB6SourceAsTheKernel(t *testing.T) {
	t.Parallel()
	var ps []testPacket
	for _, p := range corpus() {
		if strings.Contains(p.name, "End.B6.Encaps") || strings.Contains(p.name, "dev d0") {
			ps = append(ps, p)
		}
	}
	sameBytes(t, "s6b", topo{noTunsrc: true}, ps)
}

// sameBytes sends every packet of ps through both copies of topology tp (named after prefix) and
// compares what comes out.
func sameBytes(t *testing.T, prefix string, tp topo, ps []testPacket) {
	bin := testsupport.BuildSeg6x(t)
	tmp := t.TempDir()
	id := os.Getpid() % 10000
	k, x := tp, tp
	k.p, x.p = fmt.Sprintf("%sk%d", prefix, id), fmt.Sprintf("%sx%d", prefix, id)
	for _, tp := range []topo{k, x} {
		if err := tp.up(); err != nil {
			t.Fatal(err)
		}
		defer tp.down()
	}
	// seg6x on the second copy: attach, and mirror the kernel's configuration.
	dir := filepath.Join(tmp, "x")
	testsupport.ScratchInstance(t, dir)
	cfg := filepath.Join(tmp, "x.yaml")
	os.WriteFile(cfg, []byte("interfaces: [{name: d0}, {name: d1}]\n"), 0o600)
	var logs testsupport.LogBuffer
	d, err := testsupport.StartDaemon(bin, x.ns("dut"), dir, &logs, "--mirror-kernel", "--config", cfg)
	if err != nil {
		t.Fatalf("%v:\n%s", err, logs.String())
	}
	defer d.Signal(os.Kill)
	c := d.Client
	ctx := context.Background()
	want := 0 // every seg6 / seg6local route of the kernel configuration
	for _, line := range kernelConfig() {
		if strings.Contains(line, " encap seg6") {
			want++
		}
	}
	var kr *pb.KernelReply
	for i := 0; i < 100; i++ {
		var err error
		if kr, err = c.Kernel(ctx, &pb.KernelRequest{}); err != nil {
			t.Fatal(err)
		}
		acc := 0
		for _, r := range kr.Routes {
			if r.Accelerated {
				acc++
			}
		}
		if acc == want {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(kr.Routes) != want {
		t.Errorf("the mirror reports %d kernel SRv6 routes, the configuration has %d", len(kr.Routes), want)
	}
	for _, r := range kr.Routes {
		if !r.Accelerated {
			t.Errorf("kernel route not accelerated: %s: %s", r.Route, r.Reason)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	ports := map[string]*port{}
	for name, spec := range map[string][2]string{"ksrc": {k.ns("src"), "s0"}, "kdst": {k.ns("dst"), "e0"},
		"xsrc": {x.ns("src"), "s0"}, "xdst": {x.ns("dst"), "e0"}} {
		p, err := openPort(spec[0], spec[1])
		if err != nil {
			t.Fatal(err)
		}
		defer p.close()
		ports[name] = p
	}
	redirects := func() uint64 {
		s, err := c.Stats(ctx, &pb.StatsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Actions["XDP_REDIRECT"].GetPackets()
	}
	// What comes out of a packet is what each copy's capture receives until it has been quiet for
	// this long; both copies are collected at once. Anything left queued when the next packet is due
	// came after that window: an error of the packet before (what was queued before the first one is
	// not looked at).
	const quiet = 60 * time.Millisecond
	prev := ""
	late := func() {
		for _, name := range []string{"kdst", "xdst"} {
			if f := ports[name].drain(); len(f) > 0 && prev != "" {
				t.Errorf("%s: %d frames came to %s after the %v window\n %x", prev, len(f), name, quiet, f)
			}
		}
	}
	compared, fast := 0, 0
	only := os.Getenv("SEG6X_DIFF_ONLY") // a substring of packet names, to look at a few while debugging
	for _, p := range ps {
		if only != "" && !strings.Contains(p.name, only) {
			continue
		}
		late()
		prev = p.name
		r0 := redirects()
		if err := ports["ksrc"].send(p.frame); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if err := ports["xsrc"].send(p.frame); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		out := collectEach(quiet, ports["kdst"], ports["xdst"])
		kout, xout := out[0], out[1]
		viaXDP := redirects() - r0
		if len(kout) != len(xout) {
			t.Errorf("%s: the kernel sent %d frames, seg6x %d\n kernel %x\n seg6x  %x", p.name, len(kout), len(xout), kout, xout)
			continue
		}
		for i := range kout {
			kf, xf := kout[i], xout[i]
			if p.headend {
				kf, xf = maskHeadend(kf), maskHeadend(xf)
			}
			if !bytes.Equal(kf, xf) {
				t.Errorf("%s: frame %d differs beyond the documented fields\n kernel %s\n seg6x  %s", p.name, i, hex.EncodeToString(kf), hex.EncodeToString(xf))
			}
			compared++
		}
		if p.fast && viaXDP != 1 {
			t.Errorf("%s: seg6x forwarded %d frames in XDP, want 1 (the fast path must do this one)", p.name, viaXDP)
		}
		if !p.fast && !p.either && viaXDP != 0 {
			t.Errorf("%s: seg6x redirected it in XDP; expected it to go to the kernel", p.name)
		}
		if p.fast {
			fast++
		}
	}
	late()
	t.Logf("%d packets, %d output frames compared, %d forwarded by seg6x in XDP", len(ps), compared, fast)
	if s, err := c.Stats(ctx, &pb.StatsRequest{}); err == nil {
		t.Logf("seg6x reasons: %v", s.Reasons)
	}
	if compared < len(ps)/2 && only == "" {
		t.Fatalf("only %d frames came out to compare", compared)
	}
}
