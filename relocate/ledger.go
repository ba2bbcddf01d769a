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
// to finish and then mounts. Its slots bound the objects read from the
// origin at once, across every package, to the run's -j.
type ledger struct {
	mu       sync.Mutex
	have     map[digest.Digest][]string
	inflight map[digest.Digest]*claim
	slots    chan struct{}
}

type claim struct {
	owner string
	done  chan struct{}
}

func newLedger(concurrency int) *ledger {
	return &ledger{have: map[digest.Digest][]string{}, inflight: map[digest.Digest]*claim{}, slots: make(chan struct{}, max(concurrency, 1))}
}

// limited reads from an origin within the ledger's slots: each Fetch takes
// a slot until its reader is closed.
type limited struct {
	content.ReadOnlyStorage
	slots chan struct{}
}

func (l limited) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	rc, err := l.ReadOnlyStorage.Fetch(ctx, desc)
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotReader{ReadCloser: rc, slots: l.slots}, nil
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

// mountSources returns the repositories repo may mount d from. An empty
// result means repo must push d itself, and it then owns d's claim until
// it calls record or release.
func (l *ledger) mountSources(ctx context.Context, repo string, d digest.Digest) ([]string, error) {
	for {
		l.mu.Lock()
		if srcs := l.others(repo, d); len(srcs) > 0 {
			l.mu.Unlock()
			return srcs, nil
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

func (l *ledger) others(repo string, d digest.Digest) []string {
	var out []string
	for _, r := range l.have[d] {
		if r != repo {
			out = append(out, r)
		}
	}
	return out
}

// record notes that repo now holds d and wakes copies waiting for it.
func (l *ledger) record(repo string, d digest.Digest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	found := false
	for _, r := range l.have[d] {
		found = found || r == repo
	}
	if !found {
		l.have[d] = append(l.have[d], repo)
	}
	if c := l.inflight[d]; c != nil && c.owner == repo {
		close(c.done)
		delete(l.inflight, d)
	}
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
	return limited{src, slots}
}
