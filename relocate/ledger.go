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
// metadata requests and blob transfers. Its slots bound the blobs whose
// bytes move at once, across every package, to the run's -j, and its open
// slots the blobs under way, moving or waiting on the network (limited);
// its meta slots bound the manifests read from the origin, and its mirrorMeta
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
	// open bounds the blobs under way, from their read's request to their
	// push's answer; slots only those whose bytes move (limited).
	open chan struct{}
	// mirrorMeta bounds the metadata requests to the mirror (known.go).
	mirrorMeta chan struct{}
	// repos is what the run learnt of each mirror repository from its
	// first look at it (known.go).
	repos map[string]*repoState
	// mounting holds the mounts under way, by repository and digest
	// (startMount).
	mounting map[string]chan struct{}
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
		mirrorMeta: make(chan struct{}, metaLimit(concurrency)), open: make(chan struct{}, openLimit(concurrency)),
		repos: map[string]*repoState{}, mounting: map[string]chan struct{}{},
	}
}

// packageLimit is how many packages a run with concurrency -j copies at
// once. A package spends most of its copy waiting on round trips that hold
// no blob slot (its tag list, manifests read and pushed, upload sessions,
// a shared blob's first push it will mount), so many more packages than
// blob slots are under way: the blob slots stay busy while some packages
// wait. Their requests stay within the metadata and open-blob bounds.
func packageLimit(concurrency int) int { return 8 * max(concurrency, 1) }

// metaLimit is how many metadata requests a run with concurrency -j makes
// at once to the origin (ledger.meta), and to the mirror
// (ledger.mirrorMeta). As many as packages under way: when a shared blob
// lands, every package that waited on it pushes its manifests at once, and
// on a slow network each push is a round trip (W1 at 100 ms a request:
// 1.66 s with 2×j, 1.47 s with 8×j together with openLimit's 8×j).
func metaLimit(concurrency int) int { return 8 * max(concurrency, 1) }

// openLimit is how many blobs a run with concurrency -j has under way at
// once, -j of them moving bytes (limited); it bounds the connections open
// to the origin and the uploads awaiting the mirror's answer. Uploads are
// streamed (client's authClient), so it does not bound memory: the blob
// slots do. Each blob under way is two or three round trips (its read
// and upload session side by side, earlyUploads, then its push) with no
// slot held but this one, so on a slow network it, not -j, sets how fast
// blobs go.
func openLimit(concurrency int) int { return 8 * max(concurrency, 1) }

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
//
// When open is set, a blob is read as a transfer instead (transferReader):
// its Fetch takes a place among the blobs under way (open) until its
// reader is closed, and a blob slot only while its bytes move, from its
// first Read to the end of its content. A blob then holds no blob slot
// while it waits on the network: for the origin's answer to its GET, for
// the mirror's upload session, for the mirror's answer once its last byte
// is sent. On a link with latency those waits, not the bytes, are most of
// a small blob's copy, and -j blob slots held through them would bound the
// run to -j round trips at a time.
type limited struct {
	content.ReadOnlyStorage
	slots chan struct{}
	meta  chan struct{}
	open  chan struct{}
}

func (l limited) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	slots := l.slots
	manifest := isManifest(desc.MediaType)
	if l.meta != nil && manifest {
		slots = l.meta
	}
	if l.open != nil && !manifest {
		return l.transfer(ctx, desc)
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

// transfer fetches the blob desc within a place of l.open; its reader
// takes a slot of l.slots while its bytes move.
func (l limited) transfer(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	if err := acquire(ctx, l.open); err != nil {
		return nil, err
	}
	rc, err := l.ReadOnlyStorage.Fetch(ctx, desc)
	if err != nil {
		<-l.open
		return nil, err
	}
	return &transferReader{slotReader: slotReader{ReadCloser: rc, slots: l.open}, ctx: ctx, transfers: l.slots}, nil
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

// transferReader is a blob's content read within a transfer slot: it
// takes one of transfers at its first Read and gives it back at the end of
// the content or at Close, whichever comes first. Close also gives back
// its place among the blobs under way (slotReader).
type transferReader struct {
	slotReader
	ctx       context.Context
	transfers chan struct{}

	mu sync.Mutex
	// holding is set while the reader holds a transfer slot; ended once
	// its content has ended or it is closed: it takes no slot again.
	holding, ended bool
}

func (r *transferReader) Read(p []byte) (int, error) {
	if err := r.take(); err != nil {
		return 0, err
	}
	n, err := r.ReadCloser.Read(p)
	if err == io.EOF {
		r.end()
	}
	return n, err
}

// take makes sure the reader holds a transfer slot, unless its content
// has ended.
func (r *transferReader) take() error {
	r.mu.Lock()
	need := !r.holding && !r.ended
	r.mu.Unlock()
	if !need {
		return nil
	}
	if err := acquire(r.ctx, r.transfers); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		// Closed while waiting for the slot.
		<-r.transfers
		return nil
	}
	r.holding = true
	return nil
}

// end gives back the transfer slot, if held, for good.
func (r *transferReader) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holding {
		<-r.transfers
		r.holding = false
	}
	r.ended = true
}

func (r *transferReader) Close() error {
	r.end()
	return r.slotReader.Close()
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
		if l.have[d][repo] {
			// Another copy into repo (another tag) pushed d while this
			// one waited: mount it from repo itself, which a registry
			// answers at once (distribution links the blob it holds).
			l.mu.Unlock()
			return []string{repo}, nil
		}
		c := l.inflight[d]
		if c == nil {
			l.inflight[d] = &claim{owner: repo, done: make(chan struct{})}
			l.mu.Unlock()
			return nil, nil
		}
		// A claim is never taken over, even by a copy into the same
		// repository (another tag of it): copies into other
		// repositories wait on its done, which only its owner's record
		// or release closes. Taking it over left them waiting forever.
		l.mu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// awaitRepo waits while a copy into repo pushes d: a claim repo owns,
// taken by another copy into the same repository (mountSources), since a
// copy asks whether the mirror holds a node before it claims it. A claim
// ends when the push is recorded or its copy ends (release); another may
// then be taken, and is waited for in turn.
func (l *ledger) awaitRepo(ctx context.Context, repo string, d digest.Digest) error {
	for {
		l.mu.Lock()
		c := l.inflight[d]
		l.mu.Unlock()
		if c == nil || c.owner != repo {
			return nil
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
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

// startMount begins a mount of d into repo: held reports that repo holds
// d already (recorded by another copy's push or mount), so no mount is
// needed; otherwise the caller mounts and calls done when the mount has
// ended, and another mount of d into repo waits until then and looks
// again.
func (l *ledger) startMount(ctx context.Context, repo string, d digest.Digest) (done func(), held bool, err error) {
	key := repo + "@" + d.String()
	for {
		l.mu.Lock()
		if l.have[d][repo] {
			l.mu.Unlock()
			return nil, true, nil
		}
		c := l.mounting[key]
		if c == nil {
			c = make(chan struct{})
			l.mounting[key] = c
			l.mu.Unlock()
			return func() {
				l.mu.Lock()
				delete(l.mounting, key)
				l.mu.Unlock()
				close(c)
			}, false, nil
		}
		l.mu.Unlock()
		select {
		case <-c:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}
