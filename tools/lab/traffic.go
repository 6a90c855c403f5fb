package lab

// traffic.go: the lab's traffic: an echo server that answers with its own tenant's name (and logs
// any message from another tenant), and a probe that checks every answer came from its own tenant.

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// EchoServer answers UDP and TCP messages on port with "<tenant>:<message>" until duration ends.
// Messages not from tenant (they start with "<tenant>-") are appended to foreignLog.
func EchoServer(tenant string, port int, duration time.Duration, foreignLog string) error {
	var mu sync.Mutex
	note := func(msg string) string {
		if !strings.HasPrefix(msg, tenant+"-") {
			mu.Lock()
			if f, err := os.OpenFile(foreignLog, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
				fmt.Fprintln(f, msg)
				f.Close()
			}
			mu.Unlock()
		}
		return tenant + ":" + msg
	}
	uc, err := net.ListenPacket("udp4", fmt.Sprintf(":%d", port))
	if err != nil {
		return err
	}
	tl, err := net.Listen("tcp4", fmt.Sprintf(":%d", port))
	if err != nil {
		return err
	}
	deadline := time.Now().Add(duration)
	_ = uc.SetDeadline(deadline)
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := uc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = uc.WriteTo([]byte(note(string(buf[:n]))), from)
		}
	}()
	go func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				_ = c.SetDeadline(deadline)
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					if _, err := fmt.Fprintln(c, note(sc.Text())); err != nil {
						return
					}
				}
			}(c)
		}
	}()
	time.Sleep(time.Until(deadline))
	tl.Close()
	uc.Close()
	return nil
}

// ProbeResult is what a probe saw.
type ProbeResult struct {
	Proto       string `json:"proto"`
	Sent        int    `json:"sent"`
	OK          int    `json:"ok"`
	WrongTenant int    `json:"wrong_tenant"`
	Lost        int    `json:"lost"`
}

// Probe sends count messages to dst over proto (udp or tcp) and checks each answer.
func Probe(tenant, proto, dst string, count int, timeout time.Duration) (ProbeResult, error) {
	r := ProbeResult{Proto: proto}
	host, _ := os.Hostname()
	check := func(msg, reply string) {
		switch {
		case reply == tenant+":"+msg:
			r.OK++
		case reply == "":
			r.Lost++
		default:
			r.WrongTenant++
		}
	}
	switch proto {
	case "udp":
		c, err := net.Dial("udp4", dst)
		if err != nil {
			return r, err
		}
		defer c.Close()
		buf := make([]byte, 2048)
		for i := 0; i < count; i++ {
			msg := fmt.Sprintf("%s-%s-udp-%d", tenant, host, i)
			r.Sent++
			if _, err := c.Write([]byte(msg)); err != nil {
				r.Lost++
				continue
			}
			_ = c.SetReadDeadline(time.Now().Add(timeout))
			n, err := c.Read(buf)
			if err != nil {
				check(msg, "")
				continue
			}
			check(msg, string(buf[:n]))
		}
	case "tcp":
		c, err := net.DialTimeout("tcp4", dst, timeout)
		if err != nil {
			return r, fmt.Errorf("tcp connect %s: %w", dst, err)
		}
		defer c.Close()
		rd := bufio.NewReader(c)
		for i := 0; i < count; i++ {
			msg := fmt.Sprintf("%s-%s-tcp-%d-%s", tenant, host, i, strings.Repeat("x", 1000))
			r.Sent++
			_ = c.SetDeadline(time.Now().Add(timeout))
			if _, err := fmt.Fprintln(c, msg); err != nil {
				r.Lost += count - i
				break
			}
			line, err := rd.ReadString('\n')
			if err != nil {
				check(msg, "")
				r.Lost += count - i - 1
				r.Sent = count
				break
			}
			check(msg, strings.TrimSuffix(line, "\n"))
		}
	default:
		return r, fmt.Errorf("proto %q: want udp or tcp", proto)
	}
	return r, nil
}
