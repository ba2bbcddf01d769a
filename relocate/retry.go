package relocate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"

	"github.com/ferryhq/ferry/client"
)

// packageAttempts bounds the catch-all retry of a whole package copy
// (below it, every request and every push is retried on its own).
const packageAttempts = 3

// retryStore is a copy destination that tries a push again when it fails
// with an error client.IsTransient accepts. A push's body is a stream the
// transport cannot replay, so each new try re-reads the content from src
// and starts a new upload.
type retryStore struct {
	content.Storage
	src    content.ReadOnlyStorage
	policy client.RetryPolicy
}

// Push pushes r, then, after a transient failure, content re-read from
// src.
func (s retryStore) Push(ctx context.Context, desc ocispec.Descriptor, r io.Reader) error {
	first := true
	return s.policy.Do(ctx, "pushing "+desc.Digest.String(), func() error {
		if first {
			first = false
			// The content's reader is closed by its owner once the push
			// has its answer, not by the HTTP transport once the last
			// byte is sent: it holds a place among the blobs under way
			// (limited) until then.
			err := s.Storage.Push(ctx, desc, struct{ io.Reader }{r})
			if tr, ok := r.(*transferReader); ok && err != nil {
				// The failed try's transfer slot, if its bytes stopped
				// short of the end, goes back now: the next try reads
				// from src, which may take a slot of its own.
				tr.end()
			}
			return err
		}
		rc, err := s.src.Fetch(ctx, desc)
		if err != nil {
			return err
		}
		defer rc.Close()
		return s.Storage.Push(ctx, desc, rc)
	})
}

// retryMounter is a retryStore whose destination mounts blobs from other
// repositories (a registry). oras.CopyGraph mounts only when its
// destination is a registry.Mounter (oras-go v2 copy.go, mountOrCopyNode),
// so the wrapper must keep offering Mount.
type retryMounter struct {
	retryStore
	m registry.Mounter
}

// Mount tries the mount again after a transient failure; getContent opens
// the content afresh on each call, so a fallback upload starts over too.
func (s retryMounter) Mount(ctx context.Context, desc ocispec.Descriptor, from string, getContent func() (io.ReadCloser, error)) error {
	return s.policy.Do(ctx, "mounting "+desc.Digest.String(), func() error {
		return s.m.Mount(ctx, desc, from, getContent)
	})
}

// RetryingTarget returns dst wrapped for oras.CopyGraph so that a push
// failing with a transient error is tried again within p, with the content
// re-read from src. dst keeps its Mount, when it has one.
func RetryingTarget(dst content.Storage, src content.ReadOnlyStorage, p client.RetryPolicy) content.Storage {
	rs := retryStore{Storage: dst, src: src, policy: p}
	if m, ok := dst.(registry.Mounter); ok {
		return retryMounter{retryStore: rs, m: m}
	}
	return rs
}

// retryPackage runs copy, a whole package's copy, again while it fails
// with a transient error, at most packageAttempts times within p: content
// already copied is skipped, so a new try redoes only what failed.
func retryPackage[T any](ctx context.Context, p client.RetryPolicy, what string, copy func() (T, error)) (T, error) {
	if p.Attempts <= 0 || p.Attempts > packageAttempts {
		p.Attempts = packageAttempts
	}
	var out T
	err := p.Do(ctx, what, func() error {
		var err error
		out, err = copy()
		return err
	})
	return out, err
}

// RetryPackage is retryPackage for install's package copies.
func RetryPackage(ctx context.Context, p client.RetryPolicy, what string, copy func() error) error {
	_, err := retryPackage(ctx, p, what, func() (struct{}, error) { return struct{}{}, copy() })
	return err
}

// Nodes is the set of digests in a package's graph under its root, as a
// copy saw them: every node copied, mounted or skipped, and, below a
// skipped manifest (whose graph the destination already holds), every node
// read back from the destination. Has answers lock's check that a
// package's images are children of its graph.
type Nodes struct {
	mu sync.Mutex
	m  map[string]bool
}

// NewNodes returns an empty set.
func NewNodes() *Nodes { return &Nodes{m: map[string]bool{}} }

// Has reports whether d is in the set; it is what lock's
// Package.CheckImages asks.
func (n *Nodes) Has(d digest.Digest) bool {
	if n == nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m[d.String()]
}

// Len returns the number of digests in the set.
func (n *Nodes) Len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.m)
}

// Add records desc; it reports whether desc was new.
func (n *Nodes) Add(desc ocispec.Descriptor) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m[desc.Digest.String()] {
		return false
	}
	n.m[desc.Digest.String()] = true
	return true
}

// AddSkipped records desc, skipped because dst holds it, and every node
// below it, read from dst: only manifests are read. check, when set, is
// called for each node recorded.
func (n *Nodes) AddSkipped(ctx context.Context, dst content.Fetcher, desc ocispec.Descriptor, check func(context.Context, ocispec.Descriptor) error) error {
	if !n.Add(desc) {
		return nil
	}
	if check != nil {
		if err := check(ctx, desc); err != nil {
			return err
		}
	}
	succ, err := content.Successors(ctx, dst, desc)
	if err != nil {
		return fmt.Errorf("reading %s back: %w", desc.Digest, err)
	}
	var errs []error
	for _, s := range succ {
		errs = append(errs, n.AddSkipped(ctx, dst, s, check))
	}
	return errors.Join(errs...)
}
