//go:build unix

package registrytest

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"syscall"
)

// holdPort binds a TCP socket to host ("127.0.0.1:PORT") without
// listening: connections to the port are refused until the returned Closer
// is closed. Bound without SO_REUSEADDR, no other socket can bind the
// port. When that fails because connections the server closed first are
// in TIME_WAIT on the port, it is bound with SO_REUSEADDR: Linux then
// still never gives the port to a bind to port 0 (inet_csk_find_open_port
// checks conflicts unrelaxed), which is how every test registry listens;
// only a bind naming the port with SO_REUSEADDR could share it.
func holdPort(host string) (io.Closer, error) {
	ap, err := netip.ParseAddrPort(host)
	if err != nil || !ap.Addr().Is4() {
		return nil, fmt.Errorf("holding %s: want an IPv4 address and port", host)
	}
	h, err := bindOnly(ap, false)
	if errors.Is(err, syscall.EADDRINUSE) {
		h, err = bindOnly(ap, true)
	}
	if err != nil {
		return nil, fmt.Errorf("holding %s: %w", host, err)
	}
	return h, nil
}

// bindOnly binds a TCP socket to ap and does not listen.
func bindOnly(ap netip.AddrPort, reuse bool) (heldPort, error) {
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, err
	}
	if reuse {
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
			_ = syscall.Close(fd)
			return -1, err
		}
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	return heldPort(fd), nil
}

// heldPort is the socket holding a port.
type heldPort int

func (h heldPort) Close() error { return syscall.Close(int(h)) }
