package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Default timeouts (see Options).
const (
	// DefaultConnectTimeout bounds dialing and, separately, the TLS
	// handshake.
	DefaultConnectTimeout = 30 * time.Second
	// DefaultReadTimeout bounds the wait for response headers and for
	// any byte of a response body.
	DefaultReadTimeout = 60 * time.Second
)

// TimeoutError is a registry that did not answer in time: no connection,
// no TLS handshake, no response headers, or no byte of a body for the
// configured time. It is transient (IsTransient): retries and resumed
// downloads try again.
type TimeoutError struct {
	// Host is the registry (or redirect target) host:port.
	Host string
	// Waiting says what did not arrive ("connection", "TLS handshake",
	// "response headers", "response body").
	Waiting string
	// Method and Path are the request (no query).
	Method, Path string
	// After is the timeout that expired, when known.
	After time.Duration
	// Err is the underlying error.
	Err error
}

func (e *TimeoutError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: timeout: no %s", e.Host, e.Waiting)
	if e.After > 0 {
		fmt.Fprintf(&sb, " within %s", e.After)
	}
	fmt.Fprintf(&sb, " (%s %s)", e.Method, e.Path)
	return sb.String()
}

// Unwrap returns the underlying error.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Timeout reports true: a TimeoutError is a net.Error that timed out.
func (e *TimeoutError) Timeout() bool { return true }

// Temporary reports true, for net.Error.
func (e *TimeoutError) Temporary() bool { return true }

// timeouts are the limits timeoutTransport and its base transport apply.
type timeouts struct {
	dial, tls, header, idle time.Duration
}

// apply sets the dial, TLS handshake and response header timeouts on base.
func (to timeouts) apply(base *http.Transport) {
	d := &net.Dialer{KeepAlive: 30 * time.Second}
	if to.dial > 0 {
		d.Timeout = to.dial
	}
	base.DialContext = d.DialContext
	base.TLSHandshakeTimeout = max(to.tls, 0)
	base.ResponseHeaderTimeout = max(to.header, 0)
}

// timeoutTransport names the host and what was awaited in timeout errors,
// and fails a response body when no byte of it arrives for idle while the
// reader waits (the time the reader spends elsewhere does not count).
type timeoutTransport struct {
	next http.RoundTripper
	to   timeouts
}

func (t *timeoutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, t.explain(req, err)
	}
	if t.to.idle <= 0 || resp.Body == nil || resp.Body == http.NoBody {
		// The context lives as long as the body: canceling it would break it.
		resp.Body = &cancelBody{ReadCloser: orNoBody(resp.Body), cancel: cancel}
		return resp, nil
	}
	resp.Body = &idleBody{rc: resp.Body, cancel: cancel, idle: t.to.idle, req: req}
	return resp, nil
}

func orNoBody(rc io.ReadCloser) io.ReadCloser {
	if rc == nil {
		return http.NoBody
	}
	return rc
}

// explain turns a timeout from net/http into a *TimeoutError.
func (t *timeoutTransport) explain(req *http.Request, err error) error {
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || req.Context().Err() != nil {
		return err
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		return err
	}
	e := &TimeoutError{Host: req.URL.Host, Method: req.Method, Path: req.URL.EscapedPath(), Err: err}
	var oe *net.OpError
	msg := err.Error()
	switch {
	case errors.As(err, &oe) && oe.Op == "dial":
		e.Waiting, e.After = "connection", t.to.dial
	case strings.Contains(msg, "TLS handshake"):
		e.Waiting, e.After = "TLS handshake", t.to.tls
	case strings.Contains(msg, "response headers"):
		e.Waiting, e.After = "response headers", t.to.header
	default:
		e.Waiting = "answer"
	}
	return e
}

// cancelBody cancels its request's context when closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// idleBody fails a Read that waits longer than idle for a byte, by
// canceling the request's context.
type idleBody struct {
	rc       io.ReadCloser
	cancel   context.CancelFunc
	idle     time.Duration
	req      *http.Request
	once     sync.Once
	timer    *time.Timer
	timedOut atomic.Bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.once.Do(func() {
		b.timer = time.AfterFunc(b.idle, func() {
			b.timedOut.Store(true)
			b.cancel()
		})
	})
	if b.timer == nil {
		return 0, errors.New("read of a closed response body")
	}
	if b.timedOut.Load() {
		return 0, b.timeout(nil)
	}
	b.timer.Reset(b.idle)
	n, err := b.rc.Read(p)
	b.timer.Stop()
	if err != nil && !errors.Is(err, io.EOF) && b.timedOut.Load() {
		return n, b.timeout(err)
	}
	return n, err
}

func (b *idleBody) timeout(err error) error {
	return &TimeoutError{Host: b.req.URL.Host, Waiting: "data", Method: b.req.Method, Path: b.req.URL.EscapedPath(),
		After: b.idle, Err: err}
}

func (b *idleBody) Close() error {
	b.once.Do(func() {})
	if b.timer != nil {
		b.timer.Stop()
	}
	err := b.rc.Close()
	b.cancel()
	return err
}
