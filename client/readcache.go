package client

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/internal/lazyregexp"
)

// Bounds of the read cache: a manifest larger than maxCachedManifest is
// not kept, and the cache stops growing at maxCacheBytes.
const (
	maxCachedManifest = 4 << 20
	maxCacheBytes     = 64 << 20
)

// manifestByDigest matches the path of a manifest asked by digest:
// /v2/NAME/manifests/sha256:HEX.
var manifestByDigest = lazyregexp.New(`^/v2/.+/manifests/sha256:[a-f0-9]{64}$`)

// manifestByTag matches the path of a manifest asked by tag (OCI
// distribution spec's tag grammar): /v2/NAME/manifests/TAG.
var manifestByTag = lazyregexp.New(`^/v2/.+/manifests/[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)

// referrersPath matches the path of a referrers API query:
// /v2/NAME/referrers/DIGEST.
var referrersPath = lazyregexp.New(`^/v2/.+/referrers/[a-z0-9]+:[a-f0-9]+$`)

// readCache remembers, for the life of one Client (one ferry run), what
// the registries answered that cannot change: manifests fetched by
// digest, and whether a registry serves the OCI referrers API. Resolution,
// the signature lookup after it and the copy all read the same manifests;
// each is then fetched once per repository and run. A manifest's bytes
// are kept only when they hash to the digest asked for, so what the cache
// answers is exactly what a new GET would (content addressing); a
// manifest deleted from the registry meanwhile is the one difference, and
// a DELETE through this client forgets it.
//
// Tag lists are kept too, for the run: resolution lists a repository's
// tags to choose a version, and the signature lookup lists them again to
// find cosign's tags. A write through this client to a repository's
// manifests (a push, a tag, a delete) forgets its tag lists, so the run
// always sees its own writes; what another process writes meanwhile is
// seen as a tag list read a moment earlier would have seen it. With a
// repository's complete tag list at hand, a cosign or referrers-schema
// tag (sha256-HEX[.sig|.att|.sbom]) that the list does not hold is
// answered "not found" without asking.
type readCache struct {
	mu        sync.Mutex
	manifests map[string]cachedManifest // by HOST+PATH
	size      int64
	referrers map[string]bool       // by host: the referrers API answered (true) or is absent (false)
	tagLists  map[string]cachedTags // by HOST+PATH?QUERY of the tag list
	// probing holds, per host, the lock that the first referrers
	// queries take while the capability is unknown: one probes, the
	// others wait for its answer.
	probing map[string]*sync.Mutex
	// listing holds, per tag list page (tagLists' key), the lock its
	// listing takes (listLock).
	listing map[string]*sync.Mutex
}

// listLock returns the lock of the tag list page key.
func (c *readCache) listLock(key string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.listing[key]
	if m == nil {
		m = &sync.Mutex{}
		c.listing[key] = m
	}
	return m
}

// cachedTags is one tag list page as the registry answered it.
type cachedTags struct {
	contentType, link string
	data              []byte
	// tags is the page's tags, for a complete list (no next page).
	tags map[string]bool
}

// cachedManifest is one manifest as the registry answered it.
type cachedManifest struct {
	mediaType string
	data      []byte
}

func newReadCache() *readCache {
	return &readCache{manifests: map[string]cachedManifest{}, referrers: map[string]bool{}, tagLists: map[string]cachedTags{}, probing: map[string]*sync.Mutex{}, listing: map[string]*sync.Mutex{}}
}

// referrersCapability returns what host answered to a referrers query,
// and whether it has been asked.
func (c *readCache) referrersCapability(host string) (supported, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	supported, known = c.referrers[host]
	return supported, known
}

// probeLock returns the lock of host's first referrers queries.
func (c *readCache) probeLock(host string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.probing[host]
	if m == nil {
		m = &sync.Mutex{}
		c.probing[host] = m
	}
	return m
}

// referrers answers a referrers query: while the host's capability is
// unknown, one query at a time goes out (the first answer settles it);
// once the host is known to lack the API, the query is answered 404, as
// the host would answer it, without asking (oras-go then reads the
// referrers tag schema, registry/remote/repository.go Referrers).
func (c *cachingClient) referrers(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	if _, known := c.cache.referrersCapability(host); !known {
		m := c.cache.probeLock(host)
		m.Lock()
		defer m.Unlock()
	}
	if supported, known := c.cache.referrersCapability(host); known && !supported {
		body := []byte(`{"errors":[{"code":"UNSUPPORTED","message":"the referrers API is not supported","detail":"answered from this run's first probe of the registry"}]}`)
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		return &http.Response{
			Status: "404 Not Found", StatusCode: http.StatusNotFound, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
		}, nil
	}
	resp, err := c.next.Do(req)
	if err == nil {
		c.noteReferrers(host, resp)
	}
	return resp, err
}

// cachingClient is a remote.Client that answers from, and fills, a
// readCache.
type cachingClient struct {
	next  remote.Client
	cache *readCache
}

// Do implements remote.Client. The path patterns are tried only on paths
// holding their fixed part: a resolve makes thousands of requests, and the
// patterns' leading ".+" makes each try a backtracking match.
func (c *cachingClient) Do(req *http.Request) (*http.Response, error) {
	key := req.URL.Host + req.URL.Path
	isManifest := strings.Contains(req.URL.Path, "/manifests/") && manifestByDigest.MatchString(req.URL.Path)
	read := req.Method == http.MethodGet || req.Method == http.MethodHead
	var pushed []byte // a manifest this request pushes, to keep once accepted
	if name, ok := repoOfManifests(req.URL.Path); ok && !read {
		c.cache.forgetTags(req.URL.Host, name)
		if req.Method == http.MethodPut {
			pushed = bodyOf(req)
		}
	}
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/tags/list") && tagListPath.MatchString(req.URL.Path) {
		return c.tagList(req)
	}
	if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/referrers/") && referrersPath.MatchString(req.URL.Path) {
		return c.referrers(req)
	}
	if read && !isManifest && strings.Contains(req.URL.Path, "/manifests/") && manifestByTag.MatchString(req.URL.Path) {
		if resp := c.absentTag(req); resp != nil {
			return resp, nil
		}
	}
	switch {
	case isManifest && (req.Method == http.MethodGet || req.Method == http.MethodHead):
		c.cache.mu.Lock()
		m, ok := c.cache.manifests[key]
		c.cache.mu.Unlock()
		if ok && acceptable(req, m.mediaType) {
			return cachedResponse(req, m), nil
		}
	case isManifest && req.Method == http.MethodDelete:
		c.cache.mu.Lock()
		if m, ok := c.cache.manifests[key]; ok {
			c.cache.size -= int64(len(m.data))
			delete(c.cache.manifests, key)
		}
		c.cache.mu.Unlock()
	}
	resp, err := c.next.Do(req)
	if err != nil {
		return resp, err
	}
	switch {
	case pushed != nil && resp.StatusCode == http.StatusCreated:
		// What the run pushed is what a read would return: a later
		// check or read of it (the tag step's fetch, an existence
		// check) is answered here.
		c.cache.put(req.URL.Host+req.URL.Path[:strings.LastIndex(req.URL.Path, "/")+1]+digest.FromBytes(pushed).String(),
			cachedManifest{mediaType: req.Header.Get("Content-Type"), data: pushed})
	case isManifest && req.Method == http.MethodGet && resp.StatusCode == http.StatusOK:
		return c.keep(req, resp, digest.Digest(lastSegment(req.URL.Path))), nil
	case req.Method == http.MethodGet && resp.StatusCode == http.StatusOK && strings.Contains(req.URL.Path, "/manifests/") && manifestByTag.MatchString(req.URL.Path):
		// A manifest read by tag is kept under its digest: a later read
		// by digest (resolution reads tags, the copy and the signature
		// lookup digests) is then answered here. The tag itself is
		// asked again every time: it may move.
		return c.keep(req, resp, ""), nil
	}
	return resp, nil
}

// tagListPath matches a tag list's path: /v2/NAME/tags/list.
var tagListPath = lazyregexp.New(`^/v2/.+/tags/list$`)

// repoOfManifests returns NAME of a path /v2/NAME/manifests/REFERENCE.
func repoOfManifests(p string) (string, bool) {
	i := strings.LastIndex(p, "/manifests/")
	if !strings.HasPrefix(p, "/v2/") || i < len("/v2/") {
		return "", false
	}
	return p[len("/v2/"):i], true
}

// tagListKey is where the tag lists of repository name on host are kept.
func tagListKey(host, name, query string) string {
	return host + "/v2/" + name + "/tags/list?" + query
}

// forgetTags forgets every tag list page of repository name on host.
func (c *readCache) forgetTags(host, name string) {
	prefix := tagListKey(host, name, "")
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.tagLists {
		if strings.HasPrefix(k, prefix) {
			delete(c.tagLists, k)
		}
	}
}

// tagList answers a tag list page from the cache, or asks and keeps it.
func (c *cachingClient) tagList(req *http.Request) (*http.Response, error) {
	key := req.URL.Host + req.URL.Path + "?" + req.URL.RawQuery
	// One listing of a page at a time: copies of several tags of one
	// repository, started at once, each list its tags (a mirror run's
	// signature lookup), and the first answer serves the others.
	m := c.cache.listLock(key)
	m.Lock()
	defer m.Unlock()
	c.cache.mu.Lock()
	t, ok := c.cache.tagLists[key]
	c.cache.mu.Unlock()
	if ok {
		h := http.Header{}
		h.Set("Content-Type", t.contentType)
		if t.link != "" {
			h.Set("Link", t.link)
		}
		return &http.Response{
			Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h, Body: io.NopCloser(bytes.NewReader(t.data)), ContentLength: int64(len(t.data)), Request: req,
		}, nil
	}
	resp, err := c.next.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK || resp.ContentLength > maxCachedManifest {
		return resp, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxCachedManifest+1))
	if err != nil || len(data) > maxCachedManifest {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), errReader{err}, resp.Body), resp.Body}
		return resp, nil
	}
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	t = cachedTags{contentType: resp.Header.Get("Content-Type"), link: resp.Header.Get("Link"), data: data}
	var page struct {
		Tags []string `json:"tags"`
	}
	// A first page with no next page is the complete list.
	if t.link == "" && !strings.Contains(req.URL.RawQuery, "last=") {
		if json.Unmarshal(data, &page) == nil {
			t.tags = map[string]bool{}
			for _, tag := range page.Tags {
				t.tags[tag] = true
			}
		}
	}
	c.cache.mu.Lock()
	if c.cache.size+int64(len(data)) <= maxCacheBytes {
		c.cache.tagLists[key] = t
		c.cache.size += int64(len(data))
	}
	c.cache.mu.Unlock()
	return resp, nil
}

// absentTag answers "not found" for a cosign or referrers-schema tag
// (sha256-HEX, with or without .sig, .att or .sbom) that the run's
// complete tag list of the repository does not hold; nil when it cannot
// tell.
func (c *cachingClient) absentTag(req *http.Request) *http.Response {
	tag := lastSegment(req.URL.Path)
	if !strings.HasPrefix(tag, "sha256-") {
		return nil
	}
	name, ok := repoOfManifests(req.URL.Path)
	if !ok {
		return nil
	}
	prefix := tagListKey(req.URL.Host, name, "")
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	for k, t := range c.cache.tagLists {
		if t.tags == nil || !strings.HasPrefix(k, prefix) {
			continue
		}
		if t.tags[tag] {
			return nil
		}
		body := []byte(`{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":"not in the repository's tag list"}]}`)
		if req.Method == http.MethodHead {
			body = nil
		}
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		return &http.Response{
			Status: "404 Not Found", StatusCode: http.StatusNotFound, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
		}
	}
	return nil
}

// keep reads a manifest answer into the cache when it is small enough
// and hashes to want (the digest asked for; when empty, the digest the
// registry names in Docker-Content-Digest, if it names one), and returns
// the answer with its body intact either way.
func (c *cachingClient) keep(req *http.Request, resp *http.Response, want digest.Digest) *http.Response {
	if resp.ContentLength > maxCachedManifest {
		return resp
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxCachedManifest+1))
	if err != nil || len(data) > maxCachedManifest {
		// Hand back what was read followed by the rest (or the error).
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), errReader{err}, resp.Body), resp.Body}
		return resp
	}
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	got := digest.FromBytes(data)
	if want == "" {
		if named := resp.Header.Get("Docker-Content-Digest"); named != "" && named != got.String() {
			return resp // the caller decides what a disagreeing registry means
		}
		want = got
	}
	if got != want {
		return resp // the caller's digest check reports it
	}
	path := req.URL.Path
	key := req.URL.Host + path[:strings.LastIndex(path, "/")+1] + want.String()
	c.cache.put(key, cachedManifest{mediaType: resp.Header.Get("Content-Type"), data: data})
	return resp
}

// put keeps m under key, unless the cache is full or has it already.
func (c *readCache) put(key string, m cachedManifest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.manifests[key]; !ok && c.size+int64(len(m.data)) <= maxCacheBytes {
		c.manifests[key] = m
		c.size += int64(len(m.data))
	}
}

// bodyOf returns a small request's body, leaving the request able to send
// it (and send it again on a retry); nil when it has none or it is too
// large to keep.
func bodyOf(req *http.Request) []byte {
	if req.Body == nil || req.ContentLength <= 0 || req.ContentLength > maxCachedManifest {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, req.ContentLength+1))
	_ = req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(data))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	if err != nil || int64(len(data)) != req.ContentLength {
		// Sent as read: the server reports the short body.
		return nil
	}
	return data
}

// noteReferrers records what host's answer to a referrers query says of
// its referrers API, as oras-go reads it (registry/remote/repository.go
// referrersPageByAPI): 200 with an image index, supported; 404 other than
// NAME_UNKNOWN, not supported. Other answers say nothing.
func (c *cachingClient) noteReferrers(host string, resp *http.Response) {
	var supported bool
	switch resp.StatusCode {
	case http.StatusOK:
		supported = resp.Header.Get("Content-Type") == "application/vnd.oci.image.index.v1+json"
		if !supported {
			return
		}
	case http.StatusNotFound:
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil || bytes.Contains(body, []byte("NAME_UNKNOWN")) {
			return
		}
	default:
		return
	}
	c.cache.mu.Lock()
	c.cache.referrers[host] = supported
	c.cache.mu.Unlock()
}

// acceptable reports whether a cached manifest of mediaType answers req:
// its Accept header, when it names types, must name this one.
func acceptable(req *http.Request, mediaType string) bool {
	accept := req.Header.Values("Accept")
	if len(accept) == 0 {
		return true
	}
	for _, a := range accept {
		for _, t := range strings.Split(a, ",") {
			t, _, _ = strings.Cut(strings.TrimSpace(t), ";")
			if t == mediaType || t == "*/*" {
				return true
			}
		}
	}
	return false
}

// cachedResponse is the answer a registry gave for m, rebuilt.
func cachedResponse(req *http.Request, m cachedManifest) *http.Response {
	h := http.Header{}
	h.Set("Content-Type", m.mediaType)
	h.Set("Content-Length", strconv.Itoa(len(m.data)))
	h.Set("Docker-Content-Digest", lastSegment(req.URL.Path))
	body := io.NopCloser(bytes.NewReader(nil))
	if req.Method == http.MethodGet {
		body = io.NopCloser(bytes.NewReader(m.data))
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: body, ContentLength: int64(len(m.data)), Request: req,
	}
}

// lastSegment is what follows the last "/" of p.
func lastSegment(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// errReader returns err (io.EOF when nil) from every Read.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) {
	if r.err == nil {
		return 0, io.EOF
	}
	return 0, r.err
}
