package interoptest

// exabgp.go: one ExaBGP 5 peer in a namespace of its own: its config (one neighbor, VPNv4 and VPNv6,
// with or without the extended next hop capability), its API process (relay.py) through which the test
// announces and withdraws routes at run time, and what it reports: session state changes,
// notifications, and every UPDATE it received as the raw bytes (decoded by wire.go). ExaBGP 5.0's
// parsed JSON of an SRv6 SID Information sub-TLV is not valid JSON (it prints "%s" for the SID), so
// the raw bytes are what is read.

import (
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"text/template"
	"time"
)

// exaBGPVenv is the Python venv scripts/deps.sh installs ExaBGP 5 into (from PyPI).
const exaBGPVenv = "/opt/seg6x-test/exabgp"

//go:embed relay.py
var relayScript []byte

// exaBGPVersion is the version the installed ExaBGP reports ("" and an error: none usable).
func exaBGPVersion() (string, error) {
	bin := filepath.Join(exaBGPVenv, "bin", "exabgp")
	if _, err := os.Stat(bin); err != nil {
		return "", err
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s version: %v: %s", bin, err, out)
	}
	m := regexp.MustCompile(`ExaBGP : (\S+)`).FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s version: %q", bin, out)
	}
	return string(m[1]), nil
}

// exaConfig is one ExaBGP peer: an iBGP session from Local to Peer (seg6x) in namespace NS.
type exaConfig struct {
	Name            string // for messages
	NS              string
	Dir             string // its config, pipe, received messages and log
	Local, Peer     string // IPv6 addresses
	RouterID        string
	ASN             uint32
	ExtendedNextHop bool // RFC 8950 for ipv4 mpls-vpn (capability and IPv6 next hops)
}

var exaConf = template.Must(template.New("exabgp").Parse(`process relay {
    run {{.Python}} {{.Relay}} {{.FIFO}} {{.Out}};
    encoder json;
}

neighbor {{.Peer}} {
    router-id {{.RouterID}};
    local-address {{.Local}};
    local-as {{.ASN}};
    peer-as {{.ASN}};
    capability {
        nexthop {{.ExtendedNextHop}};
    }
    family {
        ipv4 mpls-vpn;
        ipv6 mpls-vpn;
    }
{{- if .ExtendedNextHop}}
    nexthop {
        ipv4 mpls-vpn ipv6;
    }
{{- end}}
    api {
        processes [ relay ];
        neighbor-changes;
        receive {
            packets;
            update;
            notification;
        }
    }
}
`))

// exaPeer is a running ExaBGP.
type exaPeer struct {
	c    exaConfig
	cmd  *exec.Cmd
	done chan struct{}
	fifo *os.File // the relay's command pipe, held open for writing
	out  string   // the relay's file of received lines
	mu   sync.Mutex
}

// exaMessage is one JSON line of ExaBGP's API output (state changes; UPDATEs and notifications as raw
// packets).
type exaMessage struct {
	Type     string `json:"type"` // state, update, notification
	Neighbor struct {
		State     string `json:"state"` // connected, up, down
		Reason    string `json:"reason"`
		Direction string `json:"direction"`
		Message   struct {
			Category int    `json:"category"` // 2 UPDATE, 3 NOTIFICATION
			Header   string `json:"header"`
			Body     string `json:"body"`
		} `json:"message"`
	} `json:"neighbor"`
}

// startExaBGP writes c's config and starts ExaBGP in c.NS (it connects to the peer itself and
// listens on Local:179 too). The caller stops it.
func startExaBGP(c exaConfig) (*exaPeer, error) {
	if err := os.MkdirAll(c.Dir, 0o750); err != nil {
		return nil, err
	}
	e := &exaPeer{c: c, out: filepath.Join(c.Dir, "received.jsonl"), done: make(chan struct{})}
	relay, fifo, conf := filepath.Join(c.Dir, "relay.py"), filepath.Join(c.Dir, "commands.fifo"), filepath.Join(c.Dir, "exabgp.conf")
	if err := os.WriteFile(relay, relayScript, 0o640); err != nil {
		return nil, err
	}
	if err := os.WriteFile(e.out, nil, 0o640); err != nil {
		return nil, err
	}
	_ = os.Remove(fifo)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := exaConf.Execute(&b, map[string]any{"Python": filepath.Join(exaBGPVenv, "bin", "python3"), "Relay": relay,
		"FIFO": fifo, "Out": e.out, "Peer": c.Peer, "Local": c.Local, "RouterID": c.RouterID, "ASN": c.ASN,
		"ExtendedNextHop": c.ExtendedNextHop}); err != nil {
		return nil, err
	}
	if err := os.WriteFile(conf, []byte(b.String()), 0o640); err != nil {
		return nil, err
	}
	var err error
	// Read-write: opening never waits for the relay, and what is written waits in the pipe for it.
	if e.fifo, err = os.OpenFile(fifo, os.O_RDWR, 0); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(c.Dir, "exabgp.log"))
	if err != nil {
		e.fifo.Close()
		return nil, err
	}
	defer log.Close()
	e.cmd = exec.Command("ip", "netns", "exec", c.NS, filepath.Join(exaBGPVenv, "bin", "exabgp"), conf)
	e.cmd.Env = append(os.Environ(), "exabgp_daemon_user=root", "exabgp_daemon_drop=false", "exabgp_api_cli=false",
		"exabgp_api_ack=true", "exabgp_api_respawn=false", "exabgp_api_terminate=true", "exabgp_tcp_bind="+c.Local,
		"exabgp_log_destination=stdout")
	e.cmd.Stdout, e.cmd.Stderr = log, log
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // its own process group: ExaBGP and its relay
	if err := e.cmd.Start(); err != nil {
		e.fifo.Close()
		return nil, err
	}
	go func() { _ = e.cmd.Wait(); close(e.done) }()
	return e, nil
}

// stop ends ExaBGP (SIGTERM; after 5 s SIGKILL to its process group, the relay too) and waits for it.
// A relay whose ExaBGP is gone ends by itself (its input closes).
func (e *exaPeer) stop() {
	if e == nil {
		return
	}
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
		<-e.done
	}
	e.fifo.Close()
}

// logTail is the end of ExaBGP's log.
func (e *exaPeer) logTail() string {
	data, _ := os.ReadFile(filepath.Join(e.c.Dir, "exabgp.log"))
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(len(lines)-20, 0):], "\n")
}

// read returns what ExaBGP reported so far: its JSON messages and its command acknowledgements
// ("done", "error") in order.
func (e *exaPeer) read() ([]exaMessage, []string, error) {
	data, err := os.ReadFile(e.out)
	if err != nil {
		return nil, nil, err
	}
	var msgs []exaMessage
	var acks []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "{"):
			var m exaMessage
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				return nil, nil, fmt.Errorf("%s: %v in %.300s", e.c.Name, err, line)
			}
			msgs = append(msgs, m)
		default:
			acks = append(acks, line)
		}
	}
	return msgs, acks, nil
}

// command sends one API command and waits (up to 10 s) for ExaBGP to acknowledge it.
func (e *exaPeer) command(line string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, acks, err := e.read()
	if err != nil {
		return err
	}
	before := len(acks)
	if _, err := e.fifo.WriteString(line + "\n"); err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-e.done:
			return fmt.Errorf("%s exited\n%s", e.c.Name, e.logTail())
		default:
		}
		if _, acks, err = e.read(); err != nil {
			return err
		}
		if len(acks) > before {
			if acks[before] != "done" {
				return fmt.Errorf("%s refused %q (%s)\n%s", e.c.Name, line, acks[before], e.logTail())
			}
			return nil
		}
	}
	return fmt.Errorf("%s did not acknowledge %q within 10 s\n%s", e.c.Name, line, e.logTail())
}

// sessionEvents counts, from ExaBGP's messages: the times the session came up, the times an
// established session went down (flaps, with their reasons; not connection attempts that failed), and
// the NOTIFICATIONs received.
func sessionEvents(msgs []exaMessage) (ups int, downs []string, notifications int) {
	up := false
	for _, m := range msgs {
		switch {
		case m.Type == "state" && m.Neighbor.State == "up":
			ups, up = ups+1, true
		case m.Type == "state" && m.Neighbor.State == "down" && up:
			downs, up = append(downs, m.Neighbor.Reason), false
		case m.Type == "notification" || m.Neighbor.Message.Category == 3:
			notifications++
		}
	}
	return ups, downs, notifications
}

// updates decodes every UPDATE ExaBGP received.
func updates(msgs []exaMessage) ([]update, error) {
	var out []update
	for _, m := range msgs {
		if m.Type != "update" || m.Neighbor.Message.Category != 2 || m.Neighbor.Direction != "receive" {
			continue
		}
		b, err := hex.DecodeString(strings.TrimPrefix(strings.ToLower(m.Neighbor.Message.Body), "0x"))
		if err != nil {
			return nil, err
		}
		u, err := decodeUpdate(b)
		if err != nil {
			return nil, fmt.Errorf("UPDATE %s: %w", m.Neighbor.Message.Body, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// adjRIBIn is what the UPDATEs leave announced: "RD prefix" -> the last announcement.
func adjRIBIn(us []update) map[string]vpnRoute {
	out := map[string]vpnRoute{}
	for _, u := range us {
		for _, r := range u.Unreach {
			delete(out, r.RD+" "+r.Prefix.String())
		}
		for _, r := range u.Reach {
			out[r.RD+" "+r.Prefix.String()] = r
		}
	}
	return out
}
