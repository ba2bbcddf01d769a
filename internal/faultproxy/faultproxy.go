// Package faultproxy injects the faults of a real network path between a
// client and an OCI registry: 500, 502 and 503 answers, 429 with
// Retry-After, connections reset before any response, bodies cut short
// mid-transfer, stalls before a request is forwarded, and 502 answers to
// writes the registry has already carried out (what a proxy in front of a
// registry does when its upstream connection drops after the request was
// sent). Faults are drawn from a seeded generator, so a seed replays the
// same decisions for the same sequence of requests.
//
// It is offered two ways: Start runs a reverse proxy on 127.0.0.1 in front
// of one registry (for tools run as subprocesses, and the benchmark), and
// Injector.Wrap wraps an http.Handler (for registrytest.WithWrap).
package faultproxy

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kind is one kind of fault.
type Kind string

// The kinds of fault. Status500, Status502, Status503, TooManyRequests,
// Reset and Stall apply to every request; ShortBody to GET requests (the
// responses with bodies); AfterWrite to POST, PUT and PATCH requests; the
// refusals (RefusalKinds) to PUT and PATCH requests.
const (
	// Status500 answers 500 Internal Server Error without forwarding.
	Status500 Kind = "500"
	// Status502 answers 502 Bad Gateway without forwarding.
	Status502 Kind = "502"
	// Status503 answers 503 Service Unavailable without forwarding.
	Status503 Kind = "503"
	// TooManyRequests answers 429 with a Retry-After header without
	// forwarding.
	TooManyRequests Kind = "429"
	// Reset closes the connection with a TCP reset before any response,
	// without forwarding.
	Reset Kind = "reset"
	// ShortBody forwards, sends the registry's status and headers and
	// half the body (by Content-Length), then aborts the connection.
	ShortBody Kind = "short-body"
	// Stall waits a drawn time in [StallMin, StallMax] before forwarding.
	Stall Kind = "stall"
	// AfterWrite forwards a write to the registry, which carries it out,
	// then answers 502 Bad Gateway in place of the registry's answer.
	AfterWrite Kind = "502-after-write"
)

// The refusals of a registry with no room, answered to the writes that
// carry content (PUT and PATCH) without forwarding them. They are not
// transient: a client should stop at the first, not retry. They are not in
// AllKinds; RefusalKinds lists them.
const (
	// DiskFull answers 500 with the body distribution sends when its
	// storage driver cannot write (registry/handlers/blobupload.go:
	// errcode.ErrorCodeUnknown.WithDetail(err.Error()) of the failed
	// copy, "… no space left on device").
	DiskFull Kind = "disk-full"
	// Quota answers 403 DENIED with Harbor's quota message
	// (src/controller/quota/controller.go reserveResources: "Quota
	// exceeded when processing the request of …").
	Quota Kind = "quota"
	// InsufficientStorage answers 507 Insufficient Storage (RFC 4918).
	InsufficientStorage Kind = "507"
	// TooLarge answers 413 Content Too Large.
	TooLarge Kind = "413"
)

// AllKinds returns every transient Kind, in a fixed order.
func AllKinds() []Kind {
	return []Kind{Status500, Status502, Status503, TooManyRequests, Reset, ShortBody, Stall, AfterWrite}
}

// RefusalKinds returns the kinds that refuse a write for want of room,
// in a fixed order.
func RefusalKinds() []Kind {
	return []Kind{DiskFull, Quota, InsufficientStorage, TooLarge}
}

// applies reports whether k can be injected into a request of method.
func (k Kind) applies(method string) bool {
	switch k {
	case ShortBody:
		return method == http.MethodGet
	case AfterWrite:
		return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
	case DiskFull, Quota, InsufficientStorage, TooLarge:
		return method == http.MethodPut || method == http.MethodPatch
	}
	return true
}

// The bodies of the refusals.
const (
	// DiskFullBody is distribution's answer to a write its filesystem
	// driver could not make.
	DiskFullBody = `{"errors":[{"code":"UNKNOWN","message":"unknown error","detail":"write /var/lib/registry/docker/registry/v2/repositories/_uploads/data: no space left on device"}]}`
	// QuotaBody is Harbor's answer to a push over a project's quota.
	QuotaBody = `{"errors":[{"code":"DENIED","message":"Quota exceeded when processing the request of adding 1.0 MiB of storage resource, which when updated to current usage of 10.0 MiB will exceed the configured upper limit of 10.0 MiB."}]}`
)

// Docker Hub's rate-limit headers, sent with 429 answers when
// Options.RateLimitHeaders is set (docs.docker.com/docker-hub/usage/pulls).
const (
	RateLimitLimit     = "100;w=21600"
	RateLimitRemaining = "0;w=21600"
	RateLimitSource    = "192.0.2.1"
)

// Default stall range and Retry-After, the figures of the fault benchmark.
const (
	DefaultStallMin   = 1500 * time.Millisecond
	DefaultStallMax   = 3 * time.Second
	DefaultRetryAfter = time.Second
)

// Options configures an Injector.
type Options struct {
	// Seed seeds the fault decisions.
	Seed uint64
	// Rate is the probability, 0 to 1, that a request gets a fault.
	Rate float64
	// Kinds are the faults drawn from, uniformly among those that apply
	// to the request; a kind listed twice is drawn twice as often. Empty
	// is AllKinds.
	Kinds []Kind
	// RetryAfter is the Retry-After of 429 answers, sent in whole seconds
	// rounded up. Zero is DefaultRetryAfter; negative sends "0".
	RetryAfter time.Duration
	// StallMin and StallMax bound a stall. Zero is DefaultStallMin and
	// DefaultStallMax.
	StallMin, StallMax time.Duration
	// RetryAfterDate sends a 429's Retry-After as an HTTP date (RFC 9110
	// 10.2.3) rather than in seconds.
	RetryAfterDate bool
	// RateLimitHeaders sends Docker Hub's rate-limit headers
	// (RateLimit-Limit, RateLimit-Remaining, Docker-RateLimit-Source)
	// with a 429.
	RateLimitHeaders bool
}

// Stats counts what an Injector saw and did.
type Stats struct {
	// Requests is the number of requests seen.
	Requests int `json:"requests"`
	// Faults is the number of faults injected.
	Faults int `json:"faults"`
	// ByKind counts faults by kind.
	ByKind map[Kind]int `json:"byKind"`
	// Abandoned counts stalls the client gave up on (closed the
	// connection or canceled the request) before the stall ended: the
	// stalls that outlasted the client's timeout.
	Abandoned int `json:"abandoned"`
	// BytesIn is the request body bytes read from clients, including
	// bodies of requests that then got a fault.
	BytesIn int64 `json:"bytesIn"`
	// BytesOut is the response body bytes written to clients.
	BytesOut int64 `json:"bytesOut"`
}

// Add returns the sum of s and o.
func (s Stats) Add(o Stats) Stats {
	out := Stats{Requests: s.Requests + o.Requests, Faults: s.Faults + o.Faults, Abandoned: s.Abandoned + o.Abandoned,
		BytesIn: s.BytesIn + o.BytesIn, BytesOut: s.BytesOut + o.BytesOut, ByKind: map[Kind]int{}}
	for k, n := range s.ByKind {
		out.ByKind[k] += n
	}
	for k, n := range o.ByKind {
		out.ByKind[k] += n
	}
	return out
}

// String renders the faults by kind in AllKinds order ("500=2, 502=0, …").
func (s Stats) String() string {
	var parts []string
	for _, k := range AllKinds() {
		parts = append(parts, fmt.Sprintf("%s=%d", k, s.ByKind[k]))
	}
	for _, k := range RefusalKinds() {
		if s.ByKind[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, s.ByKind[k]))
		}
	}
	return fmt.Sprintf("%d faults in %d requests (%s; %d stalls abandoned by the client)", s.Faults, s.Requests, strings.Join(parts, ", "), s.Abandoned)
}

// Injector decides and injects faults. Its methods are safe for
// concurrent use.
type Injector struct {
	opts       Options
	retryAfter string
	rate       atomic.Uint64 // math.Float64bits of the rate

	mu  sync.Mutex
	rng *rand.Rand
	st  Stats
}

// New returns an Injector for opts.
func New(opts Options) *Injector {
	if len(opts.Kinds) == 0 {
		opts.Kinds = AllKinds()
	}
	opts.Kinds = slices.Clone(opts.Kinds)
	if opts.StallMin <= 0 {
		opts.StallMin = DefaultStallMin
	}
	if opts.StallMax <= 0 {
		opts.StallMax = DefaultStallMax
	}
	if opts.StallMax < opts.StallMin {
		opts.StallMax = opts.StallMin
	}
	ra := "0"
	switch {
	case opts.RetryAfter == 0:
		ra = strconv.Itoa(int(DefaultRetryAfter / time.Second))
	case opts.RetryAfter > 0:
		ra = strconv.FormatInt(int64((opts.RetryAfter+time.Second-1)/time.Second), 10)
	}
	if opts.RetryAfter == 0 {
		opts.RetryAfter = DefaultRetryAfter
	}
	in := &Injector{
		opts:       opts,
		retryAfter: ra,
		// PCG keyed by the seed; the second word only separates this
		// stream from other uses of the same seed.
		rng: rand.New(rand.NewPCG(opts.Seed, 0x6661756c7470726f)),
		st:  Stats{ByKind: map[Kind]int{}},
	}
	in.SetRate(opts.Rate)
	return in
}

// SetRate changes the fault rate, for example to 0 for a clean path after
// a faulty run. Decisions are still drawn, so the sequence stays the
// seed's.
func (in *Injector) SetRate(rate float64) {
	in.rate.Store(uint64(rate * 1e9))
}

// Rate returns the current fault rate.
func (in *Injector) Rate() float64 { return float64(in.rate.Load()) / 1e9 }

// Stats returns the counts so far.
func (in *Injector) Stats() Stats {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.st.Add(Stats{})
}

// Take returns the counts so far and starts counting afresh.
func (in *Injector) Take() Stats {
	in.mu.Lock()
	defer in.mu.Unlock()
	st := in.st.Add(Stats{})
	in.st = Stats{ByKind: map[Kind]int{}}
	return st
}

// decision is what happens to one request.
type decision struct {
	kind  Kind // "" for none
	stall time.Duration
}

// decide draws the decision for a request of method. Every request takes
// the same three draws whatever is decided, so a seed's sequence of
// decisions depends only on the sequence of requests.
func (in *Injector) decide(method string) decision {
	rate := in.Rate()
	in.mu.Lock()
	defer in.mu.Unlock()
	u := in.rng.Float64()
	pick := in.rng.Uint64()
	span := in.opts.StallMax - in.opts.StallMin
	stall := in.opts.StallMin + time.Duration(in.rng.Int64N(int64(span)+1))
	in.st.Requests++
	if u >= rate {
		return decision{}
	}
	var apply []Kind
	for _, k := range in.opts.Kinds {
		if k.applies(method) {
			apply = append(apply, k)
		}
	}
	if len(apply) == 0 {
		return decision{}
	}
	k := apply[pick%uint64(len(apply))]
	in.st.Faults++
	in.st.ByKind[k]++
	return decision{kind: k, stall: stall}
}

func (in *Injector) countIn(n int64) {
	in.mu.Lock()
	in.st.BytesIn += n
	in.mu.Unlock()
}

func (in *Injector) countOut(n int64) {
	in.mu.Lock()
	in.st.BytesOut += n
	in.mu.Unlock()
}

// Wrap returns a handler that injects faults in front of next.
func (in *Injector) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := in.decide(r.Method)
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &countingBody{ReadCloser: r.Body, in: in}
		}
		cw := &countingWriter{ResponseWriter: w, in: in}
		switch d.kind {
		case "":
			next.ServeHTTP(cw, r)
		case Status500, Status502, Status503:
			code, _ := strconv.Atoi(string(d.kind))
			fail(cw, code, "injected fault: "+http.StatusText(code))
		case TooManyRequests:
			ra := in.retryAfter
			if in.opts.RetryAfterDate {
				// An HTTP date has whole seconds: one more than asked,
				// so that the wait is never shorter.
				ra = time.Now().Add(max(in.opts.RetryAfter, 0) + time.Second).UTC().Format(http.TimeFormat)
			}
			cw.Header().Set("Retry-After", ra)
			if in.opts.RateLimitHeaders {
				cw.Header().Set("RateLimit-Limit", RateLimitLimit)
				cw.Header().Set("RateLimit-Remaining", RateLimitRemaining)
				cw.Header().Set("Docker-RateLimit-Source", RateLimitSource)
			}
			cw.Header().Set("Content-Type", "application/json")
			cw.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(cw, `{"errors":[{"code":"TOOMANYREQUESTS","message":"injected fault: too many requests"}]}`+"\n")
		case Reset:
			ResetConn(w)
		case Stall:
			t := time.NewTimer(d.stall)
			defer t.Stop()
			select {
			case <-t.C:
				next.ServeHTTP(cw, r)
			case <-r.Context().Done():
				// The client gave up: nothing to answer.
				in.mu.Lock()
				in.st.Abandoned++
				in.mu.Unlock()
			}
		case ShortBody:
			sw := &shortWriter{countingWriter: cw}
			next.ServeHTTP(sw, r)
			sw.Flush()
			// Whether the body was longer than the cut or not, the
			// connection is aborted: the client never sees its end.
			panic(http.ErrAbortHandler)
		case AfterWrite:
			next.ServeHTTP(&discardWriter{h: http.Header{}}, r)
			fail(cw, http.StatusBadGateway, "injected fault: the upstream answer was lost")
		case DiskFull:
			refuse(cw, r, http.StatusInternalServerError, DiskFullBody)
		case Quota:
			refuse(cw, r, http.StatusForbidden, QuotaBody)
		case InsufficientStorage:
			refuse(cw, r, http.StatusInsufficientStorage, "")
		case TooLarge:
			refuse(cw, r, http.StatusRequestEntityTooLarge, "")
		}
	})
}

// refuse drains the request's content, as a registry that reads it and
// fails to store it does, and answers code with body (JSON), or with the
// status text when body is empty.
func refuse(w http.ResponseWriter, r *http.Request, code int, body string) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
	}
	if body == "" {
		fail(w, code, http.StatusText(code))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body+"\n")
}

func fail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}

// ResetConn closes the client's connection with a TCP reset (SO_LINGER
// 0), or, when the connection cannot be taken over, aborts the handler,
// which closes it. It finds the TCP connection under wrapping ones
// (tcpConn), such as a test registry's.
func ResetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := tcpConn(conn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// tcpConn returns the TCP connection under c, unwrapping connections that
// wrap another and say so with NetConn (as crypto/tls's Conn does).
func tcpConn(c net.Conn) (*net.TCPConn, bool) {
	for {
		switch v := c.(type) {
		case *net.TCPConn:
			return v, true
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil, false
		}
	}
}

type countingBody struct {
	io.ReadCloser
	in *Injector
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.in.countIn(int64(n))
	return n, err
}

type countingWriter struct {
	http.ResponseWriter
	in *Injector
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.in.countOut(int64(n))
	return n, err
}

// Flush lets a reverse proxy stream responses.
func (c *countingWriter) Flush() { _ = http.NewResponseController(c.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the underlying writer.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// errCut is what a shortWriter returns once the cut is reached.
var errCut = errors.New("faultproxy: body cut short")

// shortWriter passes the status, the headers and half the body (by
// Content-Length; 512 bytes when it is unknown), flushes, and refuses the
// rest.
type shortWriter struct {
	*countingWriter
	limit   int64
	written int64
	header  bool
}

func (s *shortWriter) WriteHeader(code int) {
	if s.header {
		return
	}
	s.header = true
	s.limit = 512
	if cl, err := strconv.ParseInt(s.Header().Get("Content-Length"), 10, 64); err == nil {
		s.limit = cl / 2
	}
	s.countingWriter.WriteHeader(code)
	if s.limit == 0 {
		s.Flush()
	}
}

func (s *shortWriter) Write(p []byte) (int, error) {
	if !s.header {
		s.WriteHeader(http.StatusOK)
	}
	room := s.limit - s.written
	if room <= 0 {
		return 0, errCut
	}
	cut := int64(len(p)) > room
	if cut {
		p = p[:room]
	}
	n, err := s.countingWriter.Write(p)
	s.written += int64(n)
	if err != nil {
		return n, err
	}
	if cut {
		s.Flush()
		return n, errCut
	}
	return n, nil
}

// discardWriter takes the registry's answer to a write and drops it.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) Flush()                      {}
