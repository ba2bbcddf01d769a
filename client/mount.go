package client

import (
	"errors"
	"net/http"
	"strings"

	"oras.land/oras-go/v2/registry/remote/auth"
)

// isMount reports whether req is a cross-repository blob mount:
// POST /v2/NAME/blobs/uploads/?mount=DIGEST&from=REPO.
func isMount(req *http.Request) bool {
	return req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/blobs/uploads/") &&
		req.URL.Query().Has("mount")
}

// mountOrUpload sends a mount request; when the registry refuses it (401 or
// 403: no pull access to the source repository, or mounts not allowed;
// 404: source unknown), it starts a plain upload session instead and
// returns that answer (202 with a Location), which oras-go treats as "not
// mounted, upload the blob" (registry/remote/repository.go blobStore.Mount,
// following the distribution spec: a registry that cannot mount SHOULD
// answer 202 and open a session). oras-go itself fails the copy on any
// other answer (copy.go mountOrCopyNode), so without this a registry that
// refuses cross-repository mounts would fail every mirror that mounts.
func (a *authClient) mountOrUpload(req *http.Request) (*http.Response, error) {
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
	// Ask for push on the destination only: the token service may refuse
	// the pull on the source repository that the mount asked for.
	name := strings.TrimSuffix(strings.TrimPrefix(req.URL.Path, "/v2/"), "/blobs/uploads/")
	ctx := auth.WithScopesForHost(req.Context(), req.URL.Host,
		auth.ScopeRepository(name, auth.ActionPull, auth.ActionPush))
	up := req.Clone(ctx)
	up.URL.RawQuery = ""
	up.Body, up.GetBody, up.ContentLength = nil, nil, 0
	if a.log != nil {
		a.log.Debug("mount refused, uploading instead", "url", logURL(up), "status", status)
	}
	return a.do(up)
}
