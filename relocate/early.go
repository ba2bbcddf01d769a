package relocate

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
)

// Early upload sessions. A blob's push opens an upload session (POST)
// and then sends the content (PUT); the content is read from the origin
// (GET) first. Done in that order, a blob costs three round trips before
// its bytes move. earlyUploads opens the mirror's session when the copy
// asks the origin for the blob, so the POST's round trip runs beside the
// GET's, as the bench's minimal client does; the push then only sends.
// A session the push does not use (the read failed, or the content went
// into a refused mount's own session) is cancelled.

// earlyUploads holds the sessions opened for one graph copy into one
// mirror repository, by blob digest (a graph copy reads each node once).
// A session is in m until a push takes it or it is dropped: being there
// is what marks it unused.
type earlyUploads struct {
	repo *remote.Repository
	mu   sync.Mutex
	m    map[digest.Digest]*earlyUpload
	// mounting are the blobs being mounted: a read of one is a refused
	// mount's content, which goes into the mount's own session.
	mounting map[digest.Digest]bool
	// single are the blobs whose push goes in one request
	// (client.PushMonolithic), with no session opened early; the value is
	// set for the one that is the registry's probe.
	single map[digest.Digest]bool
	// cancels are the cancellations under way; finish waits for them.
	cancels sync.WaitGroup
}

// earlyUpload is one session being opened, or open.
type earlyUpload struct {
	done chan struct{}
	up   *client.Upload
	err  error
}

func newEarlyUploads(repo *remote.Repository) *earlyUploads {
	return &earlyUploads{repo: repo, m: map[digest.Digest]*earlyUpload{}, mounting: map[digest.Digest]bool{}, single: map[digest.Digest]bool{}}
}

// mount notes that d is being mounted: reading it opens no session.
func (e *earlyUploads) mount(d digest.Digest) {
	e.mu.Lock()
	e.mounting[d] = true
	e.mu.Unlock()
}

// pushSingle reports whether desc's push goes in one request, and marks
// it so: the registry is known to complete single-request uploads, or
// its answer is unknown and desc is small enough to be the probe, which
// no other push is (client.ClaimMonolithicProbe). A push that finds
// another's probe under way waits for its answer (one round trip, once
// per registry and run) rather than open a session the answer may make
// needless.
func (e *earlyUploads) pushSingle(ctx context.Context, desc ocispec.Descriptor) bool {
	if desc.Size > client.MonolithicMax || !e.mayPushSingle(desc.Digest) {
		return false
	}
	probe := false
	switch client.MonolithicUploads(e.repo) {
	case client.MonolithicSupported:
	case client.MonolithicUnknown:
		if desc.Size <= client.MonolithicProbeMax && client.ClaimMonolithicProbe(e.repo) {
			probe = true
		} else if client.AwaitMonolithicProbe(ctx, e.repo) != client.MonolithicSupported {
			return false
		}
	default:
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.single[desc.Digest]; ok || e.mounting[desc.Digest] || e.m[desc.Digest] != nil {
		// Marked, mounted or given a session meanwhile.
		if probe {
			client.ReleaseMonolithicProbe(e.repo)
		}
		_, ok := e.single[desc.Digest]
		return ok
	}
	e.single[desc.Digest] = probe
	return true
}

// mayPushSingle reports whether d may be pushed in one request: it is
// neither being mounted nor given an early session.
func (e *earlyUploads) mayPushSingle(d digest.Digest) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.single[d]; ok {
		return true
	}
	return !e.mounting[d] && e.m[d] == nil
}

// takeSingle reports whether d's push goes in one request, and whether
// it is the probe; the mark is taken.
func (e *earlyUploads) takeSingle(d digest.Digest) (single, probe bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	probe, single = e.single[d]
	delete(e.single, d)
	return single, probe
}

// dropSingle forgets d's mark unless a push took it, ending the probe it
// was (another push may then probe).
func (e *earlyUploads) dropSingle(d digest.Digest) {
	if _, probe := e.takeSingle(d); probe {
		client.ReleaseMonolithicProbe(e.repo)
	}
}

// open starts opening a session for d; it returns nil when d is being
// mounted, or already has a session unused.
func (e *earlyUploads) open(ctx context.Context, d digest.Digest) *earlyUpload {
	eu := &earlyUpload{done: make(chan struct{})}
	e.mu.Lock()
	if e.mounting[d] || e.m[d] != nil {
		e.mu.Unlock()
		return nil
	}
	e.m[d] = eu
	e.mu.Unlock()
	// The POST outlives a copy that fails while it is under way (for a
	// while: cleanupGrace), so that the session it opens is known and
	// cancelled, not left on the registry with nobody to end it.
	postCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	unwatch := context.AfterFunc(ctx, func() { time.AfterFunc(cleanupGrace, stop) })
	go func() {
		defer close(eu.done)
		defer stop()
		defer unwatch()
		eu.up, eu.err = client.StartUpload(postCtx, e.repo)
	}()
	return eu
}

// cleanupGrace is how long a session being opened, or cancelled, may
// take once its copy has failed or been interrupted.
const cleanupGrace = 3 * time.Second

// take returns the session opened for d, waiting for it to open, or nil
// when none was (or it is already taken).
func (e *earlyUploads) take(ctx context.Context, d digest.Digest) (*client.Upload, error) {
	e.mu.Lock()
	eu := e.m[d]
	delete(e.m, d)
	e.mu.Unlock()
	if eu == nil {
		return nil, nil
	}
	select {
	case <-eu.done:
		return eu.up, eu.err
	case <-ctx.Done():
		e.cancelLater(ctx, eu)
		return nil, ctx.Err()
	}
}

// drop cancels eu's session unless a push took it.
func (e *earlyUploads) drop(ctx context.Context, d digest.Digest, eu *earlyUpload) {
	e.mu.Lock()
	unused := e.m[d] == eu
	if unused {
		delete(e.m, d)
	}
	e.mu.Unlock()
	if unused {
		e.cancelLater(ctx, eu)
	}
}

// cancelLater deletes eu's session once it is open, without waiting.
func (e *earlyUploads) cancelLater(ctx context.Context, eu *earlyUpload) {
	e.cancels.Add(1)
	go func() {
		defer e.cancels.Done()
		<-eu.done
		if eu.up != nil {
			eu.up.Cancel(ctx)
		}
	}()
}

// finish cancels every session no push took and waits until they are
// cancelled: a graph copy leaves no session of its own open.
func (e *earlyUploads) finish(ctx context.Context) {
	e.mu.Lock()
	for d, eu := range e.m {
		delete(e.m, d)
		e.cancelLater(ctx, eu)
	}
	probe := false
	for d, p := range e.single {
		delete(e.single, d)
		probe = probe || p
	}
	e.mu.Unlock()
	if probe {
		client.ReleaseMonolithicProbe(e.repo)
	}
	e.cancels.Wait()
}

// earlySource is a copy's origin that opens the mirror's upload session
// for each blob it is asked for (earlyUploads).
type earlySource struct {
	content.ReadOnlyStorage
	early *earlyUploads
}

// Fetch opens desc's upload session in the mirror, unless it is a
// manifest (pushed by one PUT) or a blob pushed in one request
// (pushSingle), and reads desc from the origin meanwhile.
func (s earlySource) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	if isManifest(desc.MediaType) {
		return s.ReadOnlyStorage.Fetch(ctx, desc)
	}
	if s.early.pushSingle(ctx, desc) {
		rc, err := s.ReadOnlyStorage.Fetch(ctx, desc)
		if err != nil {
			s.early.dropSingle(desc.Digest)
			return nil, err
		}
		return &earlyReader{ReadCloser: rc, drop: func() { s.early.dropSingle(desc.Digest) }}, nil
	}
	eu := s.early.open(ctx, desc.Digest)
	if eu == nil {
		return s.ReadOnlyStorage.Fetch(ctx, desc)
	}
	rc, err := s.ReadOnlyStorage.Fetch(ctx, desc)
	if err != nil {
		s.early.drop(ctx, desc.Digest, eu)
		return nil, err
	}
	return &earlyReader{ReadCloser: rc, drop: func() { s.early.drop(ctx, desc.Digest, eu) }}, nil
}

// earlyReader is a blob's content from the origin; closing it cancels
// the blob's early session if no push took it.
type earlyReader struct {
	io.ReadCloser
	drop func()
}

func (r *earlyReader) Close() error {
	r.drop()
	return r.ReadCloser.Close()
}
