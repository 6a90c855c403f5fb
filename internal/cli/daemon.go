package cli

// daemon.go: `seg6x daemon`.

import (
	"context"
	"time"

	"github.com/seg6x/seg6x/internal/daemon"
	"github.com/seg6x/seg6x/internal/memtune"
	"github.com/spf13/cobra"
)

func daemonCmd() *cobra.Command {
	var o daemon.Options
	c := &cobra.Command{
		Use:   "daemon [--config FILE] [--metrics ADDR] [--listen ADDR --tls-cert F --tls-key F --tls-client-ca F]",
		Short: "Own the data plane and serve the control API (gRPC on <dir>/seg6x.sock)",
		Long: `Run the seg6x daemon for instance --dir. At start it adopts what is pinned in bpffs (maps and XDP
links left by an earlier daemon or CLI command, even one killed with -9) and reconciles it with its
saved state without flushing: forwarding never stops. With --config the file is applied at start
and again on SIGHUP, through the same API call as "seg6x apply -f".

Stopping the daemon (SIGTERM, SIGINT, or kill -9) leaves the data plane forwarding; --cleanup
makes a clean stop detach every interface and remove all state instead.

Endpoints:
  <dir>/seg6x.sock        gRPC API, mode 0600 (root only); every seg6x command uses it
  --listen HOST:PORT      the same API over TCP with TLS; clients must present a certificate
                          signed by --tls-client-ca
  --metrics HOST:PORT     HTTP: Prometheus /metrics and /healthz

--mirror-kernel follows the kernel's own SRv6 configuration (ip -6 route ... encap seg6 / seg6local,
FRR, agents) over netlink and runs it in the fast path; "seg6x show kernel" says what is
accelerated and why not (docs/kernel-mirror.md).

Next-hop cache: the daemon's programs reuse a FIB result for the same lookup for up to
--nexthop-cache-ms (default 1000), and the daemon invalidates every cached result at once on any
route, rule, link or neighbor change it hears over netlink, so the time limit matters only while no
daemon runs. "seg6x set nexthop-cache-ms N" (N > 0) overrides it; --nexthop-cache-ms 0 turns it off.

The daemon owns the instance (a lock on <dir>/lock). If a command run without a daemon holds it
at start, the daemon waits for it up to --lock-wait (default 10s), naming the holder, then gives up.

Logs go to stderr, from --log-level up, as text or JSON (--log-format); every commit leaves one audit
line ("commit" with origin, result, generation and counts). Metrics, logs and the Grafana dashboard
are described in docs/observability.md.

Memory: the daemon lets its heap grow by --gc-headroom percent of what is live (at least 64 MiB)
before collecting again, instead of Go's default of doubling: a million BGP routes take about 1.6 KB
of RSS each instead of 3.3 KB, and twice the time to load (docs/bgp.md, Scale). GOGC or GOMEMLIMIT
in the environment replace this policy.

Run it under systemd with deploy/seg6x.service (see docs/operations.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir = g.dir
			o.Socket = g.socket
			return daemon.Run(context.Background(), o)
		},
	}
	c.Flags().StringVar(&o.Config, "config", "", "YAML file applied at start and on SIGHUP (the whole desired state)")
	c.Flags().StringVar(&o.Metrics, "metrics", "", "serve /metrics and /healthz on this address (off by default)")
	c.Flags().StringVar(&o.Listen, "listen", "", "also serve the API over TCP with TLS on this address")
	c.Flags().StringVar(&o.TLS.Cert, "tls-cert", "", "with --listen: server certificate (PEM)")
	c.Flags().StringVar(&o.TLS.Key, "tls-key", "", "with --listen: server key (PEM)")
	c.Flags().StringVar(&o.TLS.CA, "tls-client-ca", "", "with --listen: CA that signs client certificates (PEM)")
	c.Flags().BoolVar(&o.Cleanup, "cleanup", false, "on a clean stop, detach everything and remove all state")
	c.Flags().Uint32Var(&o.NextHopCacheMs, "nexthop-cache-ms", 1000, "next-hop cache time while the state's nexthop_cache_ms is 0 (this daemon invalidates the cache on every route, rule, link or neighbor change; 0 = off)")
	c.Flags().DurationVar(&o.LockWait, "lock-wait", 10*time.Second, "how long to wait for the instance while another seg6x process holds it (a command run without a daemon); 0 = fail at once")
	c.Flags().IntVar(&o.GCHeadroom, "gc-headroom", memtune.Default.Percent, "let the Go heap grow by this percent of what is live (at least 64 MiB) between collections: bounds the memory a large BGP table takes, at some CPU while it loads; 0 = Go's default (100); GOGC or GOMEMLIMIT in the environment win")
	c.Flags().Var(&o.LogLevel, "log-level", "log from this level up: debug, info, warn or error (debug adds dry runs to the commit audit lines)")
	c.Flags().Var(&o.LogFormat, "log-format", "log lines as text (TIME LEVEL message key=value ...) or json (one object per line)")
	c.Flags().BoolVar(&o.Mirror, "mirror-kernel", false, "accelerate the kernel's own seg6/seg6local routes (followed over netlink; see docs/kernel-mirror.md)")
	return c
}
