package relocate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/internal/lazyregexp"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/manifest"
)

// An incremental archive (--since OLD.lock) leaves out what an earlier
// import of OLD.lock put in the mirror: every blob and manifest reachable
// from OLD.lock's packages (their graphs and the signatures it records),
// and the extension blobs (mixin binaries) whose digest OLD.lock names.
// Its import takes what it lacks from the mirror itself, after checking
// that every node the lock names is in the archive or in the mirror.

// sinceOmit returns the digests of the staged layout to leave out of an
// archive written --since old: the nodes of old's packages' graphs and
// recorded signatures (read from the layout, or from the origin when the
// layout lacks them), and the blobs of extension artifacts in the layout
// whose digests oldData names.
func sinceOmit(ctx context.Context, old *lock.Lock, oldData []byte, store *oci.Store, opts Options) (map[digest.Digest]bool, error) {
	omit := map[digest.Digest]bool{}
	for _, p := range old.Resolved() {
		var src content.Fetcher = store
		walk := func(desc ocispec.Descriptor) error {
			return walkNodes(ctx, desc, func(ctx context.Context, d ocispec.Descriptor) (io.ReadCloser, error) {
				if ok, err := store.Exists(ctx, d); err == nil && ok {
					return store.Fetch(ctx, d)
				}
				if src == content.Fetcher(store) {
					repo, err := opts.openSource(p)
					if err != nil {
						return nil, err
					}
					src = repo
				}
				return src.Fetch(ctx, d)
			}, omit)
		}
		if err := walk(p.Descriptor()); err != nil {
			return nil, fmt.Errorf("incremental archive: reading %s@%s: %w", p.Source, p.Digest, err)
		}
		for _, s := range p.Signatures {
			d, err := digest.Parse(s.Digest)
			if err != nil || s.MediaType == "" {
				continue
			}
			if err := walk(ocispec.Descriptor{MediaType: s.MediaType, Digest: d, Size: s.Size}); err != nil {
				return nil, fmt.Errorf("incremental archive: reading signature %s of %s: %w", d, p.Source, err)
			}
		}
	}
	named := map[digest.Digest]bool{}
	for _, m := range digestRE.FindAllString(string(oldData), -1) {
		named[digest.Digest(m)] = true
	}
	tags, err := client.ListTags(ctx, store)
	if err != nil {
		return nil, err
	}
	for _, name := range tags {
		if hasRegistryHost(name) {
			continue
		}
		desc, err := store.Resolve(ctx, name)
		if err != nil {
			return nil, err
		}
		succ, err := content.Successors(ctx, store, desc)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		for _, s := range succ {
			if named[s.Digest] && !manifest.IsManifest(s.MediaType) {
				omit[s.Digest] = true
			}
		}
	}
	return omit, nil
}

var digestRE = lazyregexp.New(`sha256:[0-9a-f]{64}`)

// walkNodes adds desc and every node below it to into. A node whose
// content cannot be found is added without its children: what is not
// known to be below an old package stays in the archive.
func walkNodes(ctx context.Context, desc ocispec.Descriptor, fetch func(context.Context, ocispec.Descriptor) (io.ReadCloser, error), into map[digest.Digest]bool) error {
	if into[desc.Digest] {
		return nil
	}
	if !manifest.IsManifest(desc.MediaType) {
		into[desc.Digest] = true
		return nil
	}
	rc, err := fetch(ctx, desc)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	raw, err := content.ReadAll(rc, desc)
	rc.Close()
	if err != nil {
		return err
	}
	into[desc.Digest] = true
	children, err := manifest.Children(raw)
	if err != nil {
		return nil // not a manifest after all: nothing below it
	}
	for _, c := range children {
		if err := walkNodes(ctx, c, fetch, into); err != nil {
			return err
		}
	}
	return nil
}

// MissingNode is a node an incremental archive's lock names that is
// neither in the archive nor in the mirror.
type MissingNode struct {
	// Package is the source of the package (or the extension artifact's
	// name) whose graph holds the node; Repo the mirror repository it
	// was looked for in.
	Package string `json:"package"`
	Repo    string `json:"repo"`
	Digest  string `json:"digest"`
	// MediaType and Size are the node's, as its parent names them.
	MediaType string `json:"mediaType,omitempty"`
	Size      int64  `json:"size"`
}

// String names the node in a message.
func (m MissingNode) String() string {
	return fmt.Sprintf("%s: %s (%s, %d bytes), not in %s", m.Package, m.Digest, m.MediaType, m.Size, m.Repo)
}

// located is what checkIncremental found: for each node the archive
// lacks, a mirror repository that holds it.
type located struct {
	mu sync.Mutex
	at map[digest.Digest]string
}

// checkImport checks, before anything is pushed, every node of every
// package of the archive's lock (graph and recorded signatures) and of
// every extension artifact (porter-mixins/NAME:TAG, pushed to
// TO/porter-mixins/NAME) that the copy would push: a node the mirror
// repository already holds is skipped, as the copy skips it and what is
// below it; any other node must be in the archive and hash to its digest.
// An incremental archive's node that is not in the archive may be in the
// mirror repository of another package of the lock (it is then mounted or
// copied from there). It returns where those were found, or an error with
// exit code 3 listing every node changed or found nowhere: nothing is
// pushed from an archive that is changed or incomplete.
func checkImport(ctx context.Context, a *Archive, pkgs []*lock.Package, opts Options) (*located, error) {
	loc := &located{at: map[digest.Digest]string{}}
	var repos []string
	if a.Incremental() {
		for _, p := range pkgs {
			repos = append(repos, opts.To.Repo(p.Source))
		}
		sort.Strings(repos)
		repos = compactStrings(repos)
	}
	c := &importCheck{a: a, opts: opts, repos: repos, loc: loc, exists: map[string]bool{}, done: map[string]bool{}, hashed: map[digest.Digest]bool{}}
	for _, p := range pkgs {
		repo := opts.To.Repo(p.Source)
		if err := c.node(ctx, p.Source, repo, p.Descriptor()); err != nil {
			return nil, err
		}
		for _, s := range p.Signatures {
			d, err := digest.Parse(s.Digest)
			if err != nil || s.MediaType == "" {
				continue
			}
			if err := c.node(ctx, p.Source, repo, ocispec.Descriptor{MediaType: s.MediaType, Digest: d, Size: s.Size}); err != nil {
				return nil, err
			}
		}
	}
	tags, err := client.ListTags(ctx, a.Store)
	if err != nil {
		return nil, err
	}
	for _, name := range tags {
		if hasRegistryHost(name) {
			continue
		}
		desc, err := a.Store.Resolve(ctx, name)
		if err != nil {
			return nil, err
		}
		repoPath, _, _ := strings.Cut(name, ":")
		if err := c.node(ctx, name, opts.To.String()+"/"+repoPath, desc); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	if len(c.changed) > 0 {
		fmt.Fprintf(&b, "%d nodes in the archive do not match their digests: the archive was changed; nothing was pushed", len(c.changed))
		for _, m := range c.changed {
			fmt.Fprintf(&b, "\n  %s: %s (%s, %d bytes)", m.Package, m.Digest, m.MediaType, m.Size)
		}
	}
	if len(c.missing) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		if a.Incremental() {
			fmt.Fprintf(&b, "the archive is incremental (written since the lock %s) and %d nodes the lock names are neither in it nor in the mirror %s: import the earlier archive first, or write a full archive; nothing was pushed", a.Meta.Since, len(c.missing), opts.To)
		} else {
			fmt.Fprintf(&b, "the archive lacks content the lock names (%d nodes, not in the mirror %s either); nothing was pushed", len(c.missing), opts.To)
		}
		for _, m := range c.missing {
			fmt.Fprintf(&b, "\n  %s", m)
		}
	}
	if b.Len() > 0 {
		return nil, errkind.Markf(errkind.Mismatch, "%s", b.String())
	}
	return loc, nil
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// importCheck walks graphs through the mirror and the archive.
type importCheck struct {
	a       *Archive
	opts    Options
	repos   []string
	loc     *located
	exists  map[string]bool
	done    map[string]bool
	hashed  map[digest.Digest]bool
	missing []MissingNode
	changed []MissingNode
}

// node checks desc, which pkg's graph holds and which belongs in repo,
// and, for a manifest it reads, the nodes below it.
func (c *importCheck) node(ctx context.Context, pkg, repo string, desc ocispec.Descriptor) error {
	key := repo + "@" + desc.Digest.String()
	if c.done[key] {
		return nil
	}
	c.done[key] = true
	if ok, err := c.inMirror(ctx, repo, desc); err != nil || ok {
		return err // the copy skips it and what is below it
	}
	node := MissingNode{Package: pkg, Repo: repo, Digest: desc.Digest.String(), MediaType: desc.MediaType, Size: desc.Size}
	var raw []byte
	rc, err := c.a.Store.Fetch(ctx, desc)
	switch {
	case err == nil:
		raw, err = c.hash(desc, rc)
		rc.Close()
		if errors.Is(err, errMismatch) {
			c.changed = append(c.changed, node)
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s@%s from the archive: %w", pkg, desc.Digest, err)
		}
	case !errors.Is(err, errdef.ErrNotFound):
		return fmt.Errorf("reading %s@%s from the archive: %w", pkg, desc.Digest, err)
	default:
		for _, r := range c.repos {
			ok, err := c.inMirror(ctx, r, desc)
			if err != nil {
				return err
			}
			if ok {
				c.loc.at[desc.Digest] = r
				if manifest.IsManifest(desc.MediaType) {
					rr, err := c.opts.Target.Repository(r)
					if err != nil {
						return err
					}
					if raw, err = content.FetchAll(ctx, rr, desc); err != nil {
						return fmt.Errorf("reading %s@%s from %s: %w", pkg, desc.Digest, r, err)
					}
				}
				break
			}
		}
		if c.loc.at[desc.Digest] == "" {
			c.missing = append(c.missing, node)
			return nil
		}
	}
	if raw == nil {
		return nil
	}
	children, err := manifest.Children(raw)
	if err != nil {
		return nil
	}
	for _, ch := range children {
		if err := c.node(ctx, pkg, repo, ch); err != nil {
			return err
		}
	}
	return nil
}

var errMismatch = errors.New("does not match its digest")

// hash reads desc's content from rc, checking its size and digest, and
// returns it when desc is a manifest (blobs are streamed).
func (c *importCheck) hash(desc ocispec.Descriptor, rc io.Reader) ([]byte, error) {
	isManifest := manifest.IsManifest(desc.MediaType)
	if c.hashed[desc.Digest] && !isManifest {
		return nil, nil
	}
	v := desc.Digest.Verifier()
	var buf bytes.Buffer
	w := io.Writer(v)
	if isManifest {
		w = io.MultiWriter(v, &buf)
	}
	r := rc
	if desc.Size > 0 {
		r = io.LimitReader(rc, desc.Size+1)
	}
	n, err := io.Copy(w, r)
	if err != nil {
		return nil, err
	}
	if (desc.Size > 0 && n != desc.Size) || !v.Verified() {
		return nil, errMismatch
	}
	c.hashed[desc.Digest] = true
	if isManifest {
		return buf.Bytes(), nil
	}
	return nil, nil
}

// inMirror reports whether repo of the mirror holds desc.
func (c *importCheck) inMirror(ctx context.Context, repo string, desc ocispec.Descriptor) (bool, error) {
	key := repo + "@" + desc.Digest.String()
	if ok, seen := c.exists[key]; seen {
		return ok, nil
	}
	r, err := c.opts.Target.Repository(repo)
	if err != nil {
		return false, err
	}
	ok, err := r.Exists(ctx, desc)
	if err != nil {
		return false, fmt.Errorf("looking for %s in %s: %w", desc.Digest, repo, err)
	}
	c.exists[key] = ok
	return ok, nil
}

// fallbackOrigin is an incremental archive as an origin: what the archive
// lacks is read from the mirror repository checkIncremental found it in.
type fallbackOrigin struct {
	*oci.ReadOnlyStore
	repos Repositories
	loc   *located
}

// Fetch reads desc from the archive, or from the mirror.
func (o fallbackOrigin) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	rc, err := o.ReadOnlyStore.Fetch(ctx, desc)
	if err == nil || !errors.Is(err, errdef.ErrNotFound) {
		return rc, err
	}
	o.loc.mu.Lock()
	repo := o.loc.at[desc.Digest]
	o.loc.mu.Unlock()
	if repo == "" {
		return nil, err
	}
	r, rerr := o.repos.Repository(repo)
	if rerr != nil {
		return nil, rerr
	}
	return r.Fetch(ctx, desc)
}

// Exists reports whether desc is in the archive or was found in the
// mirror.
func (o fallbackOrigin) Exists(ctx context.Context, desc ocispec.Descriptor) (bool, error) {
	if ok, err := o.ReadOnlyStore.Exists(ctx, desc); ok || err != nil {
		return ok, err
	}
	o.loc.mu.Lock()
	defer o.loc.mu.Unlock()
	return o.loc.at[desc.Digest] != "", nil
}
