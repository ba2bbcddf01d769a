package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// CancelTimeout bounds an Upload's Cancel; InterruptedCancelTimeout
// bounds it once the run itself was cancelled (Ctrl-C), so that ferry
// exits promptly even when the registry does not answer.
const (
	CancelTimeout            = 10 * time.Second
	InterruptedCancelTimeout = 2 * time.Second
)

// Upload is a blob upload session a registry has opened (POST
// /v2/NAME/blobs/uploads/, answered 202 with a Location), waiting for the
// blob's content. Opening it apart from sending the content lets a copy
// open it while the content is still being requested from elsewhere, so
// the two round trips run side by side; oras-go's blob push
// (registry/remote/repository.go blobStore.Push) makes them one after the
// other. Put and Cancel each end the session; one Upload carries one
// blob.
type Upload struct {
	repo *remote.Repository
	// location is where the content goes, checked as oras-go checks it
	// (completePushAfterInitialPost).
	location *url.URL
	// authorization is the POST's credential, reused by the PUT as
	// oras-go reuses it.
	authorization string
}

// StartUpload opens an upload session in repo, asking for pull and push
// access as oras-go's blob push does (registry/remote/repository.go
// blobStore.Push, after distribution's registry/handlers/app.go).
func StartUpload(ctx context.Context, repo *remote.Repository) (*Upload, error) {
	ctx = auth.AppendRepositoryScope(ctx, repo.Reference, auth.ActionPull, auth.ActionPush)
	scheme := "https"
	if repo.PlainHTTP {
		scheme = "http"
	}
	// oras-go registry/remote/url.go buildRepositoryBlobUploadURL.
	u := fmt.Sprintf("%s://%s/v2/%s/blobs/uploads/", scheme, repo.Reference.Host(), repo.Reference.Repository)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := doer(repo).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return nil, parseErrorResponse(req, resp)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	location, err := uploadLocation(req.URL, resp)
	if err != nil {
		return nil, err
	}
	return &Upload{repo: repo, location: location, authorization: resp.Request.Header.Get("Authorization")}, nil
}

// uploadLocation returns the session's Location, resolved against the
// POST's URL and held to the registry's host and scheme, as oras-go's
// completePushAfterInitialPost does: a Location naming another host would
// receive the credentials (GHSA-jxpm-75mh-9fp7), and one dropping TLS the
// content in the clear.
func uploadLocation(posted *url.URL, resp *http.Response) (*url.URL, error) {
	location, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", posted.Redacted(), err)
	}
	// oras-go issue 177: a registry named with :443 may answer a Location
	// without it.
	if posted.Port() == "443" && location.Hostname() == posted.Hostname() && location.Port() == "" {
		location.Host = location.Hostname() + ":443"
	}
	if location.Hostname() != posted.Hostname() || defaultPort(location) != defaultPort(posted) {
		return nil, fmt.Errorf("blob upload Location %q is on a different host than the registry %q", location.Host, posted.Host)
	}
	if posted.Scheme == "https" && location.Scheme != "https" {
		return nil, fmt.Errorf("blob upload Location %q downgrades scheme from https", location.Host)
	}
	return location, nil
}

// defaultPort is u's port, or its scheme's when it names none.
func defaultPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// Put sends desc's content, read from r, into the session in one PUT
// (the distribution spec's monolithic upload: PUT LOCATION?digest=D) and
// completes it. r is streamed, not closed. A Put that fails cancels the
// session, so that a push started over leaves none open.
func (u *Upload) Put(ctx context.Context, desc ocispec.Descriptor, r io.Reader) error {
	ctx = auth.AppendRepositoryScope(ctx, u.repo.Reference, auth.ActionPull, auth.ActionPush)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.location.String(), r)
	if err != nil {
		return err
	}
	req.ContentLength = desc.Size
	// The descriptor's media type is not sent: the spec's blob PUT is
	// application/octet-stream whatever the content.
	req.Header.Set("Content-Type", "application/octet-stream")
	q := req.URL.Query()
	q.Set("digest", desc.Digest.String())
	req.URL.RawQuery = q.Encode()
	if u.authorization != "" {
		req.Header.Set("Authorization", u.authorization)
	}
	resp, err := doer(u.repo).Do(req)
	if err != nil {
		if !errors.Is(err, errUploadChallenged) {
			// authClient cancels a challenged upload itself.
			u.Cancel(ctx)
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		err := parseErrorResponse(req, resp)
		u.Cancel(ctx)
		return err
	}
	return nil
}

// Cancel deletes the session unused (DELETE LOCATION, as the distribution
// spec cancels an upload). It is best effort and runs even once ctx is
// done, for CancelTimeout at most: a registry that keeps the session
// drops it when it goes stale.
func (u *Upload) Cancel(ctx context.Context) {
	timeout := CancelTimeout
	if ctx.Err() != nil {
		timeout = InterruptedCancelTimeout
	}
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer stop()
	ctx = auth.AppendRepositoryScope(ctx, u.repo.Reference, auth.ActionPull, auth.ActionPush)
	deleteSession(ctx, doer(u.repo), u.location, u.authorization)
}

// deleteSession cancels the upload session at location (DELETE), with
// authorization when set, ignoring the answer: cancelling is best effort.
func deleteSession(ctx context.Context, c remote.Client, location *url.URL, authorization string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, location.String(), nil)
	if err != nil {
		return
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if resp, err := c.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}
}

// doer is repo's HTTP client, oras-go's default when it has none
// (registry/remote/repository.go Repository.client).
func doer(repo *remote.Repository) remote.Client {
	if repo.Client == nil {
		return auth.DefaultClient
	}
	return repo.Client
}
