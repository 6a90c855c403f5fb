package api

// client.go: how a CLI command reaches the instance: the daemon's Unix socket when a daemon runs,
// a TLS TCP address when given, or else the same gRPC server run in-process over an in-memory
// connection (the "no daemon" mode: the command locks the instance, commits and exits; the pinned
// data plane keeps forwarding).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// SocketPath is the daemon's default socket in instance dir.
func SocketPath(dir string) string { return filepath.Join(dir, "seg6x.sock") }

// Target says how to reach an instance.
type Target struct {
	Dir    string // instance directory
	Socket string // Unix socket ("" = SocketPath(Dir))
	Addr   string // host:port of a daemon's TLS listener (overrides the socket)
	TLS    TLSFiles
	// Wait bounds how long to wait while the instance is held by a process that does not serve
	// (yet): a daemon starting, stopping or restarting, or another command; 0: fail at once.
	Wait time.Duration
	// ReadOnly: the command only reads. Without a daemon answering, it refuses an instance
	// directory that holds no saved state (a mistyped --dir) instead of creating one there.
	ReadOnly bool
}

// errBusy is an instance held by a process that does not answer on the socket (yet).
var errBusy = errors.New("busy")

// TLSFiles are PEM files: the peer's CA, and our certificate and key.
type TLSFiles struct {
	CA, Cert, Key string
}

func (f TLSFiles) config(server bool) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS13}
	if f.Cert != "" || f.Key != "" {
		c, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("TLS certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	if f.CA != "" {
		b, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%s holds no PEM certificate", f.CA)
		}
		if server {
			cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
		} else {
			cfg.RootCAs = pool
		}
	}
	return cfg, nil
}

var callOpts = grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessage), grpc.MaxCallSendMsgSize(MaxMessage))

// Connect returns a client for t and a function that releases it.
func Connect(t Target) (pb.ControlClient, func(), error) {
	if t.Addr != "" {
		cfg, err := t.TLS.config(false)
		if err != nil {
			return nil, nil, err
		}
		conn, err := grpc.NewClient(t.Addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)), callOpts)
		if err != nil {
			return nil, nil, err
		}
		return pb.NewControlClient(conn), func() { conn.Close() }, nil
	}
	sock := t.Socket
	if sock == "" {
		sock = SocketPath(t.Dir)
	}
	deadline := time.Now().Add(t.Wait)
	for {
		c, done, err := connectLocal(t, sock)
		if !errors.Is(err, errBusy) {
			return c, done, permissionHint(err, sock)
		}
		if !time.Now().Before(deadline) {
			return nil, nil, fmt.Errorf("instance %s is held by another process (a daemon starting, stopping or restarting, or another seg6x command) and %s did not answer within %v (--wait)",
				t.Dir, sock, t.Wait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// connectLocal is one try of Connect without --server: the daemon's socket, or else the instance
// in-process; errBusy when another process holds it.
func connectLocal(t Target, sock string) (pb.ControlClient, func(), error) {
	_, serr := os.Stat(sock)
	if errors.Is(serr, os.ErrPermission) {
		return nil, nil, fmt.Errorf("%s: %w", sock, os.ErrPermission)
	}
	if serr == nil {
		c, done, err := DialSocket(sock)
		if err == nil {
			return c, done, nil
		}
		if os.IsPermission(err) || strings.Contains(err.Error(), "permission denied") {
			return nil, nil, fmt.Errorf("%s: %w", sock, os.ErrPermission)
		}
		// A socket nobody answers on: a daemon that died (kill -9), or one starting or stopping.
		// Work in-process if the lock is free.
	}
	if t.ReadOnly && !state.HasSaved(t.Dir) {
		return nil, nil, fmt.Errorf("no seg6x instance in %s: no daemon answers on %s and no state is saved there (is --dir right?)", t.Dir, sock)
	}
	st, err := dataplane.OpenStore(t.Dir, state.HostEnv{}, state.OpenOptions{NoWait: true})
	if errors.Is(err, state.ErrLocked) {
		return nil, nil, errBusy
	}
	if err != nil {
		return nil, nil, err
	}
	c, stop, err := Local(NewServer(st, false))
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return c, func() { stop(); st.Close() }, nil
}

// permissionHint turns a permission error into what to do about it.
func permissionHint(err error, sock string) error {
	if err == nil || !errors.Is(err, os.ErrPermission) || os.Geteuid() == 0 {
		return err
	}
	return fmt.Errorf("permission denied (%v): seg6x works on the data plane and the API socket %s (mode 0600), which are root's: "+
		"run it as root (sudo), or reach a daemon's TLS listener (--server) with a client certificate", err, sock)
}

// DialSocket connects to a daemon's Unix socket and checks that it answers.
func DialSocket(sock string) (pb.ControlClient, func(), error) {
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()), callOpts)
	if err != nil {
		return nil, nil, err
	}
	c := pb.NewControlClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	_, err = c.Status(ctx, &pb.StatusRequest{}, grpc.WaitForReady(false))
	cancel()
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return c, func() { conn.Close() }, nil
}

// Local serves srv in-process over an in-memory connection and returns a client of it.
func Local(srv *Server) (pb.ControlClient, func(), error) {
	lis := bufconn.Listen(1 << 20)
	// Stop waits for the handlers: a trace disarms the programs before this process exits.
	gs := NewGRPCServer(srv, grpc.WaitForHandlers(true))
	go gs.Serve(lis)
	conn, err := grpc.NewClient("passthrough:///local",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()), callOpts)
	if err != nil {
		gs.Stop()
		return nil, nil, err
	}
	return pb.NewControlClient(conn), func() { conn.Close(); gs.Stop() }, nil
}

// NewGRPCServer makes a gRPC server for srv (with extra options, e.g. TLS credentials).
func NewGRPCServer(srv *Server, opts ...grpc.ServerOption) *grpc.Server {
	opts = append(opts, grpc.MaxRecvMsgSize(MaxMessage), grpc.MaxSendMsgSize(MaxMessage))
	gs := grpc.NewServer(opts...)
	pb.RegisterControlServer(gs, srv)
	return gs
}

// ServerTLS returns the transport credentials of a TCP listener: our certificate, and client
// certificates required and checked against the CA.
func ServerTLS(f TLSFiles) (grpc.ServerOption, error) {
	if f.Cert == "" || f.Key == "" || f.CA == "" {
		return nil, fmt.Errorf("a TCP listener needs --tls-cert, --tls-key and --tls-client-ca (clients must present a certificate)")
	}
	cfg, err := f.config(true)
	if err != nil {
		return nil, err
	}
	return grpc.Creds(credentials.NewTLS(cfg)), nil
}
