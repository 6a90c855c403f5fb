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
}

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
	if _, err := os.Stat(sock); err == nil {
		if c, done, err := DialSocket(sock); err == nil {
			return c, done, nil
		}
		// A socket nobody answers on: a daemon that died (kill -9). Work in-process if the lock is free.
	}
	st, err := dataplane.OpenStore(t.Dir, state.HostEnv{}, state.OpenOptions{NoWait: true})
	if errors.Is(err, state.ErrLocked) {
		if _, serr := os.Stat(sock); serr == nil {
			return nil, nil, fmt.Errorf("instance %s is locked (a daemon?) but %s does not answer", t.Dir, sock)
		}
		st, err = dataplane.OpenStore(t.Dir, state.HostEnv{}, state.OpenOptions{}) // another CLI command: wait for it
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
