package client

import (
	"errors"
	"net/http"
	"strings"
	"sync"

	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// isMount reports whether req is a cross-repository blob mount:
// POST /v2/NAME/blobs/uploads/?mount=DIGEST&from=REPO.
func isMount(req *http.Request) bool {
	return req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/blobs/uploads/") &&
		req.URL.Query().Has("mount")
}

// mountGate remembers, per registry host, whether the registry mounts
// blobs across repositories. Until one mount has been answered, the first
// mount to a host goes alone and the others wait for its answer; once a
// registry has refused a mount, no other mount is sent to it, only plain
// uploads. Only a refusal counts (202 without mounting, 401, 403, 404):
// a transient failure leaves the host undecided.
type mountGate struct {
	mu    sync.Mutex
	hosts map[string]*mountHost
}

type mountHost struct {
	// decided is set once a mount was answered; refused says how.
	decided, refused bool
	// probe is closed when the first mount in flight is answered.
	probe chan struct{}
}

func newMountGate() *mountGate { return &mountGate{hosts: map[string]*mountHost{}} }

// enter waits until a mount to host may be sent. It reports whether the
// registry is known to refuse mounts, and whether the caller is the
// probe, which must call settle.
func (g *mountGate) enter(req *http.Request) (refused, probe bool, err error) {
	for {
		g.mu.Lock()
		h := g.hosts[req.URL.Host]
		if h == nil {
			h = &mountHost{}
			g.hosts[req.URL.Host] = h
		}
		switch {
		case h.decided:
			refused := h.refused
			g.mu.Unlock()
			return refused, false, nil
		case h.probe == nil:
			h.probe = make(chan struct{})
			g.mu.Unlock()
			return false, true, nil
		}
		wait := h.probe
		g.mu.Unlock()
		select {
		case <-wait:
		case <-req.Context().Done():
			return false, false, req.Context().Err()
		}
	}
}

// settle records the answer to a mount to host: mounted, refused, or
// neither (decided false: a transient failure) and, for the probe, lets
// the waiting mounts go.
func (g *mountGate) settle(host string, probe, decided, refused bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.hosts[host]
	if decided && !(h.decided && h.refused) {
		h.decided, h.refused = true, refused
	}
	if probe {
		close(h.probe)
		h.probe = nil
	}
}

// isRefused reports whether host has refused a mount.
func (g *mountGate) isRefused(host string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.hosts[host]
	return h != nil && h.refused
}

// MountsRefused reports whether the registry repo is on has refused a
// cross-repository mount made through this package's client: a copy into
// repo then gains nothing by offering mounts and should push its blobs.
// It is false for a repository not opened by a Client.
func MountsRefused(repo *remote.Repository) bool {
	rc := repo.Client
	if c, ok := rc.(*cachingClient); ok {
		rc = c.next
	}
	a, ok := rc.(*authClient)
	return ok && a.mounts != nil && a.mounts.isRefused(repo.Reference.Host())
}

// mountOrUpload sends a mount request; when the registry refuses it (401 or
// 403: no pull access to the source repository, or mounts not allowed;
// 404: source unknown), it starts a plain upload session instead and
// returns that answer (202 with a Location), which oras-go treats as "not
// mounted, upload the blob" into that session (registry/remote/repository.go
// blobStore.Mount calls getContent and completePushAfterInitialPost with
// the answer's Location, following the distribution spec: a registry that
// cannot mount SHOULD answer 202 and open a session). oras-go itself fails
// the copy on any other answer (copy.go mountOrCopyNode), so without this
// a registry that refuses cross-repository mounts would fail every mirror
// that mounts.
//
// A refusal is remembered for the host (mountGate): later mounts are sent
// as plain upload POSTs, so each costs what a push costs (POST and PUT)
// and opens exactly the session its upload then completes.
func (a *authClient) mountOrUpload(req *http.Request) (*http.Response, error) {
	if a.mounts == nil {
		return a.mountOnce(req)
	}
	refused, probe, err := a.mounts.enter(req)
	if err != nil {
		return nil, err
	}
	if refused {
		return a.upload(req)
	}
	resp, err := a.mountOnce(req)
	decided, refusedNow := false, false
	switch {
	case err == nil && resp.StatusCode == http.StatusCreated:
		decided = true
	case err == nil && resp.StatusCode == http.StatusAccepted:
		// A 202 is a refusal whether the registry sent it or mountOnce
		// turned a 401, 403 or 404 into an upload session.
		decided, refusedNow = true, true
	}
	a.mounts.settle(req.URL.Host, probe, decided, refusedNow)
	return resp, err
}

// mountOnce sends the mount request and turns a refusal into a plain
// upload session (see mountOrUpload).
func (a *authClient) mountOnce(req *http.Request) (*http.Response, error) {
	resp, err := a.do(req)
	var ae *AuthError
	switch {
	case errors.As(err, &ae):
	case err == nil && resp.StatusCode == http.StatusNotFound:
		discard(resp)
	default:
		return resp, err
	}
	status := http.StatusNotFound
	if ae != nil {
		status = ae.StatusCode
	}
	if a.log != nil {
		a.log.Debug("mount refused, uploading instead", "url", logURL(req), "status", status)
	}
	return a.upload(req)
}

// upload sends mount request req as a plain upload POST (no mount or from
// parameter), asking for push on the destination only: the token service
// may refuse the pull on the source repository that the mount asked for.
func (a *authClient) upload(req *http.Request) (*http.Response, error) {
	name := strings.TrimSuffix(strings.TrimPrefix(req.URL.Path, "/v2/"), "/blobs/uploads/")
	ctx := auth.WithScopesForHost(req.Context(), req.URL.Host,
		auth.ScopeRepository(name, auth.ActionPull, auth.ActionPush))
	up := req.Clone(ctx)
	up.URL.RawQuery = ""
	up.Body, up.GetBody, up.ContentLength = nil, nil, 0
	return a.do(up)
}
