//go:build unix

package registrytest

import (
	"fmt"
	"io"
	"net/netip"
	"syscall"
)

// holdPort binds a TCP socket to host ("127.0.0.1:PORT") without listening
// and without SO_REUSEADDR: connections to the port are refused, and no
// other socket can bind it, until the returned Closer is closed.
func holdPort(host string) (io.Closer, error) {
	ap, err := netip.ParseAddrPort(host)
	if err != nil || !ap.Addr().Is4() {
		return nil, fmt.Errorf("holding %s: want an IPv4 address and port", host)
	}
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("holding %s: %w", host, err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("holding %s: %w", host, err)
	}
	return heldPort(fd), nil
}

// heldPort is the socket holding a port.
type heldPort int

func (h heldPort) Close() error { return syscall.Close(int(h)) }
