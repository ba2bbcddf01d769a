package client

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// retryTransport retries idempotent requests (GET, HEAD) on 5xx, 429 and
// broken connections, with exponential backoff and jitter. A 429's
// Retry-After is honoured up to 10 seconds.
type retryTransport struct {
	next    http.RoundTripper
	max     int
	backoff time.Duration
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return t.next.RoundTrip(req)
	}
	for attempt := 0; ; attempt++ {
		resp, err := t.next.RoundTrip(req)
		if attempt >= t.max || !retryable(resp, err) {
			return resp, err
		}
		wait := t.backoff << attempt
		wait += time.Duration(rand.Int64N(int64(wait)/2 + 1))
		if resp != nil {
			if s := resp.Header.Get("Retry-After"); s != "" {
				if secs, perr := strconv.Atoi(s); perr == nil && secs >= 0 && secs <= 10 {
					wait = time.Duration(secs) * time.Second
				}
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		timer := time.NewTimer(wait)
		select {
		case <-req.Context().Done():
			timer.Stop()
			return nil, req.Context().Err()
		case <-timer.C:
		}
	}
}

// retryable reports whether a response or error is worth another try.
func retryable(resp *http.Response, err error) bool {
	if err != nil {
		// Certificate problems do not go away by themselves.
		var te *TLSError
		if errors.As(err, &te) {
			return false
		}
		if errors.Is(err, syscall.ECONNRESET) ||
			errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) {
			return true
		}
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout()
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
}
