package relocate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/errkind"
)

// What a mirror run knows of a mirror repository before it writes to it.
//
// A run lists each mirror repository's tags once, before its first copy
// into it (one request, where a copy would otherwise check its root with
// one). The list answers two things:
//
//   - which tags the repository holds: a tag it lacks is pushed without
//     first asking for it, and a tag it holds is read (GET, its manifest
//     then answered from the client's cache) instead of the root being
//     checked, which tells both whether the root is there and whether the
//     tag already points at it;
//   - whether the repository is fresh: a registry answers 404 NAME_UNKNOWN
//     to the tag list of a repository that holds no tag. Such a repository
//     may still hold blobs and untagged manifests that an earlier copy,
//     cut short, pushed before it reached its tags; the journal (below)
//     remembers those copies. A repository without tags that no journal
//     entry names holds nothing this run needs to check: its copy asks for
//     no node (no blob or manifest HEAD), it uploads or mounts each one.
//     Blobs and manifests this run pushed into it are known from the
//     ledger.
//
// Believing a repository fresh when it is not (another machine or another
// tool pushed untagged content into it) costs uploads of what it already
// held, never a missing blob: every push is by digest, checked by the
// registry.

// repoState is what a run learnt of one mirror repository from its first
// look at it.
type repoState struct {
	once sync.Once
	// tags is the repository's complete tag list at the first look; nil
	// when it could not be listed.
	tags map[string]bool
	// untagged is set when the registry answered NAME_UNKNOWN: the
	// repository held no tag.
	untagged bool
	// fresh is set when the repository is untagged and no journal entry
	// says an earlier copy pushed into it (see above).
	fresh bool
}

// repoState returns what the run knows of the mirror repository name,
// looking at it (dst) the first time it is asked.
func (l *ledger) repoState(ctx context.Context, name string, dst *remote.Repository) *repoState {
	l.mu.Lock()
	st := l.repos[name]
	if st == nil {
		st = &repoState{}
		l.repos[name] = st
	}
	l.mu.Unlock()
	st.once.Do(func() {
		if acquire(ctx, l.mirrorMeta) != nil {
			return
		}
		tags, err := client.ListTags(ctx, dst)
		<-l.mirrorMeta
		switch {
		case err == nil:
			st.tags = make(map[string]bool, len(tags))
			for _, t := range tags {
				st.tags[t] = true
			}
		case nameUnknown(err):
			st.tags, st.untagged = map[string]bool{}, true
			st.fresh = l.journal.begin(name)
		}
	})
	return st
}

// nameUnknown reports whether err is a registry's 404 NAME_UNKNOWN.
func nameUnknown(err error) bool {
	var er *errcode.ErrorResponse
	if !errors.As(err, &er) || er.StatusCode != http.StatusNotFound {
		return false
	}
	for _, e := range er.Errors {
		if e.Code == errcode.ErrorCodeNameUnknown {
			return true
		}
	}
	return false
}

// holds reports whether this run put d into repo, or saw it there.
func (l *ledger) holds(repo string, d digest.Digest) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.have[d][repo]
}

// journal records, on this machine, the mirror repositories that a copy
// began to push into while they held no tag: an entry is written before
// the first push and removed once a tag is in the repository. An entry
// left behind (a run killed or failed) makes the next run check every
// node of that repository as usual, so content the cut-short copy pushed
// is not pushed again. A nil journal (no cache directory) makes no
// repository fresh.
type journal struct {
	dir string
}

// journalSubdir is where the journal is kept in the user's cache
// directory.
const journalSubdir = "ferry/mirror-journal"

// openJournal returns the journal in dir, or in the user's cache
// directory when dir is empty; nil when there is none.
func openJournal(dir string) *journal {
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(cache, filepath.FromSlash(journalSubdir))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil
	}
	return &journal{dir: dir}
}

func (j *journal) path(repo string) string {
	sum := sha256.Sum256([]byte(repo))
	return filepath.Join(j.dir, hex.EncodeToString(sum[:16]))
}

// begin records that a copy is about to push into repo, which holds no
// tag. It reports whether repo is fresh: no earlier entry named it, and
// this one was written.
func (j *journal) begin(repo string) bool {
	if j == nil {
		return false
	}
	p := j.path(repo)
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	return os.WriteFile(p, []byte(repo+"\n"), 0o600) == nil
}

// mark records that a push into repo begins, whatever it holds.
func (j *journal) mark(repo string) {
	if j != nil {
		_ = os.WriteFile(j.path(repo), []byte(repo+"\n"), 0o600)
	}
}

// end forgets repo: it now holds a tag, so the next run lists it and
// checks what it holds.
func (j *journal) end(repo string) {
	if j != nil {
		_ = os.Remove(j.path(repo))
	}
}

// knownTarget is a mirror repository as one copy of a graph writes to it:
// it answers the copy's existence checks from what the run knows (the
// ledger, the repository's first look) before asking, and pushes the
// graph's root by tag, when the copy names one, so the root needs no
// second request to be tagged.
type knownTarget struct {
	oras.Target
	repo *remote.Repository
	name string
	led  *ledger
	st   *repoState
	root ocispec.Descriptor
	tag  string
	// check, when set, must pass before the root is pushed by tag.
	check func() error
	// tagged is set once tag is known to point at root: pushed by it, or
	// read and found there.
	tagged atomic.Bool
	// early, when set, holds the upload sessions opened while the blobs
	// were read from the origin (earlySource); a blob's push uses its own.
	early *earlyUploads
}

// Exists reports whether desc is in the repository, asking within the
// run's metadata slots.
func (t *knownTarget) Exists(ctx context.Context, desc ocispec.Descriptor) (bool, error) {
	// Another copy into this repository (another tag of it) may be
	// pushing the blob now: wait for it, and find it held, rather than
	// push the same bytes again (W6: 6 tags of a repository sharing two
	// layers, copied at once, pushed them up to 6 times).
	if err := t.led.awaitRepo(ctx, t.name, desc.Digest); err != nil {
		return false, err
	}
	if t.led.holds(t.name, desc.Digest) {
		return true, nil
	}
	if t.st.fresh {
		return false, nil
	}
	if err := acquire(ctx, t.led.mirrorMeta); err != nil {
		return false, err
	}
	defer func() { <-t.led.mirrorMeta }()
	if t.tag != "" && desc.Digest == t.root.Digest && t.st.tags != nil {
		if !t.st.tags[t.tag] {
			// The root may be there untagged: ask for it.
			return t.Target.Exists(ctx, desc)
		}
		// GET, not HEAD: the manifest then comes from the client's cache
		// when the copy reads the graph back below a skipped root.
		got, rc, err := t.repo.FetchReference(ctx, t.tag)
		if err == nil {
			_, _ = io.Copy(io.Discard, rc)
			rc.Close()
			if got.Digest == desc.Digest {
				t.tagged.Store(true)
				return true, nil
			}
		}
	}
	return t.Target.Exists(ctx, desc)
}

// Push pushes desc; the root is pushed by tag when the copy names one. A
// manifest is pushed within the run's metadata slots; a blob within the
// blob slot its read from the origin holds.
func (t *knownTarget) Push(ctx context.Context, desc ocispec.Descriptor, r io.Reader) error {
	if isManifest(desc.MediaType) {
		if err := acquire(ctx, t.led.mirrorMeta); err != nil {
			return err
		}
		defer func() { <-t.led.mirrorMeta }()
	}
	if t.early != nil && !isManifest(desc.MediaType) {
		if single, probe := t.early.takeSingle(desc.Digest); single {
			return t.pushSingle(ctx, desc, r, probe)
		}
		up, err := t.early.take(ctx, desc.Digest)
		if up != nil {
			return up.Put(ctx, desc, r)
		}
		if err != nil && ctx.Err() != nil {
			return err
		}
		// No session was opened for it, or opening one failed: the push
		// opens its own.
	}
	if t.tag == "" || desc.Digest != t.root.Digest {
		return t.Target.Push(ctx, desc, r)
	}
	if t.check != nil {
		if err := t.check(); err != nil {
			return err
		}
	}
	if err := t.repo.PushReference(ctx, desc, r, t.tag); err != nil {
		// An immutable tag already naming desc holds desc too.
		return immutableTag(ctx, t.repo, desc, t.tag, err)
	}
	t.tagged.Store(true)
	return nil
}

// pushSingle pushes blob desc in one request (client.PushMonolithic),
// or, when the registry opens a session instead, into that session; probe
// is set when this push is the registry's probe, which it ends.
func (t *knownTarget) pushSingle(ctx context.Context, desc ocispec.Descriptor, r io.Reader, probe bool) error {
	if probe {
		defer client.ReleaseMonolithicProbe(t.repo)
	}
	// Read to the end, so that a digest-checking reader checks it.
	b, err := io.ReadAll(io.LimitReader(r, desc.Size+1))
	if err != nil {
		return err
	}
	if int64(len(b)) != desc.Size {
		return fmt.Errorf("blob %s: read %d bytes from the origin, want %d", desc.Digest, len(b), desc.Size)
	}
	up, err := client.PushMonolithic(ctx, t.repo, desc, b)
	if err != nil || up == nil {
		return err
	}
	return up.Put(ctx, desc, bytes.NewReader(b))
}

// Mount mounts desc from another repository of the registry.
func (t *knownTarget) Mount(ctx context.Context, desc ocispec.Descriptor, from string, getContent func() (io.ReadCloser, error)) error {
	// Another copy into this repository (another tag of it) may have
	// mounted or pushed desc while this one asked whether it was there,
	// or be mounting it now: the registry then holds it here, and this
	// copy sends no mount of its own (W6: 6 tags of a repository, copied
	// at once, mounted the shared layers up to 6 times each).
	done, held, err := t.led.startMount(ctx, t.name, desc.Digest)
	if err != nil {
		return err
	}
	if held {
		return nil
	}
	defer done()
	if t.early != nil {
		t.early.mount(desc.Digest)
	}
	if err := t.repo.Mount(ctx, desc, from, getContent); err != nil {
		return err
	}
	// Recorded before done: a mount waiting on this one then finds it.
	t.led.record(t.name, desc.Digest)
	return nil
}

// tagKnown points tag at desc in the repository, asking first what it
// points at only when the run does not know the tag to be absent.
func tagKnown(ctx context.Context, dst *remote.Repository, st *repoState, desc ocispec.Descriptor, tag string) error {
	if st != nil && st.tags != nil && !st.tags[tag] {
		return immutableTag(ctx, dst, desc, tag, dst.Tag(ctx, desc, tag))
	}
	return ensureTag(ctx, dst, desc, tag)
}

// immutableTag explains err, the answer to pointing tag at desc, when the
// registry refused to move an existing tag (client.IsTagRefused: Harbor's
// and ECR's immutable tags): a tag that already points at desc is what
// the copy wanted (nil, as if skipped); one that points elsewhere is the
// mirror disagreeing with the lock, naming both digests.
func immutableTag(ctx context.Context, dst oras.Target, desc ocispec.Descriptor, tag string, err error) error {
	if err == nil || !client.IsTagRefused(err) {
		return err
	}
	cur, rerr := dst.Resolve(ctx, tag)
	if rerr != nil {
		return err
	}
	if cur.Digest == desc.Digest {
		return nil
	}
	name := tag
	if r, ok := dst.(*remote.Repository); ok {
		name = r.Reference.Registry + "/" + r.Reference.Repository + ":" + tag
	}
	return errkind.Markf(errkind.Mismatch, "tag %s is immutable at the mirror and points at %s, not at %s, the digest being mirrored; "+
		"the registry refuses to move it (%w): delete the tag there or mirror to another repository", name, cur.Digest, desc.Digest, err)
}
