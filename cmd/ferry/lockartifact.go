package main

import (
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
)

// lockArtifactReaders are the commands whose --lock may name a lock
// artifact in a registry (oci://HOST/REPO:TAG or @sha256:…): they read a
// lock. ferry lock writes one, so it pushes with --push-lock instead.
var lockArtifactReaders = []string{"mirror", "verify", "install", "why", "serve"}

// pullLockArtifact runs before a command: when its --lock names a lock
// artifact, the lock (with its signature and mirror sidecar) is pulled
// into a temporary directory, removed when the command ends, and --lock
// points there. What a command records in the lock (ferry mirror's
// mirror: fields) stays in that copy: a shard of a Kubernetes Job reads
// the lock it was given and leaves it as it was.
func (g *globalFlags) pullLockArtifact(c *cobra.Command) error {
	f := c.Flags().Lookup("lock")
	if f == nil || !lock.IsArtifactRef(f.Value.String()) {
		return nil
	}
	if !slices.Contains(lockArtifactReaders, c.Name()) {
		return exitcode.BadInput("--lock %s: ferry %s writes its lock to a file; push it with --push-lock %s", f.Value.String(), c.Name(), f.Value.String())
	}
	ref := strings.TrimPrefix(f.Value.String(), lock.ArtifactScheme)
	cl, err := g.client()
	if err != nil {
		return err
	}
	repo, err := cl.Repository(ref)
	if err != nil {
		return exitcode.BadInput("--lock %s: %w", f.Value.String(), err)
	}
	dir, err := os.MkdirTemp("", "ferry-lock-")
	if err != nil {
		return err
	}
	cobra.OnFinalize(func() { os.RemoveAll(dir) })
	path, d, err := lock.PullArtifact(c.Context(), repo, repo.Reference.ReferenceOrDefault(), dir)
	if err != nil {
		return err
	}
	g.progress("lock %s (%s) read into %s", f.Value.String(), d, path)
	return c.Flags().Set("lock", path)
}

// pushLockArtifact runs after ferry lock succeeds: with --push-lock
// oci://HOST/REPO:TAG, the lock just written, its signature and mirror
// sidecar go to the registry as one artifact.
func (g *globalFlags) pushLockArtifact(c *cobra.Command) error {
	pf := c.Flags().Lookup("push-lock")
	if pf == nil || pf.Value.String() == "" {
		return nil
	}
	target := pf.Value.String()
	if !lock.IsArtifactRef(target) {
		return exitcode.BadInput("--push-lock %s: want oci://HOST/REPO:TAG", target)
	}
	ref := strings.TrimPrefix(target, lock.ArtifactScheme)
	cl, err := g.client()
	if err != nil {
		return err
	}
	repo, err := cl.Repository(ref)
	if err != nil {
		return exitcode.BadInput("--push-lock %s: %w", target, err)
	}
	tag := repo.Reference.Reference
	if tag == "" || strings.Contains(tag, ":") {
		return exitcode.BadInput("--push-lock %s: name a tag (oci://HOST/REPO:TAG)", target)
	}
	d, err := lock.PushArtifact(c.Context(), repo, c.Flags().Lookup("lock").Value.String(), tag)
	if err != nil {
		return err
	}
	g.progress("pushed the lock to %s (%s)", target, d.Digest)
	return nil
}
