package bgp

// sever_test.go: addresses as /proc/net/tcp{,6} print them, and a connection of this process shut
// the way severSessions finds it (by the peer's port), its peer reading end of file.

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

func TestProcAddrPort(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:00B3":                         "127.0.0.1:179",
		"00000000000000000000000001000000:B023": "[::1]:45091",
		"B80D0120000000000000000001000000:0050": "[2001:db8::1]:80",
		"0000000000000000FFFF00000212C6C6:1F90": "198.198.18.2:8080", // v4-mapped, unmapped
	} {
		got, err := procAddrPort(in)
		if err != nil || got.String() != want {
			t.Errorf("procAddrPort(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0100007F", "0100007G:00B3", "01007F:00B3", "0100007F:1FFFF"} {
		if _, err := procAddrPort(bad); err == nil {
			t.Errorf("procAddrPort(%q): no error", bad)
		}
	}
}

func TestSeverSessions(t *testing.T) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := uint16(l.Addr().(*net.TCPAddr).Port)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := <-accepted
	defer srv.Close()
	// Another peer address: nothing to shut.
	if n, err := severSessions(map[netip.Addr]uint16{netip.MustParseAddr("2001:db8::1"): port}, -1); n != 0 || err != nil {
		t.Fatalf("severSessions(other peer) = %d, %v", n, err)
	}
	// The dialled connection (remote port = the peer's); the accepted one (local port = listen
	// port, remote = ::1) is shut too when the listen port is given.
	n, err := severSessions(map[netip.Addr]uint16{netip.MustParseAddr("::1"): port}, -1)
	if n != 1 || err != nil {
		t.Fatalf("severSessions = %d, %v; want 1", n, err)
	}
	srv.SetReadDeadline(time.Now().Add(5 * time.Second))
	if k, err := srv.Read(make([]byte, 1)); k != 0 || err == nil || err.Error() != "EOF" {
		t.Fatalf("the peer's read after the shutdown: %d, %v; want EOF", k, err)
	}
}
