package benchrig

// bgpinject.go: the BGP speaker `seg6x-bench bgp` injects routes with, run as a process of its own
// (`seg6x-bench bgp-injector`, hidden) so the node's memory is measured without it. A GoBGP server
// peering with the node; the parent drives it over stdin/stdout, one command per line:
//
//	up                    wait for the session (reply "ok" or "error: ...")
//	announce              announce all routes (in batches of 10,000)
//	withdraw I J K ...    withdraw routes by index
//	rss                   the injector's resident memory in MB
//	updates               the UPDATE messages it sent the node so far
//
// Each command is answered with one line: "ok [value]" or "error: ...".

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	api "github.com/osrg/gobgp/v4/api"
	"github.com/osrg/gobgp/v4/pkg/apiutil"
	"github.com/osrg/gobgp/v4/pkg/server"

	"github.com/seg6x/seg6x/internal/bgp"
)

// bgpBenchPaths are the routes the injector announces (bgplayout.go).
func bgpBenchPaths(lay bgpLayout) ([]*apiutil.Path, error) {
	paths := make([]*apiutil.Path, lay.routes)
	for i := range paths {
		var err error
		if paths[i], err = bgp.ToPath(lay.route(i), false); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// ServeBGPInjector runs the injector: listens on [::1]:port, peers with the node on [::1]:nodePort,
// and answers the commands read from in until it ends.
func ServeBGPInjector(routes, pes, tenants, port, nodePort int, in io.Reader, out io.Writer) error {
	lay, err := newBGPLayout(routes, pes, tenants)
	if err != nil {
		return err
	}
	paths, err := bgpBenchPaths(lay)
	if err != nil {
		return err
	}
	ctx := context.Background()
	inj := server.NewBgpServer(server.LoggerOption(slog.New(slog.DiscardHandler), new(slog.LevelVar)))
	go inj.Serve()
	defer inj.Stop()
	if err := inj.StartBgp(ctx, &api.StartBgpRequest{Global: &api.Global{Asn: 65000, RouterId: "198.18.255.2", ListenPort: int32(port)}}); err != nil {
		return err
	}
	if err := inj.AddPeer(ctx, &api.AddPeerRequest{Peer: &api.Peer{
		Conf:      &api.PeerConf{NeighborAddress: "::1", PeerAsn: 65000},
		Transport: &api.Transport{RemotePort: uint32(nodePort)},
		Timers:    &api.Timers{Config: &api.TimersConfig{ConnectRetry: 1, HoldTime: 90, KeepaliveInterval: 30}},
		AfiSafis:  []*api.AfiSafi{{Config: &api.AfiSafiConfig{Family: &api.Family{Afi: api.Family_AFI_IP, Safi: api.Family_SAFI_MPLS_VPN}, Enabled: true}}},
	}}); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		reply := "ok"
		switch f[0] {
		case "up":
			if err := waitEstablished(inj, 30*time.Second); err != nil {
				reply = "error: " + err.Error()
			}
		case "announce":
			for lo := 0; lo < routes; lo += 10000 {
				if _, err := inj.AddPath(apiutil.AddPathRequest{Paths: paths[lo:min(lo+10000, routes)]}); err != nil {
					reply = "error: " + err.Error()
					break
				}
			}
		case "withdraw":
			var gone []*apiutil.Path
			for _, s := range f[1:] {
				i, err := strconv.Atoi(s)
				if err != nil || i < 0 || i >= routes {
					reply = fmt.Sprintf("error: route %q: not 0..%d", s, routes-1)
					break
				}
				gone = append(gone, paths[i])
			}
			if reply == "ok" {
				if err := inj.DeletePath(apiutil.DeletePathRequest{Paths: gone}); err != nil {
					reply = "error: " + err.Error()
				}
			}
		case "rss":
			reply = fmt.Sprintf("ok %.1f", rssMB())
		case "updates":
			var n uint64
			_ = inj.ListPeer(ctx, &api.ListPeerRequest{}, func(p *api.Peer) { n += p.GetState().GetMessages().GetSent().GetUpdate() })
			reply = fmt.Sprintf("ok %d", n)
		default:
			reply = fmt.Sprintf("error: unknown command %q", f[0])
		}
		if _, err := fmt.Fprintln(out, reply); err != nil {
			return err
		}
	}
	return sc.Err()
}

// injector is the parent's handle on the injector process.
type injector struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startInjector(tool string, lay bgpLayout, port, nodePort int) (*injector, error) {
	cmd := exec.Command(tool, "bgp-injector", "--routes", strconv.Itoa(lay.routes), "--pes", strconv.Itoa(lay.pes),
		"--tenants", strconv.Itoa(lay.tenants), "--port", strconv.Itoa(port), "--node-port", strconv.Itoa(nodePort))
	cmd.Stderr = os.Stderr
	// The node's GC settings are what a run compares; the injector keeps Go's defaults.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool {
		return strings.HasPrefix(e, "GOGC=") || strings.HasPrefix(e, "GOMEMLIMIT=")
	})
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the injector (%s bgp-injector): %w", tool, err)
	}
	return &injector{cmd: cmd, in: in, out: bufio.NewScanner(out)}, nil
}

// do sends one command and returns the value of its "ok" reply.
func (j *injector) do(format string, args ...any) (string, error) {
	cmd := fmt.Sprintf(format, args...)
	if _, err := fmt.Fprintln(j.in, cmd); err != nil {
		return "", fmt.Errorf("injector: %s: %w", strings.Fields(cmd)[0], err)
	}
	if !j.out.Scan() {
		return "", fmt.Errorf("injector: %s: no reply (it exited: %v)", strings.Fields(cmd)[0], j.out.Err())
	}
	r := j.out.Text()
	if v, ok := strings.CutPrefix(r, "ok"); ok {
		return strings.TrimSpace(v), nil
	}
	return "", fmt.Errorf("injector: %s: %s", strings.Fields(cmd)[0], r)
}

func (j *injector) withdraw(idx []int) error {
	var b strings.Builder
	b.WriteString("withdraw")
	for _, i := range idx {
		fmt.Fprintf(&b, " %d", i)
	}
	_, err := j.do("%s", b.String())
	return err
}

func (j *injector) close() {
	j.in.Close()
	done := make(chan struct{})
	go func() { j.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		j.cmd.Process.Kill()
		<-done
	}
}
