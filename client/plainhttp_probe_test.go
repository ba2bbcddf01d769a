package client_test

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferryhq/ferry/client"
)

// TestLoopbackProbedOnce: a loopback host is asked over HTTPS once
// whether it speaks TLS, however many repositories on it are opened at
// once (a mirror opens all its packages' repositories together), and
// every one of them then speaks plain HTTP. The listener counts the
// connections that open with a TLS handshake record and holds the
// first one's answer until every caller has started, so callers that
// each probed would be counted.
func TestLoopbackProbedOnce(t *testing.T) {
	const callers = 32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var started sync.WaitGroup
	started.Add(callers)
	probes := &tlsCountingListener{Listener: ln, hold: func() { started.Wait(); time.Sleep(50 * time.Millisecond) }}
	srv := &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(probes)
	t.Cleanup(func() { srv.Close() })

	c, err := client.New(client.Options{RegistryConfig: filepath.Join(t.TempDir(), "config.json")})
	if err != nil {
		t.Fatal(err)
	}
	plain := make([]bool, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			started.Done()
			r, err := c.Repository(fmt.Sprintf("%s/app-%d", ln.Addr(), i))
			if err != nil {
				t.Error(err)
				return
			}
			plain[i] = r.PlainHTTP
		})
	}
	wg.Wait()
	if n := probes.tls.Load(); n != 1 {
		t.Errorf("%d HTTPS probes of %s, want 1", n, ln.Addr())
	}
	for i, p := range plain {
		if !p {
			t.Errorf("app-%d: PlainHTTP false, want true (the host answers in plain HTTP)", i)
		}
	}
}

// tlsCountingListener counts accepted connections whose first byte is a TLS
// handshake record (0x16); hold runs before the first of them is served.
type tlsCountingListener struct {
	net.Listener
	hold func()
	tls  atomic.Int64
}

func (l *tlsCountingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &peekConn{Conn: conn, l: l}, nil
}

// peekConn counts its connection on its first read.
type peekConn struct {
	net.Conn
	l    *tlsCountingListener
	once sync.Once
}

func (c *peekConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.once.Do(func() {
			if p[0] == 0x16 && c.l.tls.Add(1) == 1 {
				c.l.hold()
			}
		})
	}
	return n, err
}
