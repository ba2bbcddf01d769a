package pipelinetest

import (
	"context"
	"slices"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// SignAndMirror signs with signer, as `cosign sign` does, the packages of
// l named in sources (every resolved package when none is named) in their
// source repositories, then mirrors l again to mirror under /m, as
// MirroredLock did, so the signatures travel the way ferry mirror copies
// them.
func SignAndMirror(t *testing.T, c *client.Client, l *lock.Lock, mirror *registrytest.Registry, signer *fixture.Cosign, sources ...string) {
	t.Helper()
	ctx := context.Background()
	for _, p := range l.Resolved() {
		if len(sources) > 0 && !slices.Contains(sources, p.Source) {
			continue
		}
		repo, err := c.Repository(p.Source)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := signer.SignImage(ctx, repo, p.Source, digest.Digest(p.Digest)); err != nil {
			t.Fatalf("signing %s: %v", p.Source, err)
		}
	}
	to, err := relocate.ParseMapping(mirror.Host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := relocate.Mirror(ctx, l, relocate.Options{Source: c, To: to, Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
}
