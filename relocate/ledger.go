package relocate

import (
	"context"
	"io"
	"sync"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/opencontainers/go-digest"
)

// ledger is the state one mirror run shares between its copies. It
// remembers which mirror repositories hold which blobs, so a blob pushed
// once is mounted into every other repository that needs it; when two
// copies need the same blob at once, the second waits for the first push
// to finish and then mounts.
//
// A run schedules three kinds of work apart (see packageLimit): packages,
// metadata requests and blob transfers. Its slots bound the blobs read
// from the origin at once, across every package, to the run's -j; its
// meta slots bound the manifests read from the origin, and its mirrorMeta
// slots the metadata requests to the mirror (tag lists, existence checks,
// manifest pushes), each on their own, so a package waiting on a manifest
// holds no blob slot, and a blob transfer never waits behind a package's
// metadata. A copy may hold a meta slot while it takes a mirrorMeta slot
// (a manifest read from the origin and pushed), never the other way.
type ledger struct {
	mu sync.Mutex
	// have holds, per blob, the mirror repositories known to hold it;
	// first, the first of them, the one a mount names.
	have     map[digest.Digest]map[string]bool
	first    map[digest.Digest]string
	inflight map[digest.Digest]*claim
	slots    chan struct{}
	meta     chan struct{}
	// mirrorMeta bounds the metadata requests to the mirror (known.go).
	mirrorMeta chan struct{}
	// repos is what the run learnt of each mirror repository from its
	// first look at it (known.go).
	repos map[string]*repoState
	// journal, when set, remembers the repositories a copy began to push
	// into while they held no tag (known.go); nil makes none fresh.
	journal *journal
}

type claim struct {
	owner string
	done  chan struct{}
}

func newLedger(concurrency int) *ledger {
	return &ledger{
		have: map[digest.Digest]map[string]bool{}, first: map[digest.Digest]string{}, inflight: map[digest.Digest]*claim{},
		slots: make(chan struct{}, max(concurrency, 1)), meta: make(chan struct{}, metaLimit(concurrency)),
		mirrorMeta: make(chan struct{}, metaLimit(concurrency)),
		repos:      map[string]*repoState{},
	}
}

// packageLimit is how many packages a run with concurrency -j copies at
// once. A package spends most of its copy waiting on metadata round trips
// (its tag list, manifests read and pushed) that hold no blob slot, so
// more packages than blob slots are under way: the blob slots stay busy
// while some packages wait.
func packageLimit(concurrency int) int { return 4 * max(concurrency, 1) }

// metaLimit is how many metadata requests a run with concurrency -j makes
// at once to the origin (ledger.meta), and to the mirror
// (ledger.mirrorMeta).
func metaLimit(concurrency int) int { return 2 * max(concurrency, 1) }

// acquire takes a slot of slots, or fails when ctx ends first.
func acquire(ctx context.Context, slots chan struct{}) error {
	select {
	case slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// limited reads from an origin within the ledger's slots: each Fetch takes
// a slot until its reader is closed, a blob slot (slots) for a blob, a
// metadata slot (meta, when set) for a manifest.
type limited struct {
	content.ReadOnlyStorage
	slots chan struct{}
	meta  chan struct{}
}

func (l limited) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	slots := l.slots
	if l.meta != nil && isManifest(desc.MediaType) {
		slots = l.meta
	}
	if err := acquire(ctx, slots); err != nil {
		return nil, err
	}
	rc, err := l.ReadOnlyStorage.Fetch(ctx, desc)
	if err != nil {
		<-slots
		return nil, err
	}
	return &slotReader{ReadCloser: rc, slots: slots}, nil
}

type slotReader struct {
	io.ReadCloser
	slots chan struct{}
	once  sync.Once
}

func (r *slotReader) Close() error {
	err := r.ReadCloser.Close()
	r.once.Do(func() { <-r.slots })
	return err
}

// mountSources returns the repository repo may mount d from: the first
// that got it. An empty result means repo must push d itself, and it then
// owns d's claim until it calls record or release.
func (l *ledger) mountSources(ctx context.Context, repo string, d digest.Digest) ([]string, error) {
	for {
		l.mu.Lock()
		if src := l.other(repo, d); src != "" {
			l.mu.Unlock()
			return []string{src}, nil
		}
		c := l.inflight[d]
		if c == nil || c.owner == repo {
			l.inflight[d] = &claim{owner: repo, done: make(chan struct{})}
			l.mu.Unlock()
			return nil, nil
		}
		l.mu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// other returns a repository other than repo that holds d, the first one
// that got it when it can: "" when there is none. It takes constant time
// however many repositories hold d (a base layer shared by thousands).
func (l *ledger) other(repo string, d digest.Digest) string {
	if f := l.first[d]; f != "" && f != repo {
		return f
	}
	for r := range l.have[d] {
		if r != repo {
			return r
		}
	}
	return ""
}

// record notes that repo now holds d and wakes copies waiting for it.
func (l *ledger) record(repo string, d digest.Digest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.add(repo, d)
	if c := l.inflight[d]; c != nil && c.owner == repo {
		close(c.done)
		delete(l.inflight, d)
	}
}

// add notes that repo holds d; the caller holds l.mu or owns l alone.
func (l *ledger) add(repo string, d digest.Digest) {
	h := l.have[d]
	if h == nil {
		h = map[string]bool{}
		l.have[d] = h
		l.first[d] = repo
	}
	h[repo] = true
}

// release drops every claim repo still owns, after its copy ended.
func (l *ledger) release(repo string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for d, c := range l.inflight {
		if c.owner == repo {
			close(c.done)
			delete(l.inflight, d)
		}
	}
}

// LimitReads returns src reading within slots: each Fetch holds a slot
// until its reader is closed. One slots channel shared by many copies
// bounds their reads together.
func LimitReads(src content.ReadOnlyStorage, slots chan struct{}) content.ReadOnlyStorage {
	return limited{ReadOnlyStorage: src, slots: slots}
}
