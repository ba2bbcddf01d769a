package client

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/ferryhq/ferry/redact"
)

// TLSError is a certificate problem talking to Host. Retrying does not help,
// and the message says so.
type TLSError struct {
	// Host is the registry host (host:port).
	Host string
	// Reason says in plain words what is wrong with the certificate.
	Reason string
	// Err is the underlying crypto/tls or crypto/x509 error.
	Err error
	// UnknownAuthority is a certificate signed by a CA this machine does
	// not trust: the remedy is to trust that CA (a CLI names its option).
	UnknownAuthority bool
}

func (e *TLSError) Error() string {
	return fmt.Sprintf("TLS connection to %s failed: %s; retrying will not help", e.Host, e.Reason)
}

// Unwrap returns the underlying TLS or x509 error.
func (e *TLSError) Unwrap() error { return e.Err }

// tlsError turns a certificate verification error into a *TLSError, or
// returns nil when err is not one.
func tlsError(host string, err error) *TLSError {
	var te *TLSError
	if errors.As(err, &te) {
		return nil // already explained
	}
	var (
		ua  x509.UnknownAuthorityError
		he  x509.HostnameError
		ci  x509.CertificateInvalidError
		cve *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &ua):
		return &TLSError{Host: host, Err: err, UnknownAuthority: true, Reason: "its certificate is signed by an unknown authority " +
			"(self-signed, or issued by a private CA this machine does not trust)"}
	case errors.As(err, &he):
		return &TLSError{Host: host, Err: err, Reason: "its certificate is for a different host: " + certNames(he.Certificate) +
			", not " + he.Host}
	case errors.As(err, &ci):
		if ci.Reason == x509.Expired && ci.Cert != nil {
			now := time.Now()
			if now.Before(ci.Cert.NotBefore) {
				return &TLSError{Host: host, Err: err, Reason: "its certificate is not valid yet (valid from " +
					ci.Cert.NotBefore.UTC().Format(time.RFC3339) + "); check this machine's clock"}
			}
			return &TLSError{Host: host, Err: err, Reason: "its certificate expired on " +
				ci.Cert.NotAfter.UTC().Format(time.RFC3339)}
		}
		return &TLSError{Host: host, Err: err, Reason: "its certificate is invalid: " + ci.Error()}
	case errors.As(err, &cve):
		return &TLSError{Host: host, Err: err, Reason: "its certificate could not be verified: " + cve.Err.Error()}
	}
	return nil
}

func certNames(c *x509.Certificate) string {
	if c == nil {
		return "unknown names"
	}
	var names []string
	names = append(names, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 && c.Subject.CommonName != "" {
		names = append(names, c.Subject.CommonName)
	}
	return "valid for " + strings.Join(names, ", ")
}

// AuthError is a registry refusing a request for lack of valid credentials
// (401) or permission (403). Its message names the host and contains
// "unauthorized".
type AuthError struct {
	// Host is the registry host (host:port).
	Host string
	// Method and Path are the refused request (no query, no credentials).
	Method, Path string
	// StatusCode is 401 or 403.
	StatusCode int
	// Err is the registry's error response, when it sent one.
	Err error
	// ConfigPath is the docker config.json credentials were read from.
	ConfigPath string
}

func (e *AuthError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: unauthorized: %s %s: %d %s", e.Host, e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode))
	var er *errcode.ErrorResponse
	if errors.As(e.Err, &er) && len(er.Errors) > 0 {
		msgs := make([]string, 0, len(er.Errors))
		for _, x := range er.Errors {
			m := strings.ToLower(strings.ReplaceAll(x.Code, "_", " "))
			if x.Message != "" {
				m += ": " + x.Message
			}
			msgs = append(msgs, m)
		}
		fmt.Fprintf(&sb, " (%s)", redact.String(strings.Join(msgs, "; ")))
	}
	if errors.Is(e.Err, auth.ErrBasicCredentialNotFound) {
		fmt.Fprintf(&sb, " (no credentials for %s)", e.Host)
	}
	if e.StatusCode == http.StatusForbidden {
		fmt.Fprintf(&sb, "; the credentials for %s do not allow this", e.Host)
	} else {
		fmt.Fprintf(&sb, "; check the credentials for %s (ferry login %s", e.Host, e.Host)
		if e.ConfigPath != "" {
			fmt.Fprintf(&sb, ", or another docker config; now %s", e.ConfigPath)
		}
		sb.WriteString(")")
	}
	return sb.String()
}

// Unwrap returns the registry's error response.
func (e *AuthError) Unwrap() error { return e.Err }

// maxManifestBuffer bounds the request bodies authClient buffers so that an
// auth challenge can be answered by sending them again.
const maxManifestBuffer = 4 << 20

// errUploadChallenged is a blob upload's content (PUT or PATCH), a
// streamed body, asked for again: by an auth challenge, or by net/http
// after a kept-alive connection broke before the request went out
// (transport.go rewindBody). It is transient (IsTransient): the push
// starts over with a new upload session.
var errUploadChallenged = errors.New("an upload's content cannot be sent again (the registry asked for credentials again, or the connection broke); the upload starts over")

// uploadChallenged is a streamed upload's http.Request.GetBody: it cannot
// give the body again.
func uploadChallenged() (io.ReadCloser, error) { return nil, errUploadChallenged }

// isUploadBody reports whether req sends a blob's content into an upload
// session: PUT or PATCH /v2/NAME/blobs/uploads/ID.
func isUploadBody(req *http.Request) bool {
	return (req.Method == http.MethodPut || req.Method == http.MethodPatch) && strings.Contains(req.URL.Path, "/blobs/uploads/") &&
		req.Body != nil && req.Body != http.NoBody
}

// authClient wraps oras-go's auth.Client: a final 401 or 403 becomes an
// *AuthError, and no error message carries credentials.
type authClient struct {
	c          *auth.Client
	configPath string
	log        *slog.Logger
	// mounts remembers which registries refuse cross-repository mounts
	// (mountOrUpload); shared by every repository of one Client.
	mounts *mountGate
	// mono remembers which registries complete single-request blob
	// uploads (monolithic.go); shared like mounts.
	mono *monoGate
}

// Do sends req through the auth client; a refused blob mount becomes a
// plain upload (mountOrUpload).
func (a *authClient) Do(req *http.Request) (*http.Response, error) {
	if isMount(req) {
		return a.mountOrUpload(req)
	}
	return a.do(req)
}

// do sends req through the auth client.
func (a *authClient) do(req *http.Request) (*http.Response, error) {
	// oras-go buffers manifests only for a bare *auth.Client; do the same so
	// that a PUT can be replayed after an auth challenge. A blob's upload
	// is streamed instead, whatever its size: its bytes go from the origin
	// to the registry as they are read, within the copy's transfer slots,
	// and a run's memory does not grow with the uploads awaiting an
	// answer. The upload session's POST has just been answered with the
	// same credentials, so a challenge now is rare (a token expired in
	// between); the upload then fails with errUploadChallenged, which is
	// transient, and the push starts over with a new session.
	if isUploadBody(req) && req.GetBody == nil {
		req.GetBody = uploadChallenged
	} else if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil &&
		req.ContentLength >= 0 && req.ContentLength <= maxManifestBuffer {
		b, err := io.ReadAll(io.LimitReader(req.Body, maxManifestBuffer+1))
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s %s: reading request body: %w", req.Method, req.URL.Host, err)
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := a.c.Do(req)
	if errors.Is(err, errUploadChallenged) {
		a.cancelUpload(req)
	}
	if err != nil {
		var er *errcode.ErrorResponse
		if errors.As(err, &er) && (er.StatusCode == http.StatusUnauthorized || er.StatusCode == http.StatusForbidden) {
			// The token service refused the credentials.
			return nil, &AuthError{Host: req.URL.Host, Method: req.Method, Path: req.URL.Path,
				StatusCode: er.StatusCode, Err: err, ConfigPath: a.configPath}
		}
		if errors.Is(err, auth.ErrBasicCredentialNotFound) {
			// The registry asked for basic auth and we have nothing for it.
			return nil, &AuthError{Host: req.URL.Host, Method: req.Method, Path: req.URL.Path,
				StatusCode: http.StatusUnauthorized, Err: err, ConfigPath: a.configPath}
		}
		return nil, redact.Error(withoutQuery(err))
	}
	if resp.StatusCode >= 400 && resp.Request != nil && resp.Request.URL.RawQuery != "" {
		// oras-go names the request's URL in its error
		// (errutil.ParseErrorResponse: resp.Request.URL): without its
		// query, which holds an upload session's _state token.
		r := *resp.Request
		r.URL = stripURL(resp.Request)
		resp.Request = &r
	}
	// A registry out of room refuses with 507, 413, or a 500 or 403
	// naming the disk or the quota (Harbor's quota is a 403 DENIED): that
	// is no credential problem, and no retry helps.
	if se := storageError(req, resp); se != nil {
		discard(resp)
		return nil, se
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		// The transport's retries are spent (or the request, a blob's
		// content, could not be sent again): the caller retries the
		// operation, honouring Retry-After, or reports the limit.
		defer resp.Body.Close()
		return nil, &RateLimitError{Host: req.URL.Host, Method: req.Method, Path: req.URL.EscapedPath(),
			Limit: rateLimit(resp), Err: parseErrorResponse(req, resp)}
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		defer resp.Body.Close()
		return nil, &AuthError{Host: req.URL.Host, Method: req.Method, Path: req.URL.Path,
			StatusCode: resp.StatusCode, Err: parseErrorResponse(req, resp), ConfigPath: a.configPath}
	}
	return resp, nil
}

// cancelUpload deletes the upload session req sent content into, as the
// distribution spec cancels an upload (DELETE /v2/NAME/blobs/uploads/ID),
// so that an upload started over leaves no session open. It is best
// effort: a registry that keeps it drops it when it goes stale.
func (a *authClient) cancelUpload(req *http.Request) {
	// The session's own query stays (distribution signs its state in
	// it, _state); only the PUT's digest goes.
	u := *req.URL
	q := u.Query()
	q.Del("digest")
	u.RawQuery = q.Encode()
	deleteSession(req.Context(), a.c, &u, "")
}

// parseErrorResponse reads a registry's JSON error body.
func parseErrorResponse(req *http.Request, resp *http.Response) error {
	er := &errcode.ErrorResponse{Method: req.Method, URL: stripURL(req), StatusCode: resp.StatusCode}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var doc struct {
		Errors errcode.Errors `json:"errors"`
	}
	if json.Unmarshal(body, &doc) == nil {
		er.Errors = doc.Errors
	}
	return er
}

// withoutQuery drops the query (an upload session's _state token, a
// digest) and userinfo from the URL a *url.Error names: net/http quotes
// the whole URL ("Put \"http://host/v2/…/blobs/uploads/ID?_state=…\": …").
func withoutQuery(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.RawQuery, u.User, u.ForceQuery = "", nil, false
			ue.URL = u.String()
		}
	}
	return err
}

// stripURL returns req's URL without userinfo or query.
func stripURL(req *http.Request) *url.URL {
	u := *req.URL
	u.User = nil
	u.RawQuery = ""
	return &u
}

// PlainHTTPError is plain HTTP with a host that is not loopback and that
// the caller has not allowed it for (Options.PlainHTTP), or, with
// Answered, a host that answered HTTPS with plain HTTP. It is bad input; a
// CLI names the option that allows the host.
type PlainHTTPError struct {
	// Host is the host (host:port).
	Host string
	// Answered is a host that answered HTTPS with plain HTTP.
	Answered bool
	// Err is the underlying error, for Answered.
	Err error
}

func (e *PlainHTTPError) Error() string {
	if e.Answered {
		return fmt.Sprintf("%s answered HTTPS with plain HTTP: %v", e.Host, e.Err)
	}
	return fmt.Sprintf("%s: refusing plain HTTP to a host that is not loopback", e.Host)
}

// Unwrap returns Err.
func (e *PlainHTTPError) Unwrap() error { return e.Err }

// CAFileError is a CA file (Options.CAFile) that cannot be read or holds
// no PEM certificate.
type CAFileError struct {
	// Path is the file.
	Path string
	// Err says what is wrong.
	Err error
}

func (e *CAFileError) Error() string { return "CA file " + e.Path + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *CAFileError) Unwrap() error { return e.Err }
