package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/lazyregexp"
	"github.com/ferryhq/ferry/redact"
)

// retryTransport sends every request that can safely be sent again once
// more when it fails transiently (IsTransient: a connection lost, a
// timeout, a 408, 429 or 5xx answer), following its RetryPolicy: bounded
// tries and total time, exponential backoff with jitter, a registry's
// Retry-After honoured up to MaxBackoff, one debug line per retry.
//
// A request can be sent again when it has no body or a body it can
// rewind (req.GetBody; oras-go builds manifest PUTs from a bytes.Reader
// and authClient buffers small bodies): GET, HEAD, manifest PUT, the POST
// that starts an upload or mounts a blob, token requests. Blob upload
// PATCH and PUT to an upload session are never replayed here: if the
// registry committed the blob but its answer was lost, replaying the PUT
// gets 404 BLOB_UPLOAD_UNKNOWN, a permanent error that would stop the copy
// layer from retrying the whole push (which it does on the transient error
// this transport returns instead).
//
// A blob GET whose body breaks mid-way is resumed with a Range request
// (resumeBody).
type retryTransport struct {
	next   http.RoundTripper
	policy RetryPolicy
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !replayable(req) {
		return t.next.RoundTrip(req)
	}
	ctx := req.Context()
	var (
		resp *http.Response
		sent int
	)
	err := t.policy.retry(ctx, req.Method+" "+req.URL.Host+req.URL.EscapedPath(), func() (time.Duration, error) {
		if resp != nil {
			discard(resp)
			resp = nil
		}
		r := req
		if sent > 0 && req.Body != nil && req.Body != http.NoBody {
			body, err := req.GetBody()
			if err != nil {
				return 0, fmt.Errorf("%s %s: rewinding the request body: %w", req.Method, logURL(req), err)
			}
			r = req.Clone(ctx)
			r.Body = body
		}
		sent++
		rs, err := t.next.RoundTrip(r)
		if err != nil {
			return 0, err
		}
		resp = rs
		if transientStatus(rs.StatusCode) {
			if _, full := outOfStorage(rs); full {
				// A full disk answers 500: not transient. The answer
				// goes up as it is; authClient makes it a
				// *StorageError.
				return 0, nil
			}
			return retryAfter(rs), &statusError{code: rs.StatusCode, limit: rateLimit(rs)}
		}
		if err := buffer(req, rs); err != nil {
			resp = nil
			return 0, err
		}
		return 0, nil
	})
	var se *statusError
	if resp != nil && (err == nil || errors.As(err, &se) && ctx.Err() == nil) {
		// Success, or the last answer of a registry that kept failing:
		// oras-go reads the error from its body.
		return t.resumable(req, resp), nil
	}
	if resp != nil {
		discard(resp)
	}
	return nil, err
}

// maxBuffered bounds the body of a metadata response read whole inside
// the retry loop: oras-go's own cap on manifests and tag-list pages
// (registry/remote/repository.go, defaultMaxMetadataBytes).
const maxBuffered = 4 << 20

// buffer reads the body of a successful metadata GET (a manifest, a tag
// list, referrers, a token: anything but a blob) whole, so that an answer
// cut short mid-body is a transient error of this try, sent again by the
// retry loop, rather than a broken read its consumer cannot repeat. A body
// longer than maxBuffered is left to stream. On error the response is
// closed.
func buffer(req *http.Request, resp *http.Response) error {
	if req.Method != http.MethodGet || isBlobGet(req) || resp.StatusCode/100 != 2 ||
		resp.Body == nil || resp.Body == http.NoBody || resp.ContentLength > maxBuffered {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBuffered+1))
	if err == nil && resp.ContentLength >= 0 && int64(len(b)) < resp.ContentLength {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		_ = resp.Body.Close()
		return fmt.Errorf("%s %s: reading the answer: %w", req.Method, logURL(req), err)
	}
	if len(b) > maxBuffered {
		resp.Body = limitCloser{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
		return nil
	}
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return nil
}

// replayable reports whether req may be sent again by the transport.
func replayable(req *http.Request) bool {
	if (req.Method == http.MethodPut || req.Method == http.MethodPatch) && strings.Contains(req.URL.Path, "/blobs/uploads/") {
		return false
	}
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// retryAfter returns the wait a response's Retry-After asks for (seconds
// or an HTTP date), or 0.
func retryAfter(resp *http.Response) time.Duration {
	s := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if s == "" {
		return 0
	}
	if secs, err := strconv.Atoi(s); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, 24*3600)) * time.Second
	}
	if at, err := http.ParseTime(s); err == nil {
		return max(time.Until(at), 0)
	}
	return 0
}

// discard drains (up to 64 KiB, so that the connection can be reused) and
// closes the body of a response nobody will read.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// logURL is req's URL without userinfo or query, for logs and errors.
func logURL(req *http.Request) string {
	return req.URL.Scheme + "://" + req.URL.Host + req.URL.EscapedPath()
}

// blobPathRE matches the path of a blob GET in the distribution API.
var blobPathRE = lazyregexp.New(`^/v2/.+/blobs/[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$`)

// isBlobGet reports whether req fetches a blob: a GET of
// /v2/NAME/blobs/DIGEST, or a redirect that such a GET led to.
func isBlobGet(req *http.Request) bool {
	if req.Method != http.MethodGet {
		return false
	}
	for r := req; r != nil; {
		if strings.Contains(r.URL.Path, "/blobs/") && blobPathRE.MatchString(r.URL.Path) {
			return true
		}
		if r.Response == nil {
			return false
		}
		r = r.Response.Request
	}
	return false
}

// byteRangeRE matches the Range header forms oras-go sends.
var byteRangeRE = lazyregexp.New(`^bytes=(\d+)-(\d*)$`)

// resumable wraps the body of a successful blob GET so that a transient
// failure mid-way is resumed with a Range request.
func (t *retryTransport) resumable(req *http.Request, resp *http.Response) *http.Response {
	if !isBlobGet(req) || resp.Uncompressed || resp.Body == nil || resp.Body == http.NoBody {
		return resp
	}
	start, end := int64(0), int64(-1)
	if h := req.Header.Get("Range"); h != "" {
		m := byteRangeRE.FindStringSubmatch(h)
		if m == nil || resp.StatusCode != http.StatusPartialContent {
			return resp
		}
		start, _ = strconv.ParseInt(m[1], 10, 64)
		if m[2] != "" {
			end, _ = strconv.ParseInt(m[2], 10, 64)
		}
	} else if resp.StatusCode != http.StatusOK {
		return resp
	}
	resp.Body = &resumeBody{t: t, req: req, body: resp.Body, start: start, end: end, want: resp.ContentLength}
	return resp
}

// resumeBody is a blob body that, when the connection breaks or stalls
// mid-way (IsTransient), asks for the rest with "Range: bytes=N-" and
// carries on from byte N. Blobs are content addressed, so no If-Range is
// needed; a registry that answers 200 instead of 206 is read from the
// start and its first N bytes skipped. Resumes are bounded by the
// transport's RetryPolicy: at most Attempts-1 requests per body. The
// reader's consumer (oras-go, or the destination registry) verifies the
// digest at the end.
type resumeBody struct {
	t      *retryTransport
	req    *http.Request
	body   io.ReadCloser
	start  int64 // blob offset of the first byte of the first body
	end    int64 // last blob offset asked for, or -1 for the end
	want   int64 // bytes the current body should deliver, or -1
	got    int64 // bytes the current body delivered
	n      int64 // bytes delivered to the reader
	sent   int   // resume requests sent
	broken error // a transient error not acted on yet
	failed error // the error every later Read returns
	done   bool
}

func (b *resumeBody) Read(p []byte) (int, error) {
	if b.failed != nil {
		return 0, b.failed
	}
	if b.done {
		return 0, io.EOF
	}
	if b.broken != nil {
		if err := b.resume(); err != nil {
			return 0, err
		}
	}
	n, err := b.body.Read(p)
	b.n += int64(n)
	b.got += int64(n)
	if errors.Is(err, io.EOF) && b.want >= 0 && b.got < b.want {
		err = io.ErrUnexpectedEOF
	}
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		b.done = true
	case IsTransient(err) && b.req.Context().Err() == nil && b.sent+1 < b.t.policy.withDefaults().Attempts:
		b.broken = err
		if n > 0 {
			return n, nil
		}
		if err := b.resume(); err != nil {
			return 0, err
		}
		return b.Read(p)
	}
	return n, err
}

// resume replaces the broken body with one starting at the next byte.
func (b *resumeBody) resume() error {
	cause := b.broken
	_ = b.body.Close()
	p := b.t.policy.withDefaults()
	p.Attempts -= b.sent + 1 // what is left of this body's retries
	off := b.start + b.n
	rng := fmt.Sprintf("bytes=%d-", off)
	if b.end >= 0 {
		rng += strconv.FormatInt(b.end, 10)
	}
	what := b.req.Method + " " + b.req.URL.Host + b.req.URL.EscapedPath() + " from byte " + strconv.FormatInt(b.n, 10)
	if p.Log != nil {
		p.Log.Debug("resuming", "op", what, "error", redact.Error(cause).Error())
	}
	var (
		body io.ReadCloser
		want int64
	)
	err := p.retry(b.req.Context(), what, func() (time.Duration, error) {
		b.sent++
		r := b.req.Clone(b.req.Context())
		r.Header.Set("Range", rng)
		resp, err := b.t.next.RoundTrip(r)
		if err != nil {
			return 0, err
		}
		switch {
		case resp.StatusCode == http.StatusPartialContent:
			if cr := resp.Header.Get("Content-Range"); !strings.HasPrefix(cr, fmt.Sprintf("bytes %d-", off)) {
				discard(resp)
				return 0, fmt.Errorf("%s: asked for %s, got Content-Range %q", logURL(b.req), rng, cr)
			}
			body, want = resp.Body, resp.ContentLength
		case resp.StatusCode == http.StatusOK:
			// The registry ignored Range: skip what was delivered.
			if _, err := io.CopyN(io.Discard, resp.Body, off); err != nil {
				_ = resp.Body.Close()
				return 0, err
			}
			body, want = resp.Body, resp.ContentLength
			if want >= 0 {
				want -= off
			}
			if b.end >= 0 {
				body = limitCloser{io.LimitReader(resp.Body, b.end-off+1), resp.Body}
				want = b.end - off + 1
			}
		default:
			discard(resp)
			return retryAfter(resp), &statusError{code: resp.StatusCode, limit: rateLimit(resp)}
		}
		return 0, nil
	})
	if err != nil {
		b.body = io.NopCloser(strings.NewReader(""))
		b.failed = fmt.Errorf("%s: download broke at byte %d (%w) and could not be resumed: %w", logURL(b.req), b.n, cause, err)
		return b.failed
	}
	b.body, b.want, b.got, b.broken = body, want, 0, nil
	return nil
}

func (b *resumeBody) Close() error { return b.body.Close() }

// limitCloser reads at most a limit from a body and closes the body.
type limitCloser struct {
	io.Reader
	io.Closer
}
