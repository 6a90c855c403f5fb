package api

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
)

// writeCert makes a key and a certificate signed by parent (self-signed when parent is nil) and
// writes them as PEM files; it returns the certificate and key for signing others.
func writeCert(t *testing.T, dir, name string, isCA bool, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: isCA, BasicConstraintsValid: true, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if parent == nil {
		parent, parentKey = tpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(filepath.Join(dir, name+".pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}

// The TCP listener speaks TLS and serves only clients with a certificate from the configured CA.
func TestTLSListenerRequiresClientCertificate(t *testing.T) {
	_, st := client(t)
	dir := t.TempDir()
	ca, caKey := writeCert(t, dir, "ca", true, nil, nil)
	writeCert(t, dir, "server", false, ca, caKey)
	writeCert(t, dir, "client", false, ca, caKey)
	other, otherKey := writeCert(t, dir, "otherca", true, nil, nil)
	writeCert(t, dir, "stranger", false, other, otherKey)
	p := func(n string) string { return filepath.Join(dir, n) }

	if _, err := ServerTLS(TLSFiles{Cert: p("server.pem"), Key: p("server.key")}); err == nil {
		t.Fatal("a TCP listener without a client CA was accepted")
	}
	creds, err := ServerTLS(TLSFiles{CA: p("ca.pem"), Cert: p("server.pem"), Key: p("server.key")})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := NewGRPCServer(NewServer(st, true), creds)
	go gs.Serve(lis)
	defer gs.Stop()

	status := func(f TLSFiles) error {
		c, done, err := Connect(Target{Addr: lis.Addr().String(), TLS: f})
		if err != nil {
			return err
		}
		defer done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = c.Status(ctx, &pb.StatusRequest{})
		return err
	}
	if err := status(TLSFiles{CA: p("ca.pem"), Cert: p("client.pem"), Key: p("client.key")}); err != nil {
		t.Fatalf("a client with a valid certificate: %v", err)
	}
	if err := status(TLSFiles{CA: p("ca.pem")}); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	if err := status(TLSFiles{CA: p("ca.pem"), Cert: p("stranger.pem"), Key: p("stranger.key")}); err == nil {
		t.Fatal("a client with a certificate from another CA was served")
	}
}

func TestMetricsAndHealth(t *testing.T) {
	c, st := client(t)
	ctx := context.Background()
	if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{
		tenantOp(pb.Op_ADD, "blue", 100),
		routeOp(pb.Op_ADD, "blue", "198.18.2.0/24", "fc00:2::64"),
		routeOp(pb.Op_ADD, "blue", "198.18.3.0/24", "fc00:2::64"),
		sidOp(pb.Op_ADD, &pb.Sid{Sid: "fc00:1::64", Action: "End"}),
	}}); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{tenantOp(pb.Op_DELETE, "nosuch", 0)}}) // one API error
	srv := httptest.NewServer(NewServer(st, true).HTTPHandler())
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`seg6x_objects{kind="routes_ipv4"} 2`,
		`seg6x_objects{kind="policies"} 1`,
		`seg6x_objects{kind="sids"} 1`,
		`seg6x_policy_packets_total{name="",policy="1",segs="fc00:2::64",tenant="blue"} 0`,
		`seg6x_sid_packets_total{action="End",sid="fc00:1::64"} 0`,
		`seg6x_xdp_action_packets_total{action="XDP_PASS"}`,
		`seg6x_generation 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// This server counts its own API errors; none yet.
	if !strings.Contains(body, "seg6x_api_errors_total 0") {
		t.Errorf("/metrics: api errors of a fresh server not 0")
	}
	if code, body := get("/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Fatalf("/healthz with no interfaces: %d %q", code, body)
	}
}
