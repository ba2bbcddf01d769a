package registrytest

import (
	"net"
	"sync"
)

// A stopped registry's port is held, so that "later requests to Host fail
// to connect" stays true while the test runs. Tests run in parallel and
// each starts registries on port 0: without the hold, the kernel may give
// the freed port to another test's registry, and a request meant to find
// nobody there is answered by it (a 404 where "connection refused" was
// expected). The port is held by a socket bound to it without listening
// (holdPort): the kernel answers a connection with a reset, which the
// client reports as refused, and gives the port to no other registry
// until the test ends.

// trackingListener remembers the connections it accepted and that are
// still open, so that Stop can close them without TIME_WAIT.
type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns map[*trackedConn]bool
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	l.mu.Lock()
	l.conns[tc] = true
	l.mu.Unlock()
	return tc, nil
}

// abortAll makes every open connection close with a reset instead of
// FIN: a server that closes first keeps its port in TIME_WAIT for a
// minute, and a port in TIME_WAIT cannot be held.
func (l *trackingListener) abortAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		if tcp, ok := c.Conn.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0)
		}
	}
}

// trackedConn is an accepted connection that leaves its listener's set
// when closed.
type trackedConn struct {
	net.Conn
	l    *trackingListener
	once sync.Once
}

// NetConn returns the accepted connection, as crypto/tls's Conn does, for
// code that sets TCP options on it (faultproxy's reset).
func (c *trackedConn) NetConn() net.Conn { return c.Conn }

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}
