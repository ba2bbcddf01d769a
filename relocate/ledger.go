package relocate

import (
	"context"
	"sync"

	"github.com/opencontainers/go-digest"
)

// ledger remembers which mirror repositories hold which blobs in this run,
// so a blob pushed once is mounted into every other repository that needs
// it. When two copies need the same blob at once, the second waits for the
// first push to finish and then mounts.
type ledger struct {
	mu       sync.Mutex
	have     map[digest.Digest][]string
	inflight map[digest.Digest]*claim
}

type claim struct {
	owner string
	done  chan struct{}
}

func newLedger() *ledger {
	return &ledger{have: map[digest.Digest][]string{}, inflight: map[digest.Digest]*claim{}}
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
