package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"oras.land/oras-go/v2/registry/remote/errcode"
)

// RetryPolicy bounds how a failed operation is tried again: at most
// Attempts tries in all, within MaxTime from the first, waiting Backoff
// before the second try and doubling (with jitter) up to MaxBackoff
// before each later one. The zero value is DefaultRetryPolicy.
type RetryPolicy struct {
	// Attempts is the number of tries, the first included (default 6).
	Attempts int
	// MaxTime bounds the time from the first try to the start of the last
	// (default 2m).
	MaxTime time.Duration
	// Backoff is the wait before the second try (default 200ms).
	Backoff time.Duration
	// MaxBackoff caps one wait of the backoff (default 10s).
	MaxBackoff time.Duration
	// MaxRetryAfter caps the wait a registry's Retry-After asks for
	// (default DefaultMaxRetryAfter, 60s).
	MaxRetryAfter time.Duration
	// Log, when set, gets one info line per retry: "retrying METHOD
	// HOST/PATH (2 of 6): STATUS", without query or credentials.
	Log *slog.Logger
}

// DefaultRetryPolicy is what a zero RetryPolicy means.
var DefaultRetryPolicy = RetryPolicy{Attempts: 6, MaxTime: 2 * time.Minute, Backoff: 200 * time.Millisecond, MaxBackoff: 10 * time.Second,
	MaxRetryAfter: DefaultMaxRetryAfter}

// withDefaults fills zero fields from DefaultRetryPolicy.
func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy
	if p.Attempts <= 0 {
		p.Attempts = d.Attempts
	}
	if p.MaxTime <= 0 {
		p.MaxTime = d.MaxTime
	}
	if p.Backoff <= 0 {
		p.Backoff = d.Backoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = d.MaxBackoff
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = d.MaxRetryAfter
	}
	return p
}

// Wait returns how long to wait before try number attempt+1 (attempt
// counts from 0 for the first retry): Backoff doubled per attempt, plus up
// to half again of jitter, capped at MaxBackoff. A positive retryAfter (a
// registry's Retry-After) replaces it, capped at MaxRetryAfter.
func (p RetryPolicy) Wait(attempt int, retryAfter time.Duration) time.Duration {
	p = p.withDefaults()
	if retryAfter > 0 {
		return min(retryAfter, p.MaxRetryAfter)
	}
	w := p.Backoff << min(attempt, 20)
	w += time.Duration(rand.Int64N(int64(w)/2 + 1))
	return min(w, p.MaxBackoff)
}

// Do calls op until it succeeds, returns an error IsTransient refuses, or
// the policy is spent; what names the operation in retry lines. A
// *RateLimitError's Retry-After is honoured. The last error is returned.
func (p RetryPolicy) Do(ctx context.Context, what string, op func() error) error {
	return p.retry(ctx, what, func() (time.Duration, error) { return 0, op() })
}

// retry is the one retry loop of package client, shared by Do, the HTTP
// transport and resumed downloads. op returns its error and how long the
// other side asked to wait (a Retry-After; 0 for no hint).
func (p RetryPolicy) retry(ctx context.Context, what string, op func() (time.Duration, error)) error {
	p = p.withDefaults()
	start := time.Now()
	for attempt := 0; ; attempt++ {
		after, err := op()
		if err == nil || !IsTransient(err) || attempt+1 >= p.Attempts {
			return err
		}
		var rl *RateLimitError
		if after <= 0 && errors.As(err, &rl) {
			after = rl.Limit.RetryAfter
		}
		wait := p.Wait(attempt, after)
		if time.Since(start)+wait > p.MaxTime {
			return err
		}
		if p.Log != nil {
			// One line a user sees at the default level: what is sent
			// again, which try it is and why, never a query (an upload's
			// _state), a header or a credential.
			p.Log.Info(fmt.Sprintf("retrying %s (%d of %d): %s", retrySubject(what, err), attempt+2, p.Attempts, retryReason(err)),
				"wait", wait.Round(time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// IsTransient reports whether err may go away if the operation is tried
// again: a connection reset or refused mid-run, a broken pipe, a body cut
// short, a timeout, or a registry answer with status 408, 429 or 5xx
// (but 501 and 507). Certificate problems, refused credentials, a
// registry out of room (*StorageError), cancellation and every other
// registry answer are permanent.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	// An idle body is given up on by canceling its request: the timeout,
	// not the cancellation, is what happened.
	var to *TimeoutError
	if errors.As(err, &to) {
		return true
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, errUploadChallenged) {
		return true
	}
	var te *TLSError
	if errors.As(err, &te) {
		return false
	}
	var ae *AuthError
	if errors.As(err, &ae) {
		return false
	}
	var se0 *StorageError
	if errors.As(err, &se0) {
		return false
	}
	var er *errcode.ErrorResponse
	if errors.As(err, &er) {
		return transientStatus(er.StatusCode)
	}
	var se *statusError
	if errors.As(err, &se) {
		return transientStatus(se.code)
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	// net/http reports these with unexported error values (transport.go:
	// errServerClosedIdle, "transport connection broken"; h2_bundle.go:
	// errClientConnLost, GoAwayError, StreamError): match their text.
	msg := err.Error()
	for _, s := range transientMessages {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// transientMessages are net/http error texts for connections lost mid-run.
var transientMessages = []string{
	"http: server closed idle connection",
	"transport connection broken",
	"http2: client connection lost",
	"http2: server sent GOAWAY",
	"http2: client connection force closed",
	"stream error: stream ID",
}

// transientStatus reports whether an HTTP status may go away with time:
// 408, 429 and 5xx.
// 501 Not Implemented says the server does not do what was asked (a web
// server that is no registry answers it), and 507 Insufficient Storage
// that it has no room: asking again cannot help.
func transientStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests ||
		(code >= 500 && code != http.StatusNotImplemented && code != http.StatusInsufficientStorage)
}

// statusError is a response the transport retried for its status; it
// never leaves package client (the last response is returned as is).
type statusError struct {
	code int
	// limit is what a 429 or 503 said of the registry's rate limit.
	limit RateLimit
}

func (e *statusError) Error() string {
	s := fmt.Sprintf("%d %s", e.code, http.StatusText(e.code))
	if l := e.limit.String(); l != "" {
		s += " (" + l + ")"
	}
	return s
}
