package client

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// Single-request blob uploads. The distribution spec lets a client push a
// blob in one request, POST /v2/NAME/blobs/uploads/?digest=D with the
// content as its body, answered 201 Created; support for it is optional,
// and a registry without it answers 202 Accepted with an upload session's
// Location, into which the content then goes by PUT
// (opencontainers/distribution-spec spec.md, "Pushing a blob
// monolithically", "POST then PUT" and "Single POST"). CNCF distribution
// v3 (registry/handlers/blobupload.go StartBlobUpload) ignores the digest
// and the body and opens the session, as Docker Hub, Harbor and GitLab,
// which run it, do; zot completes the upload. oras-go's blob push
// (registry/remote/repository.go blobStore.Push) always sends POST then
// PUT, and so does regclient's (scheme/reg/blob.go BlobPut).
//
// A run learns per registry host whether it completes single-request
// uploads: the first small blob pushed to a host whose answer is not yet
// known is sent by a POST with its content (the probe). 201 means every
// later blob up to MonolithicMax goes the same way, one request where
// the session costs two; 202 means the host ignores it, and the probe's
// content goes into the session the 202 opened (no request is added,
// only the probe's bytes are sent twice: at most MonolithicProbeMax).
// Another refusal (400, 404, 405, 415: a registry that takes no body on
// the POST) is remembered in the same way and the probe falls back to a
// plain upload session.

// MonolithicMax is the largest blob pushed in one request, and
// MonolithicProbeMax the largest sent as the probe. A blob is buffered in
// memory for its single request (so that an auth challenge can be
// answered by sending it again); larger blobs are streamed into a session,
// where the session's extra round trip is small beside the transfer.
const (
	MonolithicMax      = 1 << 20
	MonolithicProbeMax = 16 << 10
)

// MonolithicSupport is what a run knows of a registry's single-request
// blob uploads.
type MonolithicSupport int

// What a run knows of a registry's single-request uploads: not yet asked,
// completes them (201), or ignores or refuses them.
const (
	MonolithicUnknown MonolithicSupport = iota
	MonolithicSupported
	MonolithicUnsupported
)

// monoGate remembers, per registry host, the answer to the probe, and
// whether a probe is in flight (one at a time: a host that ignores the
// content then receives one blob twice, not one per concurrent push).
type monoGate struct {
	mu    sync.Mutex
	hosts map[string]*monoHost
}

type monoHost struct {
	support MonolithicSupport
	// probed is the probe in flight, closed when it ends; nil when none
	// is.
	probed chan struct{}
}

func newMonoGate() *monoGate { return &monoGate{hosts: map[string]*monoHost{}} }

func (g *monoGate) host(h string) *monoHost {
	m := g.hosts[h]
	if m == nil {
		m = &monoHost{}
		g.hosts[h] = m
	}
	return m
}

// monoGateOf is the gate of the Client that opened repo; nil for a
// repository not opened by a Client.
func monoGateOf(repo *remote.Repository) *monoGate {
	rc := repo.Client
	if c, ok := rc.(*cachingClient); ok {
		rc = c.next
	}
	if a, ok := rc.(*authClient); ok {
		return a.mono
	}
	return nil
}

// MonolithicUploads reports what the run knows of single-request uploads
// to repo's registry. It is MonolithicUnsupported for a repository not
// opened by a Client: those always push a blob as POST then PUT.
func MonolithicUploads(repo *remote.Repository) MonolithicSupport {
	g := monoGateOf(repo)
	if g == nil {
		return MonolithicUnsupported
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.host(repo.Reference.Host()).support
}

// ClaimMonolithicProbe reports whether the caller may send the probe to
// repo's registry: its support is unknown and no other probe is in
// flight. The caller sends it with PushMonolithic and then calls
// ReleaseMonolithicProbe, whatever happened.
func ClaimMonolithicProbe(repo *remote.Repository) bool {
	g := monoGateOf(repo)
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(repo.Reference.Host())
	if h.support != MonolithicUnknown || h.probed != nil {
		return false
	}
	h.probed = make(chan struct{})
	return true
}

// MonolithicProbeWait is how long AwaitMonolithicProbe waits for the
// probe's answer.
const MonolithicProbeWait = time.Second

// AwaitMonolithicProbe waits until no probe of repo's registry is in
// flight (ClaimMonolithicProbe), at most MonolithicProbeWait or until ctx
// ends, and reports what the run then knows of its single-request
// uploads: a push that began while the probe was under way learns its
// answer (about one round trip, at the start of a run) instead of opening
// a session. A probe slower than that (a stalled registry, or one that
// holds a session's answer until other content arrives) lets the pushes
// waiting on it go by sessions, so that none waits long on another's
// answer.
func AwaitMonolithicProbe(ctx context.Context, repo *remote.Repository) MonolithicSupport {
	g := monoGateOf(repo)
	if g == nil {
		return MonolithicUnsupported
	}
	g.mu.Lock()
	h := g.host(repo.Reference.Host())
	probed := h.probed
	g.mu.Unlock()
	if probed != nil {
		t := time.NewTimer(MonolithicProbeWait)
		select {
		case <-probed:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return h.support
}

// ReleaseMonolithicProbe ends the probe claimed by ClaimMonolithicProbe:
// when it got no answer (it failed, or was never sent), another push may
// probe.
func ReleaseMonolithicProbe(repo *remote.Repository) {
	if g := monoGateOf(repo); g != nil {
		g.mu.Lock()
		h := g.host(repo.Reference.Host())
		if h.probed != nil {
			close(h.probed)
			h.probed = nil
		}
		g.mu.Unlock()
	}
}

// settle records the registry's answer to a single-request upload.
func (g *monoGate) settle(host string, s MonolithicSupport) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.host(host)
	if h.support != MonolithicUnsupported {
		h.support = s
	}
}

// PushMonolithic sends desc's content, b, in one request: POST
// /v2/NAME/blobs/uploads/?digest=D with b as its body. It returns nil
// when the registry completed the upload (201). When the registry opened
// a session instead (202, the content ignored) or refused the request
// (400, 404, 405, 415), it returns that session, or a new one, for the
// caller to Put b into; the answer is remembered for the host
// (MonolithicUploads). A 401, 403, 429, 5xx or a network failure is
// returned as an error.
func PushMonolithic(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, b []byte) (*Upload, error) {
	ctx = auth.AppendRepositoryScope(ctx, repo.Reference, auth.ActionPull, auth.ActionPush)
	scheme := "https"
	if repo.PlainHTTP {
		scheme = "http"
	}
	// oras-go registry/remote/url.go buildRepositoryBlobUploadURL.
	u := scheme + "://" + repo.Reference.Host() + "/v2/" + repo.Reference.Repository + "/blobs/uploads/"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	q := req.URL.Query()
	q.Set("digest", desc.Digest.String())
	req.URL.RawQuery = q.Encode()
	req.ContentLength = int64(len(b))
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := doer(repo).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	g := monoGateOf(repo)
	host := repo.Reference.Host()
	switch resp.StatusCode {
	case http.StatusCreated:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		g.settle(host, MonolithicSupported)
		return nil, nil
	case http.StatusAccepted:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		g.settle(host, MonolithicUnsupported)
		location, err := uploadLocation(req.URL, resp)
		if err != nil {
			return nil, err
		}
		return &Upload{repo: repo, location: location, authorization: resp.Request.Header.Get("Authorization")}, nil
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		g.settle(host, MonolithicUnsupported)
		if a := logOf(repo); a != nil {
			a.Debug("single-request upload refused, uploading into a session", "url", logURL(req), "status", resp.StatusCode)
		}
		return StartUpload(ctx, repo)
	}
	return nil, parseErrorResponse(req, resp)
}

// logOf is the debug logger of the Client that opened repo, or nil.
func logOf(repo *remote.Repository) *slog.Logger {
	rc := repo.Client
	if c, ok := rc.(*cachingClient); ok {
		rc = c.next
	}
	if a, ok := rc.(*authClient); ok {
		return a.log
	}
	return nil
}
