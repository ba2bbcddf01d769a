// Package bound is W1's bound (issue 14): the least a client must ask of
// two registries to copy a set of images into an empty mirror. The bench
// measures ferry against it; it is not a mirroring tool. It imports
// nothing heavy, so the process running it starts in a few milliseconds.
package bound

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
)

// manifestAccept is the Accept header of the bound's manifest GETs.
var manifestAccept = strings.Join([]string{
	ocispec.MediaTypeImageIndex,
	ocispec.MediaTypeImageManifest,
	"application/vnd.docker.distribution.manifest.list.v2+json",
	"application/vnd.docker.distribution.manifest.v2+json",
}, ", ")

// Copy is W1's bound (issue 14): the least a client must ask of two
// plain-HTTP registries to copy refs ("REPO:TAG") from from to to, both
// "HOST[/PREFIX]", every ref at once. For each ref it GETs the manifest by
// tag and each child manifest by digest, copies every blob with one POST
// and one PUT whose body is the source's GET response as it arrives (the
// POST and the GET at once), and PUTs the manifests, children by digest
// first, the root by tag last. A blob that several repositories share is
// uploaded once, by the first repository that needs it; the others wait
// for that upload and mount it from there (POST ?mount=&from=), uploading
// it themselves only if the registry refuses the mount. It sends no HEAD,
// no ping, no tag list and no referrers request, and trusts that the
// mirror is empty: it is a bound to measure against, not a mirroring tool.
func Copy(ctx context.Context, from, to string, refs []string) error {
	b := &boundCopier{
		hc: &http.Client{Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 1024,
			IdleConnTimeout:     30 * time.Second,
			DisableCompression:  true,
			// Fewer, larger writes and reads for the blobs' bytes.
			WriteBufferSize: 64 << 10,
			ReadBufferSize:  64 << 10,
		}},
		claims: map[digest.Digest]*blobClaim{},
	}
	b.srcHost, b.srcPrefix = splitHostPrefix(from)
	b.dstHost, b.dstPrefix = splitHostPrefix(to)
	for _, ref := range refs {
		if i := strings.LastIndex(ref, ":"); i <= strings.LastIndex(ref, "/") {
			return fmt.Errorf("%q is not REPO:TAG", ref)
		}
	}
	defer b.hc.CloseIdleConnections()
	g, ctx := errgroup.WithContext(ctx)
	for _, ref := range refs {
		i := strings.LastIndex(ref, ":")
		repo, tag := ref[:i], ref[i+1:]
		g.Go(func() error {
			if err := b.copyManifest(ctx, repo, tag); err != nil {
				return fmt.Errorf("%s: %w", ref, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// splitHostPrefix splits "HOST[/PREFIX]" into the host and "PREFIX/" (or
// "").
func splitHostPrefix(s string) (host, prefix string) {
	host, prefix, _ = strings.Cut(strings.TrimSuffix(s, "/"), "/")
	if prefix != "" {
		prefix += "/"
	}
	return host, prefix
}

type boundCopier struct {
	hc                 *http.Client
	srcHost, srcPrefix string
	dstHost, dstPrefix string

	mu     sync.Mutex
	claims map[digest.Digest]*blobClaim
}

// blobClaim is the first upload of a blob: repo is the mirror repository
// uploading it; done closes when it is over, err then says how it went.
type blobClaim struct {
	repo string
	done chan struct{}
	err  error
}

func (b *boundCopier) srcURL(repo, rest string) string {
	return "http://" + b.srcHost + "/v2/" + b.srcPrefix + repo + rest
}

func (b *boundCopier) dstURL(repo, rest string) string {
	return "http://" + b.dstHost + "/v2/" + b.dstPrefix + repo + rest
}

// do sends req and returns the response when its status is want; any
// other status is an error carrying the start of the body.
func (b *boundCopier) do(req *http.Request, want ...int) (*http.Response, error) {
	resp, err := b.hc.Do(req)
	if err != nil {
		return nil, err
	}
	for _, w := range want {
		if resp.StatusCode == w {
			return resp, nil
		}
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	return nil, fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Redacted(), resp.Status, bytes.TrimSpace(msg))
}

// copyManifest copies the manifest repo:ref and everything it refers to,
// then PUTs it under ref (a tag or its digest).
func (b *boundCopier) copyManifest(ctx context.Context, repo, ref string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.srcURL(repo, "/manifests/"+ref), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", manifestAccept)
	resp, err := b.do(req, http.StatusOK)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if d, err := digest.Parse(ref); err == nil && d != digest.FromBytes(body) {
		return fmt.Errorf("manifest %s: the source sent %s", d, digest.FromBytes(body))
	}
	var m struct {
		MediaType string               `json:"mediaType"`
		Manifests []ocispec.Descriptor `json:"manifests"`
		Config    *ocispec.Descriptor  `json:"config"`
		Layers    []ocispec.Descriptor `json:"layers"`
		Blobs     []ocispec.Descriptor `json:"blobs"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("manifest %s: %w", ref, err)
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mediaType == "" || mediaType == "application/json" {
		mediaType = m.MediaType
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range m.Manifests {
		g.Go(func() error { return b.copyManifest(gctx, repo, c.Digest.String()) })
	}
	blobs := append(append([]ocispec.Descriptor(nil), m.Layers...), m.Blobs...)
	if m.Config != nil {
		blobs = append(blobs, *m.Config)
	}
	for _, d := range blobs {
		g.Go(func() error { return b.copyBlob(gctx, repo, d) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodPut, b.dstURL(repo, "/manifests/"+ref), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", mediaType)
	resp, err = b.do(req, http.StatusCreated)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// copyBlob copies blob d of repo, or mounts it from the mirror repository
// that uploaded it first.
func (b *boundCopier) copyBlob(ctx context.Context, repo string, d ocispec.Descriptor) error {
	dst := b.dstPrefix + repo
	b.mu.Lock()
	cl, claimed := b.claims[d.Digest]
	if !claimed {
		cl = &blobClaim{repo: dst, done: make(chan struct{})}
		b.claims[d.Digest] = cl
	}
	b.mu.Unlock()
	if !claimed {
		cl.err = b.upload(ctx, repo, d)
		close(cl.done)
		return cl.err
	}
	select {
	case <-cl.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if cl.repo == dst {
		return cl.err
	}
	if cl.err != nil {
		return b.upload(ctx, repo, d)
	}
	q := url.Values{"mount": {d.Digest.String()}, "from": {cl.repo}}
	loc, mounted, err := b.post(ctx, repo, "?"+q.Encode())
	if err != nil || mounted {
		return err
	}
	// Refused: the registry opened an upload instead.
	get, err := b.getBlob(ctx, repo, d)
	if err != nil {
		return err
	}
	return b.put(ctx, loc, d, get)
}

// upload copies blob d of repo with one POST and one PUT, the PUT's body
// streaming from the source's GET, which is sent along with the POST.
func (b *boundCopier) upload(ctx context.Context, repo string, d ocispec.Descriptor) error {
	type posted struct {
		loc *url.URL
		err error
	}
	ch := make(chan posted, 1)
	go func() {
		loc, _, err := b.post(ctx, repo, "")
		ch <- posted{loc, err}
	}()
	get, getErr := b.getBlob(ctx, repo, d)
	p := <-ch
	if err := errors.Join(p.err, getErr); err != nil {
		if get != nil {
			get.Close()
		}
		return err
	}
	return b.put(ctx, p.loc, d, get)
}

// post opens an upload in the mirror's repo (query "" or a mount) and
// returns its location, or mounted when the registry mounted the blob.
func (b *boundCopier) post(ctx context.Context, repo, query string) (loc *url.URL, mounted bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.dstURL(repo, "/blobs/uploads/"+query), nil)
	if err != nil {
		return nil, false, err
	}
	resp, err := b.do(req, http.StatusCreated, http.StatusAccepted)
	if err != nil {
		return nil, false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusCreated && query != "" {
		return nil, true, nil
	}
	loc, err = resp.Location()
	if err != nil {
		return nil, false, fmt.Errorf("POST %s: %w", req.URL.Redacted(), err)
	}
	return loc, false, nil
}

// getBlob starts reading blob d of repo from the source.
func (b *boundCopier) getBlob(ctx context.Context, repo string, d ocispec.Descriptor) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.srcURL(repo, "/blobs/"+d.Digest.String()), nil)
	if err != nil {
		return nil, err
	}
	resp, err := b.do(req, http.StatusOK)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// put completes the upload at loc with body, d's bytes, and closes body.
func (b *boundCopier) put(ctx context.Context, loc *url.URL, d ocispec.Descriptor, body io.ReadCloser) error {
	defer body.Close()
	u := *loc
	q := u.Query()
	q.Set("digest", d.Digest.String())
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.String(), body)
	if err != nil {
		return err
	}
	req.ContentLength = d.Size
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := b.do(req, http.StatusCreated)
	if err != nil {
		return fmt.Errorf("blob %s: %w", d.Digest, err)
	}
	resp.Body.Close()
	return nil
}
