package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/ferryhq/ferry/redact"
)

// StorageError is a registry refusing a write because it has no room for
// it: its disk is full, the repository or project is over its quota, or
// the content is larger than it accepts. Trying again cannot help until
// someone frees space or raises the quota, so it is never transient.
//
// The answers recognised, from the registries that send them:
//   - 507 Insufficient Storage (RFC 4918), whatever its body;
//   - 413 Content Too Large, whatever its body;
//   - distribution (registry/handlers/blobupload.go: a failed write of the
//     upload's content is errcode.ErrorCodeUnknown.WithDetail(err), a 500
//     whose detail is the storage driver's error, "write …: no space left
//     on device");
//   - Harbor (src/controller/quota/controller.go reserveResources:
//     errors.DeniedError(...).WithMessage("Quota exceeded when processing
//     the request of …"), a 403 DENIED; Harbor 1.x answered 412);
//   - any other 4xx or 5xx whose body says "quota", "no space left on
//     device", "insufficient storage" or "disk full".
type StorageError struct {
	// Host is the registry host (host:port).
	Host string
	// Method and Path are the refused request (no query, no credentials).
	Method, Path string
	// StatusCode is the registry's status.
	StatusCode int
	// Answer is what the registry said, one line (redacted, shortened).
	Answer string
}

func (e *StorageError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s refused %s %s: %d %s", e.Host, e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Answer != "" {
		fmt.Fprintf(&sb, ": %s", e.Answer)
	}
	if e.StatusCode == http.StatusRequestEntityTooLarge {
		sb.WriteString(" (the registry does not accept content this large; retrying will not help)")
	} else {
		sb.WriteString(" (the registry is out of storage or over its quota; retrying will not help until space is freed or the quota raised)")
	}
	return sb.String()
}

// storageMarkers are the words of a registry answer that say it has no
// room, lowercase.
var storageMarkers = []string{"no space left on device", "quota", "insufficient storage", "disk full", "disk quota exceeded"}

// maxAnswer bounds the body read to recognise a refusal.
const maxAnswer = 64 << 10

// peekBody reads up to maxAnswer bytes of resp's body and puts them back
// in front of the rest, so that the next reader sees the whole body.
func peekBody(resp *http.Response) []byte {
	if resp.Body == nil || resp.Body == http.NoBody {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		// What was read is all there is; the error stays for the reader.
		resp.Body = limitCloser{io.MultiReader(bytes.NewReader(b), errReader{err}), resp.Body}
		return b
	}
	resp.Body = limitCloser{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	return b
}

// outOfStorage reports whether resp refuses a request for want of
// storage (see StorageError), and what the registry said. Only a 4xx or
// 5xx answer other than 401 and 404 is read.
func outOfStorage(resp *http.Response) (answer string, ok bool) {
	code := resp.StatusCode
	if code < 400 || code == http.StatusUnauthorized || code == http.StatusNotFound || code == http.StatusTooManyRequests {
		return "", false
	}
	body := peekBody(resp)
	answer = answerText(body)
	if code == http.StatusInsufficientStorage || code == http.StatusRequestEntityTooLarge {
		return answer, true
	}
	low := strings.ToLower(string(body))
	for _, m := range storageMarkers {
		if strings.Contains(low, m) {
			return answer, true
		}
	}
	return "", false
}

// answerText renders a registry's error body as one short line: the
// messages and details of a distribution-spec error body, else the text.
func answerText(body []byte) string {
	var doc struct {
		Errors []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Detail  any    `json:"detail"`
		} `json:"errors"`
	}
	var parts []string
	if json.Unmarshal(body, &doc) == nil && len(doc.Errors) > 0 {
		for _, e := range doc.Errors {
			p := e.Code
			if e.Message != "" {
				p += ": " + e.Message
			}
			switch d := e.Detail.(type) {
			case nil:
			case string:
				p += ": " + d
			default:
				if b, err := json.Marshal(d); err == nil {
					p += ": " + string(b)
				}
			}
			parts = append(parts, p)
		}
	} else {
		parts = append(parts, strings.TrimSpace(string(body)))
	}
	s := strings.Join(strings.Fields(strings.Join(parts, "; ")), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return redact.String(s)
}

// storageError returns the *StorageError resp is, or nil.
func storageError(req *http.Request, resp *http.Response) *StorageError {
	answer, ok := outOfStorage(resp)
	if !ok {
		return nil
	}
	return &StorageError{Host: req.URL.Host, Method: req.Method, Path: req.URL.EscapedPath(), StatusCode: resp.StatusCode, Answer: answer}
}

// DefaultMaxRetryAfter caps the wait a registry's Retry-After asks for.
const DefaultMaxRetryAfter = 60 * time.Second

// RateLimit is what a registry said about its rate limit in a 429 (or
// 503) answer: Docker Hub's RateLimit-Limit, RateLimit-Remaining and
// Docker-RateLimit-Source headers (docs.docker.com/docker-hub/usage/pulls:
// "ratelimit-limit: 100;w=21600", "ratelimit-remaining: 0;w=21600",
// "docker-ratelimit-source: IP"), and Retry-After (RFC 9110 10.2.3:
// seconds or an HTTP date).
type RateLimit struct {
	// Limit and Remaining are the headers' values as sent ("100;w=21600").
	Limit, Remaining string
	// Source is what the limit is counted against (an address or an
	// account's id).
	Source string
	// RetryAfter is the wait the registry asked for; 0 when it named none.
	RetryAfter time.Duration
}

// rateLimit reads h's rate-limit headers.
func rateLimit(resp *http.Response) RateLimit {
	h := resp.Header
	return RateLimit{
		Limit:      strings.TrimSpace(h.Get("RateLimit-Limit")),
		Remaining:  strings.TrimSpace(h.Get("RateLimit-Remaining")),
		Source:     strings.TrimSpace(h.Get("Docker-RateLimit-Source")),
		RetryAfter: retryAfter(resp),
	}
}

// String renders the rate limit as "limit 100;w=21600, remaining
// 0;w=21600, counted for SOURCE, retry after 30s", leaving out what was
// not sent; "" when nothing was.
func (r RateLimit) String() string {
	var parts []string
	if r.Limit != "" {
		parts = append(parts, "limit "+r.Limit)
	}
	if r.Remaining != "" {
		parts = append(parts, "remaining "+r.Remaining)
	}
	if r.Source != "" {
		parts = append(parts, "counted for "+r.Source)
	}
	if r.RetryAfter > 0 {
		parts = append(parts, "retry after "+r.RetryAfter.Round(time.Second).String())
	}
	return redact.String(strings.Join(parts, ", "))
}

// RateLimitError is a registry still answering 429 Too Many Requests once
// the retries are spent. It is transient (a later run may pass) and names
// the registry's rate-limit headers.
type RateLimitError struct {
	// Host is the registry host (host:port).
	Host string
	// Method and Path are the refused request (no query, no credentials).
	Method, Path string
	// Limit is what the registry said about its limit.
	Limit RateLimit
	// Err is the registry's error response.
	Err error
}

func (e *RateLimitError) Error() string {
	s := fmt.Sprintf("%s: rate limited: %s %s: 429 Too Many Requests", e.Host, e.Method, e.Path)
	if l := e.Limit.String(); l != "" {
		s += " (" + l + ")"
	}
	return s
}

// Unwrap returns the registry's error response.
func (e *RateLimitError) Unwrap() error { return e.Err }

// retryReason renders err for a retry line: the status and what the
// registry said, without URL, query or credentials.
func retryReason(err error) string {
	var se *statusError
	var rl *RateLimitError
	var er *errcode.ErrorResponse
	switch {
	case errors.As(err, &se):
		return se.Error()
	case errors.As(err, &rl):
		s := "429 Too Many Requests"
		if l := rl.Limit.String(); l != "" {
			s += " (" + l + ")"
		}
		return s
	case errors.As(err, &er):
		s := fmt.Sprintf("%d %s", er.StatusCode, http.StatusText(er.StatusCode))
		if len(er.Errors) > 0 && er.Errors[0].Message != "" {
			s += ": " + er.Errors[0].Message
		}
		return redact.String(s)
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return redact.Error(ue.Err).Error()
	}
	return redact.Error(err).Error()
}

// retrySubject names the request a retry repeats: "METHOD HOST/PATH" of
// the registry answer err carries, with what (the operation) after it,
// else what alone.
func retrySubject(what string, err error) string {
	var er *errcode.ErrorResponse
	if errors.As(err, &er) && er.URL != nil && !strings.HasPrefix(what, er.Method+" ") {
		return er.Method + " " + er.URL.Host + er.URL.EscapedPath() + " (" + what + ")"
	}
	var rl *RateLimitError
	if errors.As(err, &rl) && !strings.HasPrefix(what, rl.Method+" ") {
		return rl.Method + " " + rl.Host + rl.Path + " (" + what + ")"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		method := strings.ToUpper(ue.Op)
		if u, perr := url.Parse(ue.URL); perr == nil && !strings.HasPrefix(what, method+" ") {
			return method + " " + u.Host + u.EscapedPath() + " (" + what + ")"
		}
	}
	return what
}
